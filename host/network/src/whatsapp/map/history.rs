//! History sync chunks as `history_sync` progress events: the chunk's type,
//! order and progress, and how many conversations and messages it holds.
//! The payload itself is never forwarded (a chunk can hold megabytes of
//! old messages). Counting inflates the chunk once and walks the
//! conversations' wire encoding without decoding any message.

use serde_json::json;
use whatsapp_rust::buffa::encoding::{Tag, WireType, skip_field};
use whatsapp_rust::types::events::LazyHistorySync;

use super::other;
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// The field number of `messages` in the `Conversation` message.
const CONVERSATION_MESSAGES: u32 = 2;

/// A history sync chunk arrived.
pub fn history_sync(e: &LazyHistorySync) -> NetworkEvent {
    let (conversations, messages) = match counts(e) {
        Some((c, m)) => (Some(c), Some(m)),
        None => (None, None),
    };
    other(
        EventName::HistorySync,
        json!({
            "sync_type": sync_type_name(e.sync_type()),
            "chunk_order": e.chunk_order(),
            "progress": e.progress(),
            "conversations": conversations,
            "messages": messages,
            "request_id": e.peer_data_request_session_id(),
        }),
    )
}

/// The chunk's `HistorySyncType` in snake_case.
pub fn sync_type_name(t: i32) -> &'static str {
    match t {
        0 => "initial_bootstrap",
        1 => "initial_status_v3",
        2 => "full",
        3 => "recent",
        4 => "push_name",
        5 => "non_blocking_data",
        6 => "on_demand",
        7 => "no_history",
        8 => "message_access_status",
        _ => "unknown",
    }
}

/// Conversations and messages in the chunk; `None` when the chunk does not
/// inflate or parse (the event still reports the chunk's progress).
pub fn counts(e: &LazyHistorySync) -> Option<(u64, u64)> {
    let mut stream = e.stream();
    let (mut conversations, mut messages) = (0, 0);
    while let Some(conversation) = stream.next_conversation_bytes().ok()? {
        conversations += 1;
        messages += message_count(conversation)?;
    }
    Some((conversations, messages))
}

/// The `messages` entries of one encoded `Conversation`, counted from its
/// field tags; `None` when the encoding is broken.
pub fn message_count(mut conversation: &[u8]) -> Option<u64> {
    let mut n = 0;
    while !conversation.is_empty() {
        let tag = Tag::decode(&mut conversation).ok()?;
        if tag.field_number() == CONVERSATION_MESSAGES
            && tag.wire_type() == WireType::LengthDelimited
        {
            n += 1;
        }
        skip_field(tag, &mut conversation).ok()?;
    }
    Some(n)
}
