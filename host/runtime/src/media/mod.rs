//! Media the gateway holds: inbound media downloaded from the network (before
//! the message's event is published, or on first read in lazy mode), and
//! uploads clients send to reference in later sends. Records live in the
//! store (`MediaRecord`), bytes in the media store, under the same session
//! and media id. A failed download is a state with its reason, retried on
//! request. Each session's uploads count against its upload quota. A
//! background sweep removes media by age, by each session's share and by
//! total size.

mod config;
mod download;
mod error;
mod sweeper;
mod upload;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use config::{
    DEFAULT_DOWNLOAD_CONCURRENCY, DEFAULT_DOWNLOAD_TIMEOUT, DEFAULT_MAX_DOWNLOAD_BYTES,
    DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_MAX_UPLOAD_BYTES_PER_SESSION, DEFAULT_ORPHAN_GRACE,
    DEFAULT_RETENTION_AGE, DEFAULT_SWEEP_INTERVAL, DownloadMode, MediaConfig,
};
pub use error::MediaError;
pub use sweeper::SweepReport;
pub use upload::UploadMeta;

use crate::counters::MediaCounters;
use crate::domain::media::{MediaKind, MediaObject, MediaRecord, MediaState};
use crate::domain::time::unix_now;
use crate::media_store::{Blob, MediaStore, media_key, session_prefix};
use crate::network::{InboundMessage, NetworkSession};
use crate::store::Store;

/// The media service; cheap to clone.
#[derive(Clone)]
pub struct Media {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    blobs: MediaStore,
    config: MediaConfig,
    counters: MediaCounters,
    /// One download of a media at a time: a second reader waits for the
    /// first download instead of starting its own.
    downloading: Mutex<HashMap<MediaKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Downloads in flight at once, gateway-wide: each holds a part buffer
    /// of the media store, so a burst of media messages is bounded.
    permits: tokio::sync::Semaphore,
    /// Upload bytes being written, per session, counted against the
    /// session's quota while they stream in.
    uploading: Mutex<HashMap<String, u64>>,
    /// Held while an upload is checked against its quota one last time and
    /// recorded, so two uploads finishing together cannot both fit into
    /// the same remaining quota.
    upload_commit: tokio::sync::Mutex<()>,
}

/// A media by session and media id.
type MediaKey = (String, String);

