//! Bodies of the media send kinds: image, video, audio and document.
//!
//! Every media body takes its bytes from exactly one of `url` (an absolute
//! http/https URL, fetched later by another layer) or `data` (standard
//! base64, RFC 4648 alphabet with padding; ASCII whitespace such as line
//! breaks is ignored). Decoded data must be 1 byte to the kind's cap:
//! image 16 MiB, video 64 MiB, audio 16 MiB, document 100 MiB.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::IgnoredAny;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::send::{FieldError, SendKind};
use super::send_check::{decode, http_url, optional_text};

const MIB: usize = 1024 * 1024;
/// Largest decoded `data` of an image.
pub const MAX_IMAGE_BYTES: usize = 16 * MIB;
/// Largest decoded `data` of a video.
pub const MAX_VIDEO_BYTES: usize = 64 * MIB;
/// Largest decoded `data` of an audio.
pub const MAX_AUDIO_BYTES: usize = 16 * MIB;
/// Largest decoded `data` of a document.
pub const MAX_DOCUMENT_BYTES: usize = 100 * MIB;
/// Longest `caption`, in characters.
pub const MAX_CAPTION_CHARS: usize = 4096;
/// Longest document `filename`, in characters.
pub const MAX_FILENAME_CHARS: usize = 255;
/// Longest `mimetype`, in characters.
pub const MAX_MIMETYPE_CHARS: usize = 255;

/// Where a media's bytes come from.
///
/// Serializes as `{"url": "…"}` or `{"bytes": <decoded length>}`: the bytes
/// themselves are never serialized (records must not hold big blobs), and
/// `Debug` prints only their length.
#[derive(Clone, PartialEq, Eq)]
pub enum MediaSource {
    /// An absolute http or https URL (trimmed, at most 2048 characters).
    Url(String),
    /// The decoded bytes of `data`.
    Data(Vec<u8>),
}

impl fmt::Debug for MediaSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MediaSource::Url(url) => f.debug_tuple("Url").field(url).finish(),
            MediaSource::Data(bytes) => write!(f, "Data(<{} bytes>)", bytes.len()),
        }
    }
}

impl Serialize for MediaSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self {
            MediaSource::Url(url) => map.serialize_entry("url", url)?,
            MediaSource::Data(bytes) => map.serialize_entry("bytes", &bytes.len())?,
        }
        map.end()
    }
}

/// An image or a video.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MediaBody {
    /// The media's bytes (serialized flattened: `url` or `bytes`).
    #[serde(flatten)]
    pub source: MediaSource,
    /// `type/subtype[; params]` of type `image/…` or `video/…` as fits the kind;
    /// default `image/jpeg` or `video/mp4`.
    pub mimetype: String,
    /// Caption (at most 4096 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// Whether the recipient may open it only once; default false.
    pub view_once: bool,
}

/// An audio file or a voice note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AudioBody {
    /// The audio's bytes (serialized flattened: `url` or `bytes`).
    #[serde(flatten)]
    pub source: MediaSource,
    /// `audio/…` type; default `audio/ogg; codecs=opus` for voice notes,
    /// `audio/mpeg` otherwise.
    pub mimetype: String,
    /// Whether to send as a voice note ("push to talk"); default false.
    pub ptt: bool,
}

/// A file sent as a document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocumentBody {
    /// The file's bytes (serialized flattened: `url` or `bytes`).
    #[serde(flatten)]
    pub source: MediaSource,
    /// Any `type/subtype[; params]`; default `application/octet-stream`.
    pub mimetype: String,
    /// File name shown to the recipient, trimmed: required, at most 255
    /// characters, no `/`, `\`, control characters (NUL included), not `.` or `..`.
    pub filename: String,
    /// Caption (at most 4096 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VisualWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    url: Option<String>,
    data: Option<String>,
    mimetype: Option<String>,
    caption: Option<String>,
    view_once: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AudioWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    url: Option<String>,
    data: Option<String>,
    mimetype: Option<String>,
    ptt: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    url: Option<String>,
    data: Option<String>,
    mimetype: Option<String>,
    filename: String,
    caption: Option<String>,
}

/// Validates an `image` body.
pub(super) fn image(body: Value) -> Result<MediaBody, FieldError> {
    visual(
        body,
        SendKind::Image,
        "image",
        "image/jpeg",
        MAX_IMAGE_BYTES,
    )
}

/// Validates a `video` body.
pub(super) fn video(body: Value) -> Result<MediaBody, FieldError> {
    visual(body, SendKind::Video, "video", "video/mp4", MAX_VIDEO_BYTES)
}

fn visual(
    body: Value,
    kind: SendKind,
    top: &str,
    default: &str,
    cap: usize,
) -> Result<MediaBody, FieldError> {
    let wire: VisualWire = decode(body)?;
    Ok(MediaBody {
        source: source(wire.url, wire.data, kind, cap)?,
        mimetype: mimetype(wire.mimetype, Some(top), default)?,
        caption: optional_text("caption", wire.caption, MAX_CAPTION_CHARS)?,
        view_once: wire.view_once.unwrap_or(false),
    })
}

