//! How objects are named: a session's media under `media/<session>/`, so a
//! deleted session's media is one prefix; the simulated network's copies
//! under `sim/`, apart from anything a retention sweep or a session
//! deletion removes.

use object_store::path::Path;

/// The key of a session's media.
pub fn media_key(session_id: &str, media_id: &str) -> Path {
    Path::from_iter(["media", session_id, media_id])
}

/// The prefix every media of a session lies under.
pub fn session_prefix(session_id: &str) -> Path {
    Path::from_iter(["media", session_id])
}

/// The key of a blob the simulated network holds (what its "servers" keep).
pub fn sim_key(blob_id: &str) -> Path {
    Path::from_iter(["sim", blob_id])
}
