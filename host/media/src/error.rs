//! What can go wrong in the media store.

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
}

impl From<object_store::Error> for MediaStoreError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { path, .. } => MediaStoreError::NotFound(path),
            other => MediaStoreError::Backend(other.to_string()),
        }
    }
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
