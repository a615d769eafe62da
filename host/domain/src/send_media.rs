//! Bodies of the media send kinds: image, video, audio and document.
//!
//! Every media body takes its bytes from exactly one of `url` (an absolute
//! http/https URL, fetched later by another layer), `data` (standard
//! base64, RFC 4648 alphabet with padding; ASCII whitespace such as line
//! breaks is ignored) or `media_id` (a media the gateway holds: an upload,
//! or inbound media; the send path checks that it exists). Decoded data must be 1 byte to the kind's cap:
//! image 16 MiB, video 64 MiB, audio 16 MiB, document 100 MiB.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::IgnoredAny;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::send_check::FieldError;
use super::send_check::{decode, http_url, mimetype, optional_text};
use super::send_kind::SendKind;

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

/// Where a media's bytes come from.
///
/// Serializes as `{"url": "…"}` or `{"data": {"bytes": <decoded length>}}`
/// (flattened into the media bodies): the bytes themselves are never
/// serialized, so records never hold big blobs; `Debug` prints only their length.
#[derive(Clone, PartialEq, Eq)]
pub enum MediaSource {
    /// An absolute http or https URL (trimmed, at most 2048 characters).
    Url(String),
    /// The decoded bytes of `data`.
    Data(Vec<u8>),
    /// A media the gateway holds (an upload, or inbound media), by its id
    /// (`media_id`): the bytes are read from the media store when sent.
    Stored(String),
}

impl fmt::Debug for MediaSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MediaSource::Url(url) => f.debug_tuple("Url").field(url).finish(),
            MediaSource::Data(bytes) => write!(f, "Data(<{} bytes>)", bytes.len()),
            MediaSource::Stored(id) => f.debug_tuple("Stored").field(id).finish(),
        }
    }
}

impl Serialize for MediaSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self {
            MediaSource::Url(url) => map.serialize_entry("url", url)?,
            MediaSource::Data(bytes) => {
                map.serialize_entry("data", &DataSummary { bytes: bytes.len() })?
            }
            MediaSource::Stored(id) => map.serialize_entry("media_id", id)?,
        }
        map.end()
    }
}

/// What a serialized [`MediaSource::Data`] holds instead of the bytes.
#[derive(Serialize)]
struct DataSummary {
    bytes: usize,
}

/// An image or a video.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MediaBody {
    /// The media's bytes (serialized flattened: `url`, or `data: {"bytes": n}`).
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
    /// The audio's bytes (serialized flattened: `url`, or `data: {"bytes": n}`).
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
    /// The file's bytes (serialized flattened: `url`, or `data: {"bytes": n}`).
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

/// The body of an `image` or `video` send: exactly one of `url`, `data` and `media_id`.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendImageOrVideo))]
pub struct VisualWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Where to fetch the bytes: an absolute http/https URL (exactly one of
    /// `url`, `data` and `media_id`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2048,
            pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s\x00-\x1f\x7f-\x9f/?#@:\[\]]+(?::[0-9]{1,5})?(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
        )
    )]
    url: Option<String>,
    /// The bytes as standard base64 with padding, decoding to 1 byte to the
    /// kind's cap (exactly one of `url`, `data` and `media_id`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 4,
            pattern = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$"
        )
    )]
    data: Option<String>,
    /// A media the gateway holds (an upload's id, or inbound media's):
    /// exactly one of `url`, `data` and `media_id`.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 64, pattern = r"^[A-Za-z0-9_-]+$")
    )]
    media_id: Option<String>,
    /// `image/…` for an image, `video/…` for a video, with optional
    /// `; parameters`; default `image/jpeg` or `video/mp4`.
    mimetype: Option<String>,
    /// Caption (at most 4096 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 4096))]
    caption: Option<String>,
    /// Whether the recipient may open it only once; default false.
    view_once: Option<bool>,
}

