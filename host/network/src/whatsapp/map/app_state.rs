//! App-state chat events: pin, mute, archive and mark-as-read. (The crate
//! surfaces no call-log mutations, so `call_log_sync` is not produced; see
//! docs/whatsapp.md.)

use serde_json::json;
use whatsapp_rust::types::events::{ArchiveUpdate, MarkChatAsReadUpdate, MuteUpdate, PinUpdate};

use super::{other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// A chat was pinned or unpinned.
pub fn pin(e: &PinUpdate) -> NetworkEvent {
    other(
        EventName::PinUpdate,
        json!({
            "chat_jid": user_jid(&e.jid),
            "pinned": e.action.pinned.unwrap_or(false),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A chat was muted (until `mute_end_timestamp`, `-1` meaning for ever) or unmuted.
pub fn mute(e: &MuteUpdate) -> NetworkEvent {
    let muted = e.action.muted.unwrap_or(false);
    other(
        EventName::MuteUpdate,
        json!({
            "chat_jid": user_jid(&e.jid),
            "muted": muted,
            "mute_end_timestamp": if muted { e.action.mute_end_timestamp } else { None },
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A chat was archived or unarchived.
pub fn archive(e: &ArchiveUpdate) -> NetworkEvent {
    other(
        EventName::ArchiveUpdate,
        json!({
            "chat_jid": user_jid(&e.jid),
            "archived": e.action.archived.unwrap_or(false),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A chat was marked read or unread.
pub fn mark_read(e: &MarkChatAsReadUpdate) -> NetworkEvent {
    other(
        EventName::MarkChatAsRead,
        json!({
            "chat_jid": user_jid(&e.jid),
            "read": e.action.read.unwrap_or(false),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}
