//! Inbound messages: the envelope fields (ids, sender, chat, lid/phone,
//! offline) from the crate's `MessageInfo`; the content is read by
//! `message_content.rs`, and what a message is (content, revoke, vote, …) is
//! told by `protocol.rs`. Also undecryptable messages.

use serde_json::json;
use whatsapp_rust::types::events::{
    BatchOrigin, InboundMessage as WaInbound, MessageBatch, UndecryptableMessage,
};
use whatsapp_rust::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::waproto::whatsapp as wa;

use super::protocol::{self, MessageItem};
use super::{jid_user, message_content, other, user_jid};
use crate::domain::event::EventName;
use crate::{InboundMessage, NetworkEvent};

/// Each message of a batch, classified ([`protocol::classify`]). Messages of
/// an offline drain, or flagged offline by the server, carry `offline`.
pub fn batch(b: &MessageBatch) -> Vec<MessageItem> {
    items(&b.messages, b.origin == BatchOrigin::OfflineDrain)
}

/// Each of `messages`, classified.
pub fn items(messages: &[WaInbound], drained: bool) -> Vec<MessageItem> {
    messages
        .iter()
        .map(|m| protocol::classify(&m.message, &m.info, drained))
        .collect()
}

/// The sender's phone digits when the network addressed the sender by `@lid`
/// and supplied the phone JID beside it.
pub fn sender_phone(source: &MessageSource) -> Option<String> {
    match &source.sender_alt {
        Some(alt) if source.sender.is_lid() && alt.is_pn() => Some(jid_user(alt)),
        _ => None,
    }
}

/// The inbound message for one decrypted message.
pub fn inbound(message: &wa::Message, info: &MessageInfo, drained: bool) -> InboundMessage {
    let source = &info.source;
    let sender = user_jid(&source.sender);
    let mut m = InboundMessage {
        message_id: info.id.clone(),
        from: sender.clone(),
        from_phone: sender_phone(source),
        chat: user_jid(&source.chat),
        participant: sender,
        is_from_me: source.is_from_me,
        push_name: info.push_name.clone(),
        timestamp: info.timestamp.timestamp(),
        offline: drained || info.is_offline,
        ..InboundMessage::default()
    };
    message_content::fill(&mut m, message);
    m
}

/// A message that could not be decrypted (the phone may resend it).
pub fn undecryptable(e: &UndecryptableMessage) -> NetworkEvent {
    let source = &e.info.source;
    other(
        EventName::UndecryptableMessage,
        json!({
            "chat": user_jid(&source.chat),
            "sender": user_jid(&source.sender),
            "message_id": e.info.id,
            "is_unavailable": e.is_unavailable,
            "unavailable_type": e.unavailable_type.as_str(),
            "decrypt_fail_mode": e.decrypt_fail_mode.as_str(),
            "timestamp": e.info.timestamp.timestamp(),
        }),
    )
}
