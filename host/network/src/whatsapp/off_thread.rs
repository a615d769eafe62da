//! Store calls from the backend's async code: redb transactions block, so
//! they run on the blocking pool, and whatever fails (the store, or the
//! blocking task) comes back as one message.

use crate::store::{Store, StoreResult};

/// Runs `f` with the store and the session id on the blocking pool.
pub(super) async fn with_store<T, F>(store: &Store, session_id: &str, f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(&Store, &str) -> StoreResult<T> + Send + 'static,
{
    let (store, id) = (store.clone(), session_id.to_owned());
    match tokio::task::spawn_blocking(move || f(&store, &id)).await {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}
