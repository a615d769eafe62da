//! Media the gateway holds: inbound media it downloaded from the network,
//! and uploads a client sent to reference in later sends. A
//! [`MediaRecord`] describes one (its bytes live in the media store); a
//! [`MediaObject`] is how the API and the `message` event show it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a media is, as the network distinguishes it (the download keys
/// differ by kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// A photo.
    Image,
    /// A video (a GIF is a video the app loops).
    Video,
    /// An audio file or a voice note.
    Audio,
    /// A file sent as a document.
    Document,
    /// A sticker.
    Sticker,
}

impl MediaKind {
    /// The kind of a message type, if it carries media.
    pub fn of_message_type(message_type: &str) -> Option<Self> {
        Some(match message_type {
            "image" => Self::Image,
            "video" => Self::Video,
            "audio" => Self::Audio,
            "document" => Self::Document,
            "sticker" => Self::Sticker,
            _ => return None,
        })
    }

    /// Its name, as in message types.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Video => "video",
            Self::Audio => "audio",
            Self::Document => "document",
            Self::Sticker => "sticker",
        }
    }
}

/// Whether a media's bytes can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MediaState {
    /// In the media store: the media route serves it.
    Stored,
    /// Not downloaded yet (lazy mode): the first read downloads it.
    Pending,
    /// The last download failed; `error` says why. The retry route, or a
    /// read, tries again.
    Failed,
}

/// Where a media came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum MediaOrigin {
    /// Part of an inbound message.
    Inbound {
        /// The message's id.
        message_id: String,
        /// The message's chat.
        chat: String,
    },
    /// Uploaded through the API, for sends to reference.
    Upload,
}

/// What the network tells about a media in a message: its description, and
/// the handle its backend downloads it with (opaque to everything else,
/// stored so a later download needs nothing the message alone had).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NetworkMedia {
    /// The MIME type the sender declared.
    pub mimetype: Option<String>,
    /// The size the sender declared, in bytes.
    pub file_length: Option<u64>,
    /// The SHA-256 of the plain bytes the sender declared, lowercase hex.
    pub sha256: Option<String>,
    /// A document's file name.
    pub filename: Option<String>,
    /// Whether an audio is a voice note.
    pub ptt: Option<bool>,
    /// Width in pixels (images, videos, stickers).
    pub width: Option<u32>,
    /// Height in pixels.
    pub height: Option<u32>,
    /// Duration in seconds (audio, video).
    pub seconds: Option<u32>,
    /// Whether the recipient may open it only once.
    #[serde(default)]
    pub view_once: bool,
    /// What the backend downloads it with.
    pub handle: Value,
}

/// One media the gateway holds (or failed to download).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaRecord {
    /// Its id, unique within the session.
    pub id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// Where it came from.
    #[serde(flatten)]
    pub origin: MediaOrigin,
    /// Its kind, for inbound media.
    pub kind: Option<MediaKind>,
    /// Its MIME type.
    pub mimetype: String,
    /// Its size in bytes: stored bytes once stored, else what the network declared.
    pub file_length: Option<u64>,
    /// SHA-256 of its bytes, lowercase hex: of the stored bytes once stored.
    pub sha256: Option<String>,
    /// A document's file name.
    pub filename: Option<String>,
    /// Whether an audio is a voice note.
    pub ptt: Option<bool>,
    /// Width in pixels.
    pub width: Option<u32>,
    /// Height in pixels.
    pub height: Option<u32>,
    /// Duration in seconds.
    pub seconds: Option<u32>,
    /// Whether the recipient may open it only once.
    #[serde(default)]
    pub view_once: bool,
    /// Whether its bytes can be read.
    pub state: MediaState,
    /// Why the last download failed.
    pub error: Option<String>,
    /// Downloads tried.
    #[serde(default)]
    pub attempts: u32,
    /// Unix seconds it was created (the message arrived, the upload began).
    pub created_at: i64,
    /// Unix seconds its bytes were stored.
    pub stored_at: Option<i64>,
    /// The network's download handle, for inbound media.
    pub handle: Option<Value>,
}

