//! Inbound media as the crate decodes it, turned into the gateway's
//! [`NetworkMedia`]: what the sender declared, and a download handle that
//! holds everything a later download needs (the CDN path, the media key,
//! the hashes and the media type the key is derived for) without the
//! original message, which the gateway does not keep. And back: a stored
//! handle into the crate's `DownloadParams`.
//!
//! The handle is a JSON object with `direct_path`, `media_key`,
//! `file_sha256` and `file_enc_sha256` (standard base64), `file_length` and
//! `media_type` (`image`, `video`, `audio`, `document` or `sticker`); a
//! field the message did not carry is left out, and the download then says
//! which one was missing. The CDN URL is not kept: it is derived from the
//! direct path and a fresh media connection at download time.
//!
//! The direct path is the sender's word, and the crate joins it to the
//! media host as `https://{host}{direct_path}?auth=…`: a path that does not
//! start with `/` (`.evil.tld/x`, `@10.0.0.5:8443/x`) would move the
//! request, with the session's media auth, to another host. So a handle
//! is downloaded only when its path has the shape WhatsApp's have
//! ([`check_direct_path`]); any other is refused before any request.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
use whatsapp_rust::download::{DownloadParams, MediaType};

use crate::NetworkError;
use crate::domain::media::{MediaKind, NetworkMedia};

/// The media fields every media message carries, borrowed from its proto.
pub struct Fields<'a> {
    /// Declared MIME type.
    pub mimetype: &'a Option<String>,
    /// SHA-256 of the plain bytes.
    pub file_sha256: &'a Option<Vec<u8>>,
    /// SHA-256 of the encrypted bytes on the CDN.
    pub file_enc_sha256: &'a Option<Vec<u8>>,
    /// The key the bytes are encrypted with.
    pub media_key: &'a Option<Vec<u8>>,
    /// The CDN path.
    pub direct_path: &'a Option<String>,
    /// Declared size.
    pub file_length: Option<u64>,
    /// Pixels across.
    pub width: Option<u32>,
    /// Pixels down.
    pub height: Option<u32>,
    /// Duration.
    pub seconds: Option<u32>,
    /// A voice note.
    pub ptt: Option<bool>,
    /// A document's name.
    pub filename: Option<&'a str>,
    /// Opens once.
    pub view_once: bool,
}

/// What the gateway keeps of a media message's media of kind `kind`.
pub fn network_media(kind: MediaKind, f: &Fields<'_>) -> NetworkMedia {
    let b64 = |v: &Option<Vec<u8>>| v.as_deref().map(|b| Value::String(STANDARD.encode(b)));
    let mut handle = Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            handle.insert(k.to_owned(), v);
        }
    };
    put("direct_path", f.direct_path.clone().map(Value::String));
    put("media_key", b64(f.media_key));
    put("file_sha256", b64(f.file_sha256));
    put("file_enc_sha256", b64(f.file_enc_sha256));
    put("file_length", f.file_length.map(|n| json!(n)));
    put("media_type", Some(json!(kind.as_str())));
    NetworkMedia {
        mimetype: f.mimetype.clone().filter(|m| !m.is_empty()),
        file_length: f.file_length,
        sha256: f
            .file_sha256
            .as_deref()
            .filter(|h| h.len() == 32)
            .map(hex_of),
        filename: f.filename.filter(|n| !n.is_empty()).map(str::to_owned),
        ptt: f.ptt,
        width: f.width.filter(|n| *n > 0),
        height: f.height.filter(|n| *n > 0),
        seconds: f.seconds.filter(|n| *n > 0),
        view_once: f.view_once,
        handle: Value::Object(handle),
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The crate's media type of a kind (which key-derivation info applies).
pub fn media_type(kind: MediaKind) -> MediaType {
    match kind {
        MediaKind::Image => MediaType::Image,
        MediaKind::Video => MediaType::Video,
        MediaKind::Audio => MediaType::Audio,
        MediaKind::Document => MediaType::Document,
        MediaKind::Sticker => MediaType::Sticker,
    }
}

/// What the crate downloads a stored handle with; `Rejected` naming what
/// is missing or malformed (the handle will not change, so a retry cannot
/// help). The handle's own `media_type` wins over `kind`: it is what the
/// message said, and the decryption keys are derived from it.
pub fn download_params(kind: MediaKind, handle: &Value) -> Result<DownloadParams, NetworkError> {
    if !handle.is_object() {
        return Err(NetworkError::Rejected(format!(
            "the stored media handle is not an object: {handle}"
        )));
    }
    let missing = |what: &str| {
        NetworkError::Rejected(format!(
            "the message carried no {what}, so its media cannot be downloaded"
        ))
    };
    let bytes = |key: &str| -> Result<Option<Vec<u8>>, NetworkError> {
        match handle.get(key).and_then(Value::as_str) {
            None => Ok(None),
            Some(s) => STANDARD.decode(s).map(Some).map_err(|e| {
                NetworkError::Rejected(format!(
                    "the stored media handle's {key} is not base64: {e}"
                ))
            }),
        }
    };
    let direct_path = handle
        .get("direct_path")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| missing("CDN path (direct_path)"))?;
    check_direct_path(direct_path).map_err(|why| {
        NetworkError::Rejected(format!(
            "the message's CDN path (direct_path) {why}, which WhatsApp's never do, so its media is not downloaded"
        ))
    })?;
    let media_key = bytes("media_key")?.ok_or_else(|| missing("media key"))?;
    let file_sha256 = bytes("file_sha256")?.ok_or_else(|| missing("file hash"))?;
    // The CDN's token is the encrypted file's hash: without it there is
    // nothing to ask for.
    let file_enc_sha256 = bytes("file_enc_sha256")?
        .ok_or_else(|| missing("encrypted file hash (file_enc_sha256)"))?;
    Ok(DownloadParams {
        direct_path: direct_path.to_owned(),
        media_key: Some(media_key),
        file_sha256,
        file_enc_sha256: Some(file_enc_sha256),
        file_length: handle
            .get("file_length")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        media_type: media_type(handle_kind(handle)?.unwrap_or(kind)),
    })
}

