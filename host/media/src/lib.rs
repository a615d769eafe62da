//! The media store: where the bytes of media live (inbound media the gateway
//! downloaded, uploads a client sent for later sends, and the simulated
//! network's own copies), in a directory inside the data directory or in an
//! S3-compatible bucket. The records that describe media live in the redb
//! store; this crate holds only bytes, written and read as streams so that
//! no file is ever held whole in memory.

use switchboard_domain as domain;

mod config;
mod error;
mod keys;
mod store;

pub use config::{MediaStoreConfig, S3Config};
pub use error::{MediaStoreError, PutError};
pub use keys::{media_key, session_prefix, sim_key};
pub use store::{Blob, MediaStore, StoredObject, Written};

/// Keys of objects in the store (re-exported so callers need not name the
/// object store crate).
pub use object_store::path::Path as Key;
