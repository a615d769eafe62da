//! The simulated network's media servers: the bytes of every media a sim
//! message carries are kept in the media store under `sim/` (as a real
//! network keeps them on its CDN), named by a blob id the message's
//! download handle carries. Downloads can be made to fail a number of
//! times, as an expired or unreachable link would, so the gateway's failed
//! state and its retry are testable.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::NetworkError;
use crate::domain::media::NetworkMedia;
use crate::domain::send::{FieldError, MediaSource};
use crate::media::MediaBytes;
use crate::media_store::{MediaStore, media_key, sim_key};

/// Largest media the control API injects (decoded).
pub const MAX_INJECTED_BYTES: usize = 16 * 1024 * 1024;

/// The media of an injected inbound message.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SimMediaIn))]
pub struct SimMediaIn {
    /// The bytes, standard base64 (1 byte to 16 MiB decoded).
    pub data: String,
    /// The MIME type the sender declares; by default the kind's.
    pub mimetype: Option<String>,
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
    pub view_once: Option<bool>,
    /// The first this many downloads of it fail, as an expired link would.
    pub fail_downloads: Option<u32>,
}

/// An injected media, checked and decoded, not yet on the sim's servers.
#[derive(Debug, Clone)]
pub struct DecodedMedia {
    bytes: Bytes,
    media: NetworkMedia,
    fail_downloads: u32,
}

impl SimMediaIn {
    /// Checks and decodes it.
    pub fn decode(self, fallback_mimetype: Option<String>) -> Result<DecodedMedia, FieldError> {
        let data: String = self
            .data
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let bytes = STANDARD.decode(data.as_bytes()).map_err(|e| {
            FieldError::new("media.data", format!("is not valid standard base64: {e}"))
        })?;
        if bytes.is_empty() {
            return Err(FieldError::new(
                "media.data",
                "must not decode to zero bytes",
            ));
        }
        if bytes.len() > MAX_INJECTED_BYTES {
            return Err(FieldError::new(
                "media.data",
                "decodes to more than 16 MiB, the most the simulated network injects",
            ));
        }
        let media = NetworkMedia {
            mimetype: self.mimetype.or(fallback_mimetype),
            file_length: Some(bytes.len() as u64),
            sha256: Some(sha256_hex(&bytes)),
            filename: self.filename,
            ptt: self.ptt,
            width: self.width,
            height: self.height,
            seconds: self.seconds,
            view_once: self.view_once.unwrap_or(false),
            handle: Value::Null,
        };
        Ok(DecodedMedia {
            bytes: Bytes::from(bytes),
            media,
            fail_downloads: self.fail_downloads.unwrap_or(0),
        })
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sim's media servers.
pub struct SimMedia {
    store: MediaStore,
    /// Downloads still to fail, by blob id: a test's fault, kept in memory
    /// like the sim's other faults.
    failing: Mutex<HashMap<String, u32>>,
}

impl SimMedia {
    /// Servers keeping their bytes in `store`.
    pub fn new(store: MediaStore) -> Self {
        Self {
            store,
            failing: Mutex::default(),
        }
    }

    fn new_blob() -> String {
        uuid::Uuid::new_v4().simple().to_string()
    }

    /// Puts an injected media on the servers; the description the message carries.
    pub async fn put_injected(&self, decoded: DecodedMedia) -> Result<NetworkMedia, NetworkError> {
        let blob = Self::new_blob();
        self.store
            .put_bytes(&sim_key(&blob), decoded.bytes)
            .await
            .map_err(|e| {
                NetworkError::Failed(format!("the simulated media servers failed: {e}"))
            })?;
        if decoded.fail_downloads > 0 {
            self.lock().insert(blob.clone(), decoded.fail_downloads);
        }
        let mut media = decoded.media;
        media.handle = json!({ "blob": blob });
        Ok(media)
    }

    /// Puts the media of a message session `sender` sends on the servers:
    /// bytes given inline are written; a stored media is copied (never
    /// through memory whole); a URL is kept as it is (the sim fetches
    /// nothing from outside, so its download fails, saying so).
    pub async fn put_sent(
        &self,
        sender: &str,
        source: &MediaSource,
    ) -> Result<(Value, Option<u64>, Option<String>), NetworkError> {
        let failed =
            |e: String| NetworkError::Failed(format!("the simulated media servers failed: {e}"));
        match source {
            MediaSource::Url(url) => Ok((json!({ "url": url }), None, None)),
            MediaSource::Data(bytes) => {
                let blob = Self::new_blob();
                let written = self
                    .store
                    .put_bytes(&sim_key(&blob), Bytes::copy_from_slice(bytes))
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok((
                    json!({ "blob": blob }),
                    Some(written.len),
                    Some(written.sha256),
                ))
            }
            MediaSource::Stored(media_id) => {
                let blob = Self::new_blob();
                let from = media_key(sender, media_id);
                let size = self.store.size(&from).await.map_err(|e| {
                    NetworkError::Rejected(format!("the media {media_id} cannot be read: {e}"))
                })?;
                self.store
                    .copy(&from, &sim_key(&blob))
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok((json!({ "blob": blob }), Some(size), None))
            }
        }
    }

    /// Streams the bytes of a blob.
    pub async fn download(&self, handle: &Value) -> Result<MediaBytes, NetworkError> {
        if let Some(url) = handle.get("url").and_then(Value::as_str) {
            return Err(NetworkError::Rejected(format!(
                "the simulated network keeps no bytes for media sent by URL ({url})"
            )));
        }
        let Some(blob) = handle.get("blob").and_then(Value::as_str) else {
            return Err(NetworkError::Rejected(
                "not a simulated media handle".into(),
            ));
        };
        {
            let mut failing = self.lock();
            if let Some(left) = failing.get_mut(blob) {
                *left -= 1;
                if *left == 0 {
                    failing.remove(blob);
                }
                return Err(NetworkError::Failed(
                    "the media server answered 410 Gone (a simulated download fault)".into(),
                ));
            }
        }
        match self.store.read(&sim_key(blob), None).await {
            Ok(read) => Ok(read.stream.boxed()),
            Err(crate::media_store::MediaStoreError::NotFound(_)) => Err(NetworkError::Rejected(
                "the simulated media servers no longer have this media".into(),
            )),
            Err(e) => Err(NetworkError::Failed(format!(
                "the simulated media servers failed: {e}"
            ))),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.failing.lock().unwrap_or_else(|p| p.into_inner())
    }
}