/// Longest direct path taken (WhatsApp's are a few hundred characters).
const MAX_DIRECT_PATH: usize = 2048;

/// Whether `path` has the shape of WhatsApp's direct paths
/// (`/v/t62.7118-24/12_34_n.enc?ccb=11-4&oh=01_Q5…&oe=68…&_nc_sid=5e03e0&mms3=true`):
/// an absolute path on the media host, not `//`, of printable ASCII from
/// the characters a URL's path and query take, without `@` or `\` (which
/// some parsers read as the end of the authority or as `/`). The reason it
/// is refused otherwise.
pub fn check_direct_path(path: &str) -> Result<(), String> {
    if path.len() > MAX_DIRECT_PATH {
        return Err(format!("is longer than {MAX_DIRECT_PATH} characters"));
    }
    if !path.starts_with('/') {
        return Err("does not start with `/`".into());
    }
    if path.starts_with("//") {
        return Err("starts with `//`".into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~/?&=%+,;:!*'()$".contains(c);
    if let Some(c) = path.chars().find(|c| !allowed(*c)) {
        return Err(format!("contains {c:?}"));
    }
    Ok(())
}

/// The kind a handle names, if it names one.
fn handle_kind(handle: &Value) -> Result<Option<MediaKind>, NetworkError> {
    match handle.get("media_type") {
        None | Some(Value::Null) => Ok(None),
        Some(t) => t
            .as_str()
            .and_then(MediaKind::of_message_type)
            .map(Some)
            .ok_or_else(|| {
                NetworkError::Rejected(format!(
                    "the stored media handle's media_type {t} is not a media kind"
                ))
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle_with(direct_path: &str) -> Value {
        json!({
            "direct_path": direct_path,
            "media_key": STANDARD.encode([1u8; 32]),
            "file_sha256": STANDARD.encode([2u8; 32]),
            "file_enc_sha256": STANDARD.encode([3u8; 32]),
            "file_length": 10,
            "media_type": "image",
        })
    }

    #[test]
    fn the_direct_paths_whatsapp_sends_are_downloaded() {
        for path in [
            "/v/t62.7118-24/30529328_1179417253598425_6436315384412376880_n.enc?ccb=11-4&oh=01_Q5AaIB&oe=6801D5A6&_nc_sid=5e03e0&mms3=true",
            "/v/t62.7114-24/f1/m232/up-oil-image-1.enc",
            "/mms/image/abc",
        ] {
            assert_eq!(check_direct_path(path), Ok(()), "{path}");
            let params = download_params(MediaKind::Image, &handle_with(path)).unwrap();
            assert_eq!(params.direct_path, path);
        }
    }

    #[test]
    fn a_direct_path_that_would_move_the_request_to_another_host_is_refused_before_any_request() {
        for path in [
            ".evil.tld/x",
            "@10.0.0.5:8443/x",
            "evil.tld/x",
            ":8443/x",
            "//evil.tld/x",
            "/x@10.0.0.5/y",
            "/x\\@evil.tld",
            "/v/t62 x.enc",
            "/v/t62\nHost: evil",
            "/v/t62#frag",
            "/v/\u{e9}.enc",
        ] {
            assert!(check_direct_path(path).is_err(), "{path:?} was taken");
            match download_params(MediaKind::Image, &handle_with(path)) {
                Err(NetworkError::Rejected(m)) => {
                    assert!(m.contains("direct_path"), "{m}");
                }
                Err(other) => panic!("{path:?} gave {other:?}"),
                Ok(_) => panic!("{path:?} would be downloaded"),
            }
        }
        assert!(check_direct_path(&format!("/{}", "a".repeat(MAX_DIRECT_PATH))).is_err());
    }
}
