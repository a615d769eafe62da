//! Uploads: a client's bytes streamed into the media store under the upload
//! limit and the session's upload quota, recorded as stored media of the
//! session, for sends to name by `media_id`.
//!
//! The quota counts what a session holds in uploads: its stored uploads
//! and the bytes of its uploads still streaming in (a declared length is
//! reserved whole when the upload starts). Each chunk is counted before it
//! is handed to the media store, so an upload that would go past the quota
//! stops at that chunk and is aborted (nothing of it is kept); one whose
//! declared length says it will not fit is refused unread. The
//! last check, against the stored uploads read again, is made in the same
//! critical section as the record is written, so two uploads finishing
//! together cannot both take the same remaining bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::{Inner, Media, MediaError};
use crate::domain::media::{MediaOrigin, MediaRecord, MediaState};
use crate::domain::time::unix_now;
use crate::media_store::{PutError, media_key};

/// What an upload declares about itself.
#[derive(Debug, Clone, Default)]
pub struct UploadMeta {
    /// Its MIME type (`application/octet-stream` when not given).
    pub mimetype: Option<String>,
    /// Its file name.
    pub filename: Option<String>,
    /// Its length, when the client declared the file's own length (a raw
    /// body's `Content-Length`): one that will not fit the session's
    /// upload quota is refused before a byte is read.
    pub declared_len: Option<u64>,
}

impl Media {
    /// Stores an upload as it arrives (never whole in memory), bounded by
    /// the upload limit and the session's upload quota; the record of the
    /// stored media. An empty body is refused (no send takes zero bytes),
    /// and nothing is left behind by a refused or broken upload.
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
        let counters = &self.inner.counters;
        let quota = match self.upload_quota(session_id, meta.declared_len).await {
            Ok(quota) => quota,
            Err(e) => {
                counters.uploads_failed.inc();
                return Err(e);
            }
        };
        let id = format!("up-{}", uuid::Uuid::new_v4().simple());
        let key = media_key(session_id, &id);
        let created_at = unix_now();
        let mimetype = meta
            .mimetype
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        let counted = quota.clone();
        let mut streamed = 0u64;
        let body = body.map(move |chunk| match chunk {
            Err(e) => Err(e.to_string()),
            Ok(bytes) => {
                streamed += bytes.len() as u64;
                match &counted {
                    Some(q) if !q.cover(streamed) => Err("the upload quota is exceeded".to_owned()),
                    _ => Ok(bytes),
                }
            }
        });
        let written = self
            .inner
            .blobs
            .put_stream(
                &key,
                body,
                self.inner.config.max_upload_bytes,
                Some(&mimetype),
            )
            .await;
        let written = match written {
            Ok(written) => written,
            Err(e) => {
                counters.uploads_failed.inc();
                return Err(match (&quota, e) {
                    (Some(q), PutError::Body(_)) if q.refused() => q.exceeded(q.refused_used()),
                    (_, e) => e.into(),
                });
            }
        };
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
        let commit = self.inner.upload_commit.lock().await;
        if let Some(q) = &quota {
            // Another upload of the session may have been recorded since
            // this one started: the stored uploads are read again.
            let used = self.upload_bytes(session_id).await? + q.others_in_flight();
            if used.saturating_add(written.len) > q.limit {
                drop(commit);
                let _ = self.inner.blobs.delete(&key).await;
                counters.uploads_failed.inc();
                return Err(q.exceeded(used));
            }
        }
        match self.try_save(&record).await {
            Ok(true) => {}
            Ok(false) => {
                drop(commit);
                // The session went away while its upload was stored.
                let _ = self.inner.blobs.delete(&key).await;
                return Err(MediaError::NotFound {
                    session_id: session_id.to_owned(),
                    media_id: record.id,
                });
            }
            Err(e) => {
                drop(commit);
                // No record names the bytes: they go, not kept half-stored.
                let _ = self.inner.blobs.delete(&key).await;
                counters.uploads_failed.inc();
                return Err(e);
            }
        }
        // Its bytes are counted as stored now, no longer as in flight.
        drop(quota);
        drop(commit);
        counters.uploads_stored.inc();
        counters.stored_bytes.inc_by(written.len as i64);
        Ok(record)
    }

    /// The quota an upload of `session_id` streams under (`None` when no
    /// quota is set), refused at once when the session is already at it or
    /// the declared length will not fit.
    async fn upload_quota(
        &self,
        session_id: &str,
        declared_len: Option<u64>,
    ) -> Result<Option<Arc<QuotaCharge>>, MediaError> {
        let Some(limit) = self.inner.config.max_upload_bytes_per_session else {
            return Ok(None);
        };
        let stored = self.upload_bytes(session_id).await?;
        let charge = Arc::new(QuotaCharge {
            inner: self.inner.clone(),
            session_id: session_id.to_owned(),
            limit,
            stored,
            taken: AtomicU64::new(0),
            refused: AtomicBool::new(false),
            refused_used: AtomicU64::new(0),
        });
        let used = stored + charge.others_in_flight();
        if used >= limit {
            return Err(charge.exceeded(used));
        }
        // A declared length is reserved whole at once, so uploads racing for
        // the last of a quota are settled before their bytes are read (and
        // none is cut off halfway by the others' chunks).
        if let Some(n) = declared_len
            && !charge.cover(n)
        {
            return Err(charge.exceeded(charge.refused_used()));
        }
        Ok(Some(charge))
    }

    /// Bytes of the session's stored uploads.
    async fn upload_bytes(&self, session_id: &str) -> Result<u64, MediaError> {
        let store = self.inner.store.clone();
        let sid = session_id.to_owned();
        let records = tokio::task::spawn_blocking(move || store.session_media(&sid))
            .await
            .map_err(|e| MediaError::Internal(e.to_string()))?
            .map_err(|e| MediaError::Internal(e.to_string()))?;
        Ok(records
            .iter()
            .filter(|r| r.origin == MediaOrigin::Upload && r.state == MediaState::Stored)
            .filter_map(|r| r.file_length)
            .sum())
    }
}