impl MediaRecord {
    /// A record for inbound media described by `media`, not yet downloaded.
    pub fn inbound(
        session_id: &str,
        message_id: &str,
        chat: &str,
        kind: MediaKind,
        media: &NetworkMedia,
        now: i64,
    ) -> Self {
        Self {
            id: inbound_media_id(session_id, chat, message_id),
            session_id: session_id.to_owned(),
            origin: MediaOrigin::Inbound {
                message_id: message_id.to_owned(),
                chat: chat.to_owned(),
            },
            kind: Some(kind),
            mimetype: media
                .mimetype
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| default_mimetype(kind).to_owned()),
            file_length: media.file_length,
            sha256: media.sha256.clone(),
            filename: media.filename.clone(),
            ptt: media.ptt,
            width: media.width,
            height: media.height,
            seconds: media.seconds,
            view_once: media.view_once,
            state: MediaState::Pending,
            error: None,
            attempts: 0,
            created_at: now,
            stored_at: None,
            handle: (!media.handle.is_null()).then(|| media.handle.clone()),
        }
    }

    /// How the API and the `message` event show it; `base` is prefixed to
    /// the media route's path (the gateway's public URL, or empty).
    pub fn object(&self, base: &str) -> MediaObject {
        MediaObject {
            id: self.id.clone(),
            mimetype: self.mimetype.clone(),
            file_length: self.file_length,
            sha256: self.sha256.clone(),
            filename: self.filename.clone(),
            ptt: self.ptt,
            width: self.width,
            height: self.height,
            seconds: self.seconds,
            view_once: self.view_once.then_some(true),
            url: format!("{base}{}", media_path(&self.session_id, &self.id)),
            state: self.state,
            error: self.error.clone(),
        }
    }
}

/// A media as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MediaObject {
    /// The media id (what a send's `media_id` takes, and the media route's last segment).
    pub id: String,
    /// The MIME type.
    pub mimetype: String,
    /// Size in bytes.
    pub file_length: Option<u64>,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: Option<String>,
    /// A document's file name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub filename: Option<String>,
    /// Whether an audio is a voice note.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ptt: Option<bool>,
    /// Width in pixels.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub width: Option<u32>,
    /// Height in pixels.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub height: Option<u32>,
    /// Duration in seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seconds: Option<u32>,
    /// Present (true) when the recipient may open it only once.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub view_once: Option<bool>,
    /// The gateway's own route for its bytes (bearer auth).
    pub url: String,
    /// `stored`, `pending` (lazy mode: the first read downloads it) or `failed`.
    pub state: MediaState,
    /// Why the last download failed (`failed` only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// The media route of a media.
pub fn media_path(session_id: &str, media_id: &str) -> String {
    format!("/api/v1/sessions/{session_id}/media/{media_id}")
}

/// The id of an inbound message's media: the same message always gets the
/// same id, so a message the network delivers again (after a crash) finds
/// the media it had.
pub fn inbound_media_id(session_id: &str, chat: &str, message_id: &str) -> String {
    let digest = Sha256::digest(format!("{session_id}\n{chat}\n{message_id}").as_bytes());
    format!("in-{}", hex::encode(&digest[..12]))
}

/// The MIME type of a kind when the sender gave none.
pub fn default_mimetype(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => "image/jpeg",
        MediaKind::Video => "video/mp4",
        MediaKind::Audio => "audio/ogg",
        MediaKind::Document => "application/octet-stream",
        MediaKind::Sticker => "image/webp",
    }
}

/// Checks a media id from a path or a send body: 1 to 64 characters of
/// `A-Z a-z 0-9 _ -`.
pub fn validate_media_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() || id.len() > 64 {
        return Err("a media id is 1 to 64 characters");
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err("a media id holds only A-Z, a-z, 0-9, _ and -");
    }
    Ok(())
}