/// Validates an `audio` body.
pub(super) fn audio(body: Value) -> Result<AudioBody, FieldError> {
    let wire: AudioWire = decode(body)?;
    let ptt = wire.ptt.unwrap_or(false);
    let default = if ptt {
        "audio/ogg; codecs=opus"
    } else {
        "audio/mpeg"
    };
    Ok(AudioBody {
        source: source(wire.url, wire.data, SendKind::Audio, MAX_AUDIO_BYTES)?,
        mimetype: mimetype(wire.mimetype, Some("audio"), default)?,
        ptt,
    })
}

/// Validates a `document` body.
pub(super) fn document(body: Value) -> Result<DocumentBody, FieldError> {
    let wire: DocumentWire = decode(body)?;
    let source = source(wire.url, wire.data, SendKind::Document, MAX_DOCUMENT_BYTES)?;
    let filename = wire.filename.trim();
    let problem = if filename.is_empty() {
        Some("must not be empty".to_owned())
    } else if filename.chars().count() > MAX_FILENAME_CHARS {
        Some(format!("must be at most {MAX_FILENAME_CHARS} characters"))
    } else if filename.contains(['/', '\\']) || filename.chars().any(char::is_control) {
        Some("must be a bare file name without `/`, `\\` or control characters".to_owned())
    } else if filename == "." || filename == ".." {
        Some("must be a file name, not `.` or `..`".to_owned())
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(FieldError::new("filename", problem));
    }
    Ok(DocumentBody {
        source,
        mimetype: mimetype(wire.mimetype, None, "application/octet-stream")?,
        filename: filename.to_owned(),
        caption: optional_text("caption", wire.caption, MAX_CAPTION_CHARS)?,
    })
}

fn source(
    url: Option<String>,
    data: Option<String>,
    kind: SendKind,
    cap: usize,
) -> Result<MediaSource, FieldError> {
    match (url, data) {
        (Some(_), Some(_)) => Err(FieldError::new(
            "data",
            "cannot be given together with `url`; give exactly one of them",
        )),
        (None, None) => Err(FieldError::new("url", "or `data` is required")),
        (Some(url), None) => Ok(MediaSource::Url(http_url("url", &url)?)),
        (None, Some(data)) => decode_base64(&data, kind, cap).map(MediaSource::Data),
    }
}

fn decode_base64(data: &str, kind: SendKind, cap: usize) -> Result<Vec<u8>, FieldError> {
    let err = |message: String| FieldError::new("data", message);
    let too_big = || {
        err(format!(
            "decodes to more than {} MiB, the limit for {kind}",
            cap / MIB
        ))
    };
    let data: Cow<'_, str> = if data.bytes().any(|b| b.is_ascii_whitespace()) {
        Cow::Owned(data.chars().filter(|c| !c.is_ascii_whitespace()).collect())
    } else {
        Cow::Borrowed(data)
    };
    if data.is_empty() {
        return Err(err("must not be empty".to_owned()));
    }
    // Reject oversized input before allocating: 4 characters carry at most 3 bytes.
    if data.len() / 4 * 3 > cap.saturating_add(2) {
        return Err(too_big());
    }
    let bytes = STANDARD
        .decode(data.as_bytes())
        .map_err(|e| err(format!("is not valid standard base64: {e}")))?;
    if bytes.is_empty() {
        return Err(err("must not decode to zero bytes".to_owned()));
    }
    if bytes.len() > cap {
        return Err(too_big());
    }
    Ok(bytes)
}

/// A MIME type `type/subtype` with optional `; parameters`, trimmed. When
/// `top` is given, the type must be it (`image`), ignoring ASCII case.
fn mimetype(value: Option<String>, top: Option<&str>, default: &str) -> Result<String, FieldError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(default.to_owned());
    };
    let value = value.trim();
    let (essence, params) = value.split_once(';').unwrap_or((value, ""));
    let token = |s: &str| {
        (1..=127).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let well_formed = value.len() <= MAX_MIMETYPE_CHARS
        && matches!(essence.trim_end().split_once('/'), Some((t, s)) if token(t) && token(s))
        && params.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
    if !well_formed {
        return Err(FieldError::new(
            "mimetype",
            "must be a MIME type like `type/subtype` or `type/subtype; param=value`",
        ));
    }
    if let Some(top) = top {
        let matches_top = essence
            .split_once('/')
            .is_some_and(|(t, _)| t.eq_ignore_ascii_case(top));
        if !matches_top {
            return Err(FieldError::new(
                "mimetype",
                format!("must be an `{top}/…` type"),
            ));
        }
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::send::{OutboundContent, SendKind, SendRequest};
    use super::*;

    fn send(kind: SendKind, body: serde_json::Value) -> Result<OutboundContent, FieldError> {
        SendRequest::from_json(kind, body).map(|r| r.content)
    }
}
