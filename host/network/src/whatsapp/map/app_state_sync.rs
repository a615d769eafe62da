//! App-state sync that left collections unsynced (`app_state_sync_failed`).
//! The crate keeps the connection either way; a `fatal` collection is one
//! the server refused, so what it carries (contacts, pins, mutes, labels…)
//! stays stale until a later connection syncs it.

use serde_json::json;
use whatsapp_rust::types::events::AppStateSyncFailed;

use super::other;
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// A batched app-state sync left collections unsynced, named as on the wire
/// (`critical_block`, `regular_high`, …).
pub fn failed(e: &AppStateSyncFailed) -> NetworkEvent {
    other(
        EventName::AppStateSyncFailed,
        json!({
            "fatal": e.fatal,
            "retryable": e.retryable,
            "skipped": e.skipped,
            "connected": e.connected,
        }),
    )
}
