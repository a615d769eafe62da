//! Receipts, presence and chat presence (typing).

use serde_json::json;
use whatsapp_rust::types::events::{ChatPresenceUpdate, PresenceUpdate, Receipt};
use whatsapp_rust::types::presence::{ChatPresence, ChatPresenceMedia, ReceiptType};

use super::{other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// A receipt a user of the gateway acts on: delivered, read, played; `sent`
/// (WhatsApp downgraded a delivery: the recipient's device cannot take the
/// message), `server_error` (the server could not deliver it), and
/// `read_self`/`played_self` (the account read or played it on another of
/// its devices). `offline` says it was drained from the server's queue on
/// reconnect. Retries, history-sync, peer and call receipts are the crate's
/// own business and map to nothing.
pub fn receipt(e: &Receipt) -> Option<NetworkEvent> {
    let kind = match e.r#type {
        ReceiptType::Delivered => "delivered",
        ReceiptType::Read => "read",
        ReceiptType::Played => "played",
        ReceiptType::Sent => "sent",
        ReceiptType::ServerError => "server_error",
        ReceiptType::ReadSelf => "read_self",
        ReceiptType::PlayedSelf => "played_self",
        _ => return None,
    };
    Some(other(
        EventName::Receipt,
        json!({
            "message_ids": e.message_ids,
            "chat": user_jid(&e.source.chat),
            "sender": user_jid(&e.source.sender),
            "type": kind,
            "timestamp": e.timestamp.timestamp(),
            "offline": e.offline,
        }),
    ))
}

/// A contact came online or went offline.
pub fn presence(e: &PresenceUpdate) -> NetworkEvent {
    other(
        EventName::Presence,
        json!({
            "jid": user_jid(&e.from),
            "available": !e.unavailable,
            "last_seen": e.last_seen.map(|t| t.timestamp()),
        }),
    )
}

/// Someone is typing (or recording) in a chat, or stopped.
pub fn chat_presence(e: &ChatPresenceUpdate) -> NetworkEvent {
    let state = match e.state {
        ChatPresence::Composing => "composing",
        ChatPresence::Paused => "paused",
    };
    let media = match e.media {
        ChatPresenceMedia::Audio => "audio",
        _ => "text",
    };
    other(
        EventName::ChatPresence,
        json!({
            "chat": user_jid(&e.source.chat),
            "sender": user_jid(&e.source.sender),
            "state": state,
            "media": media,
        }),
    )
}