/// The body of an `audio` send (`ptt`: a voice note): exactly one of `url`, `data` and `media_id`.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendAudio))]
pub struct AudioWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Where to fetch the bytes: an absolute http/https URL (exactly one of
    /// `url`, `data` and `media_id`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2048,
            pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s\x00-\x1f\x7f-\x9f/?#@:\[\]]+(?::[0-9]{1,5})?(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
        )
    )]
    url: Option<String>,
    /// The bytes as standard base64 with padding, decoding to 1 byte to
    /// 16 MiB (exactly one of `url`, `data` and `media_id`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 4,
            pattern = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$"
        )
    )]
    data: Option<String>,
    /// A media the gateway holds (an upload's id, or inbound media's):
    /// exactly one of `url`, `data` and `media_id`.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 64, pattern = r"^[A-Za-z0-9_-]+$")
    )]
    media_id: Option<String>,
    /// An `audio/…` type with optional `; parameters`; default
    /// `audio/ogg; codecs=opus` for voice notes, `audio/mpeg` otherwise.
    mimetype: Option<String>,
    /// Whether to send as a voice note ("push to talk"); default false.
    ptt: Option<bool>,
}

/// The body of a `document` send: exactly one of `url`, `data` and `media_id`.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendDocument))]
pub struct DocumentWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Where to fetch the bytes: an absolute http/https URL (exactly one of
    /// `url`, `data` and `media_id`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2048,
            pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s\x00-\x1f\x7f-\x9f/?#@:\[\]]+(?::[0-9]{1,5})?(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
        )
    )]
    url: Option<String>,
    /// The bytes as standard base64 with padding, decoding to 1 byte to
    /// 100 MiB (exactly one of `url`, `data` and `media_id`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 4,
            pattern = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$"
        )
    )]
    data: Option<String>,
    /// A media the gateway holds (an upload's id, or inbound media's):
    /// exactly one of `url`, `data` and `media_id`.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 64, pattern = r"^[A-Za-z0-9_-]+$")
    )]
    media_id: Option<String>,
    /// Any `type/subtype` with optional `; parameters`; default
    /// `application/octet-stream`.
    mimetype: Option<String>,
    /// File name shown to the recipient: not blank, at most 255 characters,
    /// no `/`, `\` or control characters, not `.` or `..`.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 255,
            pattern = r"^(?![\s\x85]*\.\.?[\s\x85]*$)[^/\\\x00-\x1f\x7f-\x9f]*[^/\\\s\x00-\x1f\x7f-\x9f][^/\\\x00-\x1f\x7f-\x9f]*$"
        )
    )]
    filename: String,
    /// Caption (at most 4096 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 4096))]
    caption: Option<String>,
}

/// The schema of the body of a media `kind` (`image`, `video`, `audio` or
/// `document`): its wire body with that kind's `mimetype` type and `data`
/// size cap.
#[cfg(feature = "openapi")]
pub fn media_schema(kind: SendKind) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::PartialSchema;
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::Schema;

    use super::send_check::schema::{base64_chars, mimetype_of};

    let (mut schema, top, cap) = match kind {
        SendKind::Image => (VisualWire::schema(), Some("image"), MAX_IMAGE_BYTES),
        SendKind::Video => (VisualWire::schema(), Some("video"), MAX_VIDEO_BYTES),
        SendKind::Audio => (AudioWire::schema(), Some("audio"), MAX_AUDIO_BYTES),
        _ => (DocumentWire::schema(), None, MAX_DOCUMENT_BYTES),
    };
    let RefOr::T(Schema::Object(body)) = &mut schema else {
        return schema;
    };
    if let (SendKind::Image | SendKind::Video, Some(top)) = (kind, top) {
        body.description = Some(format!(
            "The body of an `{top}` send: exactly one of `url`, `data` and `media_id`."
        ));
        if let Some(RefOr::T(Schema::Object(field))) = body.properties.get_mut("mimetype") {
            let default = if top == "image" {
                "image/jpeg"
            } else {
                "video/mp4"
            };
            field.description = Some(format!(
                "An `{top}/…` type with optional `; parameters`; default `{default}`."
            ));
        }
    }
    if let Some(RefOr::T(Schema::Object(field))) = body.properties.get_mut("mimetype") {
        field.max_length = Some(255);
        field.pattern = Some(mimetype_of(top));
    }
    if let Some(RefOr::T(Schema::Object(field))) = body.properties.get_mut("data") {
        field.max_length = Some(base64_chars(cap));
        field.description = Some(format!(
            "The bytes as standard base64 with padding, decoding to 1 byte to {} MiB \
             (exactly one of `url`, `data` and `media_id`).",
            cap / MIB
        ));
    }
    schema
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
        source: source(wire.url, wire.data, wire.media_id, kind, cap)?,
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
        source: source(
            wire.url,
            wire.data,
            wire.media_id,
            SendKind::Audio,
            MAX_AUDIO_BYTES,
        )?,
        mimetype: mimetype(wire.mimetype, Some("audio"), default)?,
        ptt,
    })
}

