//! Uploads: a client's bytes streamed into the media store under the upload
//! limit, recorded as stored media of the session, for sends to name by
//! `media_id`.

use bytes::Bytes;
use futures_util::Stream;

use super::{Media, MediaError};
use crate::domain::media::{MediaOrigin, MediaRecord, MediaState};
use crate::domain::time::unix_now;
use crate::media_store::media_key;

/// What an upload declares about itself.
#[derive(Debug, Clone, Default)]
pub struct UploadMeta {
    /// Its MIME type (`application/octet-stream` when not given).
    pub mimetype: Option<String>,
    /// Its file name.
    pub filename: Option<String>,
}

impl Media {
    /// Stores an upload as it arrives (never whole in memory), bounded by
    /// the upload limit; the record of the stored media. An empty body is
    /// refused (no send takes zero bytes), and nothing is left behind by a
    /// refused or broken upload.
    pub async fn upload<S, E>(
        &self,
        session_id: &str,
        meta: UploadMeta,
        body: S,
    ) -> Result<MediaRecord, MediaError>
    where
        S: Stream<Item = Result<Bytes, E>> + Send,
        E: std::fmt::Display,
    {
        let id = format!("up-{}", uuid::Uuid::new_v4().simple());
        let key = media_key(session_id, &id);
        let created_at = unix_now();
        let mimetype = meta
            .mimetype
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        let counters = &self.inner.counters;
        let written = self
            .inner
            .blobs
            .put_stream(
                &key,
                body,
                self.inner.config.max_upload_bytes,
                Some(&mimetype),
            )
            .await
            .inspect_err(|_| {
                counters.uploads_failed.inc();
            })?;
        if written.len == 0 {
            let _ = self.inner.blobs.delete(&key).await;
            counters.uploads_failed.inc();
            return Err(MediaError::EmptyUpload);
        }
        let record = MediaRecord {
            id,
            session_id: session_id.to_owned(),
            origin: MediaOrigin::Upload,
            kind: None,
            mimetype,
            file_length: Some(written.len),
            sha256: Some(written.sha256),
            filename: meta.filename,
            ptt: None,
            width: None,
            height: None,
            seconds: None,
            view_once: false,
            state: MediaState::Stored,
            error: None,
            attempts: 0,
            created_at,
            stored_at: Some(unix_now()),
            handle: None,
        };
        match self.try_save(&record).await {
            Ok(true) => {}
            Ok(false) => {
                // The session went away while its upload was stored.
                let _ = self.inner.blobs.delete(&key).await;
                return Err(MediaError::NotFound {
                    session_id: session_id.to_owned(),
                    media_id: record.id,
                });
            }
            Err(e) => {
                // No record names the bytes: they go, not kept half-stored.
                let _ = self.inner.blobs.delete(&key).await;
                counters.uploads_failed.inc();
                return Err(e);
            }
        }
        counters.uploads_stored.inc();
        counters.stored_bytes.inc_by(written.len as i64);
        Ok(record)
    }
}
