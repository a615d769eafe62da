//! One download of an inbound media: the network's decrypted bytes streamed
//! into the media store (bounded in time and size, hashed on the way), and
//! the record updated to what came of it: stored, or failed with the reason.
//! A session that is not connected is no failure of the media: the record
//! keeps its state and the caller is told to try once it is connected.

use super::{Media, MediaError};
use crate::domain::media::{MediaKind, MediaRecord, MediaState};
use crate::domain::time::unix_now;
use crate::media_store::{PutError, media_key};
use crate::network::{NetworkError, NetworkSession};

impl Media {
    /// Downloads `record`'s bytes and stores the record as it then stands:
    /// a failed download is the record's state, with its reason. Only a
    /// session that is not connected is an error, and leaves the record as
    /// it was.
    pub(super) async fn download(
        &self,
        mut record: MediaRecord,
        client: Option<&dyn NetworkSession>,
    ) -> Result<MediaRecord, MediaError> {
        let outcome = match self.fetch(&record, client).await {
            Err(Fetch::NotConnected) => return Err(MediaError::NotConnected),
            Err(Fetch::Failed(reason)) => Err(reason),
            Ok(done) => Ok(done),
        };
        record.attempts += 1;
        match outcome {
            Ok((len, sha256)) => {
                record.state = MediaState::Stored;
                record.error = None;
                record.file_length = Some(len);
                record.sha256 = Some(sha256);
                record.stored_at = Some(unix_now());
                self.inner.counters.downloads_stored.inc();
                self.inner.counters.stored_bytes.inc_by(len as i64);
            }
            Err(reason) => {
                tracing::warn!(session = %record.session_id, media = %record.id, %reason, "media download failed");
                record.state = MediaState::Failed;
                record.error = Some(reason);
                self.inner.counters.downloads_failed.inc();
            }
        }
        if !self.save(&record).await && record.state == MediaState::Stored {
            // The session was deleted meanwhile: its media goes with it.
            let key = media_key(&record.session_id, &record.id);
            let _ = self.inner.blobs.delete(&key).await;
            self.inner
                .counters
                .stored_bytes
                .dec_by(record.file_length.unwrap_or(0) as i64);
        }
        Ok(record)
    }

    /// The download itself; its length and SHA-256, or why it failed.
    async fn fetch(
        &self,
        record: &MediaRecord,
        client: Option<&dyn NetworkSession>,
    ) -> Result<(u64, String), Fetch> {
        let client = client.ok_or(Fetch::NotConnected)?;
        let handle = record.handle.as_ref().ok_or_else(|| {
            Fetch::Failed("the network gave no way to download this media".to_owned())
        })?;
        let kind = record.kind.unwrap_or(MediaKind::Document);
        let config = &self.inner.config;
        let key = media_key(&record.session_id, &record.id);
        let limit = config.max_download_bytes;
        // A media the sender says is larger is not fetched at all (the
        // backend may have to take it whole before the limit is seen).
        if let Some(declared) = record.file_length.filter(|n| *n > limit) {
            return Err(Fetch::Failed(format!(
                "the media is {declared} bytes, more than {limit}, the most the gateway downloads (--media-max-download-bytes)"
            )));
        }
        let mimetype = record.mimetype.as_str();
        let work = async {
            let bytes = match client.download_media(kind, handle).await {
                Ok(bytes) => bytes,
                Err(NetworkError::NotConnected) => return Err(Fetch::NotConnected),
                Err(e) => return Err(Fetch::Failed(reason(e))),
            };
            self.inner
                .blobs
                .put_stream(&key, bytes, limit, Some(mimetype))
                .await
                .map_err(|e| Fetch::Failed(match e {
                    PutError::TooLarge { limit } => format!(
                        "the media is larger than {limit} bytes, the most the gateway downloads (--media-max-download-bytes)"
                    ),
                    PutError::Body(e) => format!("the download broke off: {e}"),
                    PutError::Store(e) => format!("the media store failed: {e}"),
                }))
        };
        let written = tokio::time::timeout(config.download_timeout, work)
            .await
            .map_err(|_| {
                Fetch::Failed(format!(
                    "the download took longer than {} s (--media-download-timeout-secs)",
                    config.download_timeout.as_secs()
                ))
            })??;
        if let Some(declared) = record.sha256.as_deref()
            && !declared.eq_ignore_ascii_case(&written.sha256)
        {
            let _ = self.inner.blobs.delete(&key).await;
            return Err(Fetch::Failed(format!(
                "the downloaded bytes do not match the SHA-256 the sender declared ({declared})"
            )));
        }
        Ok((written.len, written.sha256))
    }
}

/// Why a download did not store the media.
enum Fetch {
    /// The session has no live connection: nothing was tried.
    NotConnected,
    /// The download failed, in words for the record.
    Failed(String),
}

/// Why a network download failed, in words for the record.
fn reason(e: NetworkError) -> String {
    match e {
        NetworkError::Rejected(m) => format!("the network no longer serves this media: {m}"),
        other => other.to_string(),
    }
}