/// Validates a `document` body.
pub(super) fn document(body: Value) -> Result<DocumentBody, FieldError> {
    let wire: DocumentWire = decode(body)?;
    let source = source(
        wire.url,
        wire.data,
        wire.media_id,
        SendKind::Document,
        MAX_DOCUMENT_BYTES,
    )?;
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
    media_id: Option<String>,
    kind: SendKind,
    cap: usize,
) -> Result<MediaSource, FieldError> {
    match (url, data, media_id) {
        (Some(_), Some(_), _) => Err(FieldError::new(
            "data",
            "cannot be given together with `url`; give exactly one of `url`, `data` and `media_id`",
        )),
        (Some(_), None, Some(_)) | (None, Some(_), Some(_)) => Err(FieldError::new(
            "media_id",
            "cannot be given together with `url` or `data`; give exactly one of them",
        )),
        (None, None, None) => Err(FieldError::new(
            "url",
            "is required unless `data` or `media_id` is given",
        )),
        (Some(url), None, None) => Ok(MediaSource::Url(http_url("url", &url)?)),
        (None, Some(data), None) => decode_base64(&data, kind, cap).map(MediaSource::Data),
        (None, None, Some(id)) => match crate::media::validate_media_id(id.trim()) {
            Ok(()) => Ok(MediaSource::Stored(id.trim().to_owned())),
            Err(problem) => Err(FieldError::new("media_id", problem)),
        },
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::send::{OutboundContent, SendRequest};
    use super::*;

    fn send(kind: SendKind, body: Value) -> Result<OutboundContent, FieldError> {
        SendRequest::from_json(kind, body).map(|r| r.content)
    }

    fn field(kind: SendKind, body: Value) -> String {
        send(kind, body).unwrap_err().field
    }

    #[test]
    fn image_from_url_parses_with_default_mimetype() {
        let body = json!({"to": "12345", "url": "https://x.y/a.jpg", "caption": "Look", "view_once": true});
        let Ok(OutboundContent::Image(m)) = send(SendKind::Image, body) else {
            panic!()
        };
        assert_eq!(m.source, MediaSource::Url("https://x.y/a.jpg".into()));
        assert_eq!((m.mimetype.as_str(), m.view_once), ("image/jpeg", true));
        assert_eq!(OutboundContent::Image(m).preview(), Some("Look"));
    }

    #[test]
    fn video_from_data_decodes_and_serializes_only_its_length() {
        let body = json!({"to": "12345", "data": "aGVs\nbG8=", "mimetype": "video/webm"});
        let Ok(content) = send(SendKind::Video, body) else {
            panic!()
        };
        let OutboundContent::Video(m) = &content else {
            panic!()
        };
        assert_eq!(m.source, MediaSource::Data(b"hello".to_vec()));
        assert_eq!(format!("{:?}", m.source), "Data(<5 bytes>)");
        assert_eq!(
            serde_json::to_value(&content).unwrap(),
            json!({"data": {"bytes": 5}, "mimetype": "video/webm", "view_once": false})
        );
    }

    #[test]
    fn media_needs_exactly_one_valid_source() {
        let both = json!({"to": "12345", "url": "https://x.y/a", "data": "aGk="});
        assert_eq!(field(SendKind::Image, both), "data");
        assert_eq!(field(SendKind::Image, json!({"to": "12345"})), "url");
        assert_eq!(
            field(
                SendKind::Video,
                json!({"to": "12345", "data": "not base64!"})
            ),
            "data"
        );
        assert_eq!(
            field(SendKind::Video, json!({"to": "12345", "data": ""})),
            "data"
        );
        assert_eq!(
            field(
                SendKind::Audio,
                json!({"to": "12345", "url": "ftp://x.y/a"})
            ),
            "url"
        );
    }

    #[test]
    fn data_over_the_cap_is_rejected_before_and_after_decoding() {
        assert_eq!(
            decode_base64("aGVsbG8=", SendKind::Image, 5).unwrap(),
            b"hello"
        );
        assert_eq!(
            decode_base64("aGVsbG8h", SendKind::Image, 5)
                .unwrap_err()
                .field,
            "data"
        );
        let err = decode_base64(&"AAAA".repeat(100), SendKind::Image, 5).unwrap_err();
        assert!(err.message.contains("image"), "{err}");
    }

    #[test]
    fn mimetype_must_be_well_formed_and_fit_the_kind() {
        let body = |m: &str| json!({"to": "12345", "url": "https://x.y/a", "mimetype": m});
        assert_eq!(field(SendKind::Image, body("video/mp4")), "mimetype");
        assert_eq!(field(SendKind::Image, body("jpeg")), "mimetype");
        assert_eq!(field(SendKind::Video, body("video/")), "mimetype");
        let doc =
            json!({"to": "12345", "url": "https://x.y/a", "mimetype": "a/b/c", "filename": "f"});
        assert_eq!(field(SendKind::Document, doc), "mimetype");
        assert!(send(SendKind::Audio, body("Audio/OGG; codecs=opus")).is_ok());
    }

    #[test]
    fn audio_defaults_its_mimetype_by_ptt_and_has_no_caption() {
        let body = json!({"to": "12345", "url": "https://x.y/a", "ptt": true});
        let Ok(OutboundContent::Audio(a)) = send(SendKind::Audio, body) else {
            panic!()
        };
        assert_eq!(
            (a.mimetype.as_str(), a.ptt),
            ("audio/ogg; codecs=opus", true)
        );
        let body = json!({"to": "12345", "url": "https://x.y/a"});
        let Ok(OutboundContent::Audio(a)) = send(SendKind::Audio, body) else {
            panic!()
        };
        assert_eq!(a.mimetype, "audio/mpeg");
        let body = json!({"to": "12345", "url": "https://x.y/a", "caption": "x"});
        assert_eq!(field(SendKind::Audio, body), "caption");
    }

    #[test]
    fn document_needs_a_safe_filename() {
        let body =
            json!({"to": "12345", "data": "aGk=", "filename": " report.pdf ", "caption": ""});
        let Ok(OutboundContent::Document(d)) = send(SendKind::Document, body) else {
            panic!()
        };
        assert_eq!(
            (d.filename.as_str(), d.caption, d.mimetype.as_str()),
            ("report.pdf", None, "application/octet-stream")
        );
        assert_eq!(
            field(SendKind::Document, json!({"to": "12345", "data": "aGk="})),
            "filename"
        );
        for name in ["a/b", "..", "a\u{0}b", " ", &"x".repeat(256)] {
            let body = json!({"to": "12345", "data": "aGk=", "filename": name});
            assert_eq!(field(SendKind::Document, body), "filename", "{name:?}");
        }
    }
}