impl Media {
    /// The service over `store` (records) and `blobs` (bytes). Nothing is
    /// read here: the sweep that runs at start sets the stored-bytes gauge
    /// from the records, so start-up does not scan them twice.
    pub fn new(
        store: Store,
        blobs: MediaStore,
        config: MediaConfig,
        counters: MediaCounters,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                blobs,
                permits: tokio::sync::Semaphore::new(config.download_concurrency.max(1)),
                counters,
                downloading: Mutex::default(),
                uploading: Mutex::default(),
                upload_commit: tokio::sync::Mutex::new(()),
                config,
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &MediaConfig {
        &self.inner.config
    }

    /// The media store.
    pub fn blobs(&self) -> &MediaStore {
        &self.inner.blobs
    }

    /// How the API shows a record.
    pub fn object(&self, record: &MediaRecord) -> MediaObject {
        record.object(&self.inner.config.public_url)
    }

    /// Handles the media of an inbound message before its event is built:
    /// records it, and downloads it now in eager mode (unless `defer`: the
    /// gateway is stopping, and the media is left `pending` for the first
    /// read). `None` when the message carries no media. A message the
    /// network delivers again finds the record it had (the id is derived
    /// from the message), and stored media is not downloaded twice.
    pub async fn ingest(
        &self,
        session_id: &str,
        message: &InboundMessage,
        client: Arc<dyn NetworkSession>,
        defer: bool,
    ) -> Option<MediaRecord> {
        let media = message.media.as_ref()?;
        let kind = MediaKind::of_message_type(&message.message_type)?;
        let fresh = MediaRecord::inbound(
            session_id,
            &message.message_id,
            &message.chat,
            kind,
            media,
            unix_now(),
        );
        let known = self.record(session_id, &fresh.id).await.ok().flatten();
        if let Some(known) = known.filter(|r| r.state == MediaState::Stored) {
            return Some(known);
        }
        if self.inner.config.mode == DownloadMode::Eager && !defer {
            // Not connected after all: left for the first read.
            if let Ok(record) = self.download_once(fresh.clone(), Some(client)).await {
                return Some(record);
            }
        }
        self.save(&fresh).await;
        Some(fresh)
    }

    /// A media record, downloading it first when it is still pending (lazy
    /// mode). A failed one is answered as it is: retrying is the retry
    /// route's job, so a read never hides a failure behind a long wait.
    pub async fn open(
        &self,
        session_id: &str,
        media_id: &str,
        client: Option<Arc<dyn NetworkSession>>,
    ) -> Result<MediaRecord, MediaError> {
        let record = self.existing(session_id, media_id).await?;
        match record.state {
            MediaState::Stored | MediaState::Failed => Ok(record),
            MediaState::Pending => self.download_once(record, client).await,
        }
    }

    /// A media record as it stands, downloading nothing.
    pub async fn describe(
        &self,
        session_id: &str,
        media_id: &str,
    ) -> Result<MediaRecord, MediaError> {
        self.existing(session_id, media_id).await
    }

    /// Removes one media: bytes first, then the record.
    pub async fn delete(&self, session_id: &str, media_id: &str) -> Result<(), MediaError> {
        let record = self.existing(session_id, media_id).await?;
        self.inner
            .blobs
            .delete(&media_key(session_id, media_id))
            .await?;
        let store = self.inner.store.clone();
        let (s, m) = (session_id.to_owned(), media_id.to_owned());
        tokio::task::spawn_blocking(move || store.delete_media(&s, &m))
            .await
            .map_err(|e| MediaError::Internal(e.to_string()))?
            .map_err(|e| MediaError::Internal(e.to_string()))?;
        self.inner
            .counters
            .stored_bytes
            .dec_by(stored_bytes(std::slice::from_ref(&record)) as i64);
        Ok(())
    }

    /// Downloads a media again (a failed or pending one; a stored one is
    /// answered as it is).
    pub async fn retry(
        &self,
        session_id: &str,
        media_id: &str,
        client: Option<Arc<dyn NetworkSession>>,
    ) -> Result<MediaRecord, MediaError> {
        let record = self.existing(session_id, media_id).await?;
        if record.state == MediaState::Stored {
            return Ok(record);
        }
        if record.handle.is_none() {
            return Err(MediaError::NotDownloadable(media_id.to_owned()));
        }
        self.download_once(record, client).await
    }

    /// Reads a stored media's bytes, or the part `range` names.
    pub async fn read(
        &self,
        record: &MediaRecord,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<Blob, MediaError> {
        let key = media_key(&record.session_id, &record.id);
        Ok(self.inner.blobs.read(&key, range).await?)
    }

    /// A presigned URL for a stored media, when the store gives them.
    pub async fn presigned(&self, record: &MediaRecord) -> Result<Option<url::Url>, MediaError> {
        let key = media_key(&record.session_id, &record.id);
        Ok(self.inner.blobs.presigned_get(&key).await?)
    }

    /// A stored media a send names (`media_id`): it must exist in the
    /// session and be stored.
    pub async fn for_send(
        &self,
        session_id: &str,
        media_id: &str,
    ) -> Result<MediaRecord, MediaError> {
        let record = self.existing(session_id, media_id).await?;
        match record.state {
            MediaState::Stored => Ok(record),
            state => Err(MediaError::NotStored {
                media_id: media_id.to_owned(),
                state,
                reason: record.error,
            }),
        }
    }

    /// Removes the bytes of every media of a deleted session (its records
    /// went with the session's deletion).
    pub async fn delete_session(&self, session_id: &str) {
        let prefix = session_prefix(session_id);
        let size: u64 = match self.inner.blobs.list(&prefix).await {
            Ok(objects) => objects.iter().map(|o| o.size).sum(),
            Err(_) => 0,
        };
        match self.inner.blobs.delete_prefix(&prefix).await {
            Ok(n) => {
                self.inner.counters.stored_bytes.dec_by(size as i64);
                tracing::debug!(session = %session_id, removed = n, "removed the session's media");
            }
            Err(e) => {
                tracing::error!(session = %session_id, error = %e, "could not remove the session's media")
            }
        }
    }

    async fn existing(&self, session_id: &str, media_id: &str) -> Result<MediaRecord, MediaError> {
        self.record(session_id, media_id)
            .await?
            .ok_or_else(|| MediaError::NotFound {
                session_id: session_id.to_owned(),
                media_id: media_id.to_owned(),
            })
    }

    async fn record(
        &self,
        session_id: &str,
        media_id: &str,
    ) -> Result<Option<MediaRecord>, MediaError> {
        let store = self.inner.store.clone();
        let (s, m) = (session_id.to_owned(), media_id.to_owned());
        tokio::task::spawn_blocking(move || store.media(&s, &m))
            .await
            .map_err(|e| MediaError::Internal(e.to_string()))?
            .map_err(|e| MediaError::Internal(e.to_string()))
    }

    /// Writes a record; `false` when its session is gone, an error when the
    /// write failed.
    async fn try_save(&self, record: &MediaRecord) -> Result<bool, MediaError> {
        let store = self.inner.store.clone();
        let r = record.clone();
        match tokio::task::spawn_blocking(move || store.put_media(&r)).await {
            Ok(Ok(saved)) => Ok(saved),
            Ok(Err(e)) => {
                tracing::error!(session = %record.session_id, media = %record.id, error = %e, "could not store a media record");
                Err(MediaError::Record(e))
            }
            Err(e) => Err(MediaError::Internal(format!(
                "storing a media record panicked: {e}"
            ))),
        }
    }

    /// Refuses a new upload while the media directory's filesystem has
    /// less than `min_free` bytes free.
    pub fn check_free_space(&self, min_free: u64) -> Result<(), MediaError> {
        Ok(self.inner.blobs.check_free_space(min_free)?)
    }

    /// Bytes free on a local media directory's filesystem.
    pub fn free_bytes(&self) -> Option<u64> {
        self.inner.blobs.free_bytes()
    }

    /// Writes a record; `false` when its session is gone (or the write failed).
    async fn save(&self, record: &MediaRecord) -> bool {
        match self.try_save(record).await {
            Ok(saved) => saved,
            Err(e) => {
                tracing::error!(error = %e, "a media record was not stored");
                false
            }
        }
    }

    /// Downloads `record` unless another caller is already at it, in which
    /// case this one waits and answers what that download gave. At most
    /// the configured number of downloads run at once, gateway-wide.
    async fn download_once(
        &self,
        record: MediaRecord,
        client: Option<Arc<dyn NetworkSession>>,
    ) -> Result<MediaRecord, MediaError> {
        let key = (record.session_id.clone(), record.id.clone());
        let lock = self
            .inner
            .downloading
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        let result = {
            let _one = lock.lock().await;
            // Someone may have finished it while this one waited.
            match self.record(&key.0, &key.1).await {
                Ok(Some(r)) if r.state == MediaState::Stored => Ok(r),
                _ => {
                    let _permit = self.inner.permits.acquire().await;
                    self.download(record, client.as_deref()).await
                }
            }
        };
        let mut map = self
            .inner
            .downloading
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if Arc::strong_count(&lock) <= 2 {
            map.remove(&key);
        }
        result
    }
}

/// Bytes of the stored media among `records`.
fn stored_bytes(records: &[MediaRecord]) -> u64 {
    records
        .iter()
        .filter(|r| r.state == MediaState::Stored)
        .filter_map(|r| r.file_length)
        .sum()
}
