//! What a media operation can fail with, in terms the API maps to answers.

use crate::domain::media::MediaState;
use crate::media_store::{MediaStoreError, PutError};

/// A media operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// No such media in the session.
    #[error("session `{session_id}` has no media `{media_id}`")]
    NotFound {
        /// The session.
        session_id: String,
        /// The media id asked for.
        media_id: String,
    },
    /// The media's bytes are not stored (pending or failed).
    #[error("media `{media_id}` is {}{}", state_name(*.state), .reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    NotStored {
        /// The media id.
        media_id: String,
        /// Its state.
        state: MediaState,
        /// Why its download failed.
        reason: Option<String>,
    },
    /// The session has no live connection, so its media cannot be
    /// downloaded now (the media keeps its state).
    #[error(
        "the session is not connected, so the media cannot be downloaded now; connect it and try again"
    )]
    NotConnected,
    /// An upload with no bytes.
    #[error("the upload is empty; media needs at least one byte")]
    EmptyUpload,
    /// An upload would take its session past its upload quota; nothing of
    /// it is kept.
    #[error(
        "session `{session_id}` holds {used} bytes in uploads, and this upload would take it past its upload quota of {limit} bytes (--media-max-upload-bytes-per-session); delete uploads it no longer needs (DELETE /api/v1/sessions/{session_id}/media/{{media_id}}) or wait for the retention sweep"
    )]
    QuotaExceeded {
        /// The session.
        session_id: String,
        /// The quota, in bytes.
        limit: u64,
        /// What the session holds in uploads (stored and being written),
        /// in bytes, not counting this upload.
        used: u64,
    },
    /// An upload has nothing to download again.
    #[error("media `{0}` is an upload; there is nothing to download again")]
    NotDownloadable(String),
    /// The media store failed or refused a read.
    #[error(transparent)]
    Store(#[from] MediaStoreError),
    /// An upload could not be stored.
    #[error(transparent)]
    Upload(#[from] PutError),
    /// The media's record could not be written (a storage fault, whose
    /// kind the API answers as `507` or `503`, or another store failure).
    #[error(transparent)]
    Record(#[from] crate::store::StoreError),
    /// The gateway failed.
    #[error("{0}")]
    Internal(String),
}

fn state_name(state: MediaState) -> &'static str {
    match state {
        MediaState::Stored => "stored",
        MediaState::Pending => "not downloaded yet",
        MediaState::Failed => "not available: its download failed",
    }
}
