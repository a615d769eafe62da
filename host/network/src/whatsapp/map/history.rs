//! History sync chunks: a `history_sync` progress event (the chunk's type,
//! order and progress, and how many conversations and messages it holds)
//! and the chunk's messages as rows to keep, so a reply can quote a message
//! from before the link, a forward can carry it and a vote on an old poll
//! opens. The payload itself is never forwarded (a chunk can hold megabytes
//! of old messages). Reading inflates the chunk once, a conversation at a
//! time; it is CPU work for a blocking thread, never an async worker.

use serde_json::json;
use whatsapp_rust::Jid;
use whatsapp_rust::buffa::encoding::{Tag, WireType, skip_field};
use whatsapp_rust::types::events::LazyHistorySync;
use whatsapp_rust::wacore_binary::jid::JidExt;
use whatsapp_rust::waproto::buffa::Message as _;
use whatsapp_rust::waproto::whatsapp as wa;

use super::other;
use crate::NetworkEvent;
use crate::domain::event::EventName;
use crate::store::whatsapp::WaMessageRow;

/// What a chunk holds for the gateway.
#[derive(Debug, Default)]
pub struct Chunk {
    /// Conversations and messages in it; `None` when it does not inflate or parse.
    pub counts: Option<(u64, u64)>,
    /// Its messages with content, as kept rows.
    pub rows: Vec<WaMessageRow>,
}

/// The account's own JIDs (non-AD), the author of its own messages in history.
#[derive(Debug, Default, Clone)]
pub struct Own {
    /// Its phone JID.
    pub pn: Option<String>,
    /// Its LID.
    pub lid: Option<String>,
}

/// Reads a chunk: its counts, and its messages as rows.
pub fn read(e: &LazyHistorySync, own: &Own) -> Chunk {
    let mut stream = e.stream();
    let (mut conversations, mut messages) = (0, 0);
    let mut rows = Vec::new();
    loop {
        let bytes = match stream.next_conversation_bytes() {
            Ok(Some(bytes)) => bytes,
            Ok(None) => break,
            Err(_) => return Chunk { counts: None, rows },
        };
        conversations += 1;
        let Some(n) = message_count(bytes) else {
            return Chunk { counts: None, rows };
        };
        messages += n;
        if let Ok(conversation) = wa::Conversation::decode_from_slice(bytes) {
            rows.extend(conversation_rows(&conversation, own));
        }
    }
    Chunk {
        counts: Some((conversations, messages)),
        rows,
    }
}

/// The rows of a conversation's messages that have content (protocol
/// messages and reactions are not quoted), each with its author: the
/// account for its own, the participant in a group, the chat elsewhere.
fn conversation_rows(conversation: &wa::Conversation, own: &Own) -> Vec<WaMessageRow> {
    let chat_jid: Option<Jid> = conversation.id.parse().ok();
    let chat = chat_jid
        .as_ref()
        .map_or_else(|| conversation.id.clone(), Jid::to_non_ad_string);
    let group = chat_jid.as_ref().is_some_and(|j| j.is_group());
    let lid_chat = chat_jid.as_ref().is_some_and(Jid::is_lid);
    let non_ad = |s: &str| {
        s.parse::<Jid>()
            .map_or_else(|_| s.to_owned(), |j| j.to_non_ad_string())
    };
    conversation
        .messages
        .iter()
        .filter_map(|h| {
            let info = h.message.as_option()?;
            let key = info.key.as_option()?;
            let message = info.message.as_option()?;
            if message.protocol_message.is_set() || message.reaction_message.is_set() {
                return None;
            }
            let sender = if key.from_me == Some(true) {
                let (first, second) = if lid_chat {
                    (&own.lid, &own.pn)
                } else {
                    (&own.pn, &own.lid)
                };
                first.clone().or_else(|| second.clone())?
            } else if group {
                non_ad(key.participant.as_ref().or(info.participant.as_ref())?)
            } else {
                chat.clone()
            };
            Some(WaMessageRow {
                message_id: key.id.clone()?,
                chat: chat.clone(),
                sender,
                timestamp: info
                    .message_timestamp
                    .and_then(|t| i64::try_from(t).ok())
                    .unwrap_or(0),
                proto: message.encode_to_vec(),
            })
        })
        .collect()
}

/// The field number of `messages` in the `Conversation` message.
const CONVERSATION_MESSAGES: u32 = 2;

/// A history sync chunk arrived (counted here; the pump reads it with
/// [`read`] off the async workers and gives [`history_sync_event`] the counts).
pub fn history_sync(e: &LazyHistorySync) -> NetworkEvent {
    history_sync_event(e, counts(e))
}

/// The progress event of a chunk with these counts.
pub fn history_sync_event(e: &LazyHistorySync, counts: Option<(u64, u64)>) -> NetworkEvent {
    let (conversations, messages) = match counts {
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