/// One upload's bytes, counted against its session's quota while they
/// stream in; given back when the upload ends (recorded, refused or broken).
struct QuotaCharge {
    inner: Arc<Inner>,
    session_id: String,
    /// The quota, in bytes.
    limit: u64,
    /// The session's stored uploads when this upload began.
    stored: u64,
    /// Bytes of this upload counted so far.
    taken: AtomicU64,
    /// Whether a chunk was refused for the quota.
    refused: AtomicBool,
    /// What the session held when it was.
    refused_used: AtomicU64,
}

impl QuotaCharge {
    /// Makes sure the first `total` bytes of this upload are counted;
    /// `false`, counting nothing more, when they would take the session
    /// past its quota.
    fn cover(&self, total: u64) -> bool {
        let taken = self.taken.load(Ordering::SeqCst);
        total <= taken || self.take(total - taken)
    }

    /// Counts `n` more bytes of this upload; `false`, counting nothing,
    /// when they would take the session past its quota.
    fn take(&self, n: u64) -> bool {
        let mut map = self
            .inner
            .uploading
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let in_flight = map.get(&self.session_id).copied().unwrap_or(0);
        let taken = self.taken.load(Ordering::SeqCst);
        if self.stored + in_flight + n > self.limit {
            let others = in_flight.saturating_sub(taken);
            self.refused_used
                .store(self.stored + others, Ordering::SeqCst);
            self.refused.store(true, Ordering::SeqCst);
            return false;
        }
        *map.entry(self.session_id.clone()).or_default() += n;
        self.taken.store(taken + n, Ordering::SeqCst);
        true
    }

    /// Bytes of the session's other uploads still streaming in.
    fn others_in_flight(&self) -> u64 {
        let map = self
            .inner
            .uploading
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.get(&self.session_id)
            .copied()
            .unwrap_or(0)
            .saturating_sub(self.taken.load(Ordering::SeqCst))
    }

    fn refused(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
    }

    fn refused_used(&self) -> u64 {
        self.refused_used.load(Ordering::SeqCst)
    }

    /// The refusal, with what the session holds.
    fn exceeded(&self, used: u64) -> MediaError {
        MediaError::QuotaExceeded {
            session_id: self.session_id.clone(),
            limit: self.limit,
            used,
        }
    }
}

impl Drop for QuotaCharge {
    fn drop(&mut self) {
        let taken = *self.taken.get_mut();
        if taken == 0 {
            return;
        }
        let mut map = self
            .inner
            .uploading
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.session_id) {
            *n = n.saturating_sub(taken);
            if *n == 0 {
                map.remove(&self.session_id);
            }
        }
    }
}
