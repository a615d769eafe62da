//! [`WaStore`], the crate's storage backend for one session, and the
//! key-value helpers its trait implementations share.
//!
//! Every trait method runs one redb transaction on a blocking thread, so the
//! client's async tasks never wait on the disk. Keys: strings as their UTF-8
//! bytes, numeric ids big-endian (so ranges are numeric order), composite keys
//! joined by a NUL byte (`\0` never appears in a JID, id or collection name).

use std::sync::Arc;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use whatsapp_rust::wacore::store::error::{Result as WaResult, StoreError as WaError};

use super::KvTable;
use crate::{Store, StoreError, StoreResult};

/// The storage backend of one whatsapp session: the crate's `Backend` on the
/// gateway's redb file, scoped to the session's id.
#[derive(Clone)]
pub struct WaStore {
    pub(super) store: Store,
    pub(super) session: Arc<str>,
    /// How often each collection's version was written through this
    /// backend (and its clones).
    pub(super) versions_written: Arc<super::VersionWrites>,
}

impl std::fmt::Debug for WaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaStore")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl WaStore {
    /// The backend of session `session_id` in `store`.
    pub fn new(store: Store, session_id: &str) -> Self {
        Self {
            store,
            session: Arc::from(session_id),
            versions_written: Arc::default(),
        }
    }

    /// The count of version writes this backend made, by collection: the
    /// crate persists a collection's version at the end of every fetch it
    /// applied, changed or not, and never after one that failed, so a write
    /// is how a caller outside the crate learns that a sync it asked for
    /// went through.
    pub fn versions_written(&self) -> Arc<super::VersionWrites> {
        self.versions_written.clone()
    }

    /// The session this backend belongs to.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// Runs `f` with a read transaction on a blocking thread.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&ReadTransaction, &str) -> StoreResult<T> + Send + 'static,
    ) -> WaResult<T> {
        let (store, sid) = (self.store.clone(), self.session.clone());
        blocking(move || store.read(|tx| f(tx, &sid))).await
    }

    /// Runs `f` in one write transaction on a blocking thread.
    pub(super) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&WriteTransaction, &str) -> StoreResult<T> + Send + 'static,
    ) -> WaResult<T> {
        let (store, sid) = (self.store.clone(), self.session.clone());
        blocking(move || store.write(|tx| f(tx, &sid))).await
    }

    /// One value of `table`.
    pub(super) async fn get(
        &self,
        table: KvTable,
        kind: &'static str,
        key: Vec<u8>,
    ) -> WaResult<Option<Vec<u8>>> {
        self.read(move |tx, sid| get(&tx.open_table(table)?, sid, kind, &key))
            .await
    }

    /// Inserts or replaces one value of `table`.
    pub(super) async fn put(
        &self,
        table: KvTable,
        kind: &'static str,
        key: Vec<u8>,
        value: Vec<u8>,
    ) -> WaResult<()> {
        self.write(move |tx, sid| {
            tx.open_table(table)?
                .insert((sid, kind, key.as_slice()), value.as_slice())?;
            Ok(())
        })
        .await
    }

    /// Removes one value of `table` (nothing when absent).
    pub(super) async fn delete(
        &self,
        table: KvTable,
        kind: &'static str,
        key: Vec<u8>,
    ) -> WaResult<()> {
        self.write(move |tx, sid| {
            tx.open_table(table)?.remove((sid, kind, key.as_slice()))?;
            Ok(())
        })
        .await
    }

    /// Every `(key, value)` of `kind` whose key starts with `prefix`, in key order.
    pub(super) async fn scan(
        &self,
        table: KvTable,
        kind: &'static str,
        prefix: Vec<u8>,
    ) -> WaResult<Vec<(Vec<u8>, Vec<u8>)>> {
        self.read(move |tx, sid| scan(&tx.open_table(table)?, sid, kind, &prefix))
            .await
    }
}

/// Runs a store call on tokio's blocking pool and maps its error to the crate's.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> StoreResult<T> + Send + 'static,
) -> WaResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| WaError::Database(Box::new(e)))?
        .map_err(to_wa)
}

/// The crate's error for a store failure.
pub(super) fn to_wa(e: StoreError) -> WaError {
    match e {
        StoreError::Corrupt(e) => WaError::Serialization(Box::new(e)),
        other => WaError::Database(Box::new(other)),
    }
}

/// One value of a key-value table.
pub(super) fn get<T>(t: &T, sid: &str, kind: &str, key: &[u8]) -> StoreResult<Option<Vec<u8>>>
where
    T: ReadableTable<(&'static str, &'static str, &'static [u8]), &'static [u8]>,
{
    Ok(t.get((sid, kind, key))?.map(|v| v.value().to_vec()))
}

/// Every `(key, value)` of `kind` in a key-value table whose key starts with `prefix`.
pub(super) fn scan<T>(
    t: &T,
    sid: &str,
    kind: &str,
    prefix: &[u8],
) -> StoreResult<Vec<(Vec<u8>, Vec<u8>)>>
where
    T: ReadableTable<(&'static str, &'static str, &'static [u8]), &'static [u8]>,
{
    let mut out = Vec::new();
    for row in t.range((sid, kind, prefix)..)? {
        let (k, v) = row?;
        let (s, kd, key) = k.value();
        if s != sid || kd != kind || !key.starts_with(prefix) {
            break;
        }
        out.push((key.to_vec(), v.value().to_vec()));
    }
    Ok(out)
}

/// Joins the parts of a composite key with NUL bytes.
pub(super) fn join(parts: &[&str]) -> Vec<u8> {
    parts.join("\0").into_bytes()
}

/// A numeric id as a key (big-endian, so key order is numeric order).
pub(super) fn id_key(id: u32) -> Vec<u8> {
    id.to_be_bytes().to_vec()
}

/// The numeric id of a key written by [`id_key`].
pub(super) fn key_id(key: &[u8]) -> WaResult<u32> {
    <[u8; 4]>::try_from(key)
        .map(u32::from_be_bytes)
        .map_err(|_| WaError::Validation(format!("stored id key has {} bytes", key.len())))
}

/// A stored string key as text.
pub(super) fn key_text(key: Vec<u8>) -> WaResult<String> {
    String::from_utf8(key).map_err(|e| WaError::Serialization(Box::new(e)))
}

/// Encodes a document value.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> WaResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| WaError::Serialization(Box::new(e)))
}

/// Decodes a document value.
pub(super) fn from_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> WaResult<T> {
    serde_json::from_slice(bytes).map_err(|e| WaError::Serialization(Box::new(e)))
}

/// Unix seconds now.
pub(super) fn now_secs() -> i64 {
    crate::domain::time::unix_now()
}

/// An `i64` followed by bytes (timestamped values).
pub(super) fn stamp(ts: i64, bytes: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + bytes.len());
    v.extend_from_slice(&ts.to_be_bytes());
    v.extend_from_slice(bytes);
    v
}

/// Splits a value written by [`stamp`].
pub(super) fn unstamp(v: &[u8]) -> WaResult<(i64, &[u8])> {
    if v.len() < 8 {
        return Err(WaError::Validation(
            "stored timestamped value is too short".into(),
        ));
    }
    let (ts, rest) = v.split_at(8);
    let ts = i64::from_be_bytes(ts.try_into().unwrap_or([0; 8]));
    Ok((ts, rest))
}
