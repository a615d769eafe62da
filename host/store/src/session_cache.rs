//! Session records, cached in memory: every request on a session reads its
//! record, and a read transaction plus a JSON decode per request cost a
//! read endpoint a large share of its time. The cache is filled on first
//! read and kept exact by the only code that writes session records
//! (`sessions.rs`): each such write holds [`SessionCache::writes`] from
//! before its transaction until the cache shows its outcome, and a read
//! that misses fills the cache under the same lock, so no reader can put an
//! older record back over a newer one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use crate::domain::session::SessionRecord;

/// Records by session id, and the lock that orders writes and fills.
#[derive(Default)]
pub(crate) struct SessionCache {
    records: RwLock<HashMap<String, Arc<SessionRecord>>>,
    writes: Mutex<()>,
}

impl SessionCache {
    /// The cached record, if any.
    pub fn get(&self, id: &str) -> Option<Arc<SessionRecord>> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Takes the write lock: held across a session write and its [`put`](Self::put)
    /// or [`remove`](Self::remove), and across a fill after a miss.
    pub fn lock(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records what is now committed for a session (call with the lock held).
    pub fn put(&self, record: SessionRecord) {
        self.records
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(record.id.clone(), Arc::new(record));
    }

    /// Forgets a deleted session (call with the lock held).
    pub fn remove(&self, id: &str) {
        self.records
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}
