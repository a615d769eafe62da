//! What can go wrong in the media store.

use crate::domain::storage_fault::StorageFault;

/// A read, delete, copy or listing that failed.
#[derive(Debug, thiserror::Error)]
pub enum MediaStoreError {
    /// No object under the key.
    #[error("no media stored under {0}")]
    NotFound(String),
    /// The range asked for lies outside the object.
    #[error("the range asked for is outside the media's {size} bytes")]
    RangeNotSatisfiable {
        /// The object's size.
        size: u64,
    },
    /// The store could not be opened (a bad directory, a bad S3 setting).
    #[error("the media store could not be opened: {0}")]
    Open(String),
    /// The backend failed.
    #[error("the media store failed: {0}")]
    Backend(String),
    /// The media directory's filesystem is full, or failed: nothing was
    /// kept. The kind says which (by type, for the API's `507` or `503`).
    #[error("the media store could not write: {1}")]
    Storage(StorageFault, String),
}

impl MediaStoreError {
    /// The storage fault this is, if it is one.
    pub fn fault(&self) -> Option<StorageFault> {
        match self {
            MediaStoreError::Storage(f, _) => Some(*f),
            _ => None,
        }
    }
}

impl From<object_store::Error> for MediaStoreError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { path, .. } => MediaStoreError::NotFound(path),
            other => match io_fault(&other) {
                Some(fault) => MediaStoreError::Storage(fault, other.to_string()),
                None => MediaStoreError::Backend(other.to_string()),
            },
        }
    }
}

/// The storage fault behind an error, found by walking its sources to the
/// filesystem's I/O error (the local backend wraps it).
fn io_fault(e: &(dyn std::error::Error + 'static)) -> Option<StorageFault> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return StorageFault::of_io(io);
        }
        next = e.source();
    }
    None
}

/// A write that failed; nothing is left under the key.
#[derive(Debug, thiserror::Error)]
pub enum PutError {
    /// The body is longer than the limit; reading stopped there.
    #[error("the body is larger than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The body could not be read to its end (the client or the network
    /// went away).
    #[error("the body could not be read: {0}")]
    Body(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] MediaStoreError),
}

impl From<object_store::Error> for PutError {
    fn from(e: object_store::Error) -> Self {
        PutError::Store(e.into())
    }
}
