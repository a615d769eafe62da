//! What one decrypted message is to the gateway: a message for intake (user
//! content, and the revokes, edits and pins that name an earlier message), a poll
//! vote to open with the poll's secret, a chat setting, or protocol traffic
//! between the account's own devices that the crate handles itself (key
//! shares, history-sync notices, peer requests), which is no message at all.

use serde_json::json;
use wa::message::protocol_message::Type as Protocol;
use whatsapp_rust::types::message::MessageInfo;
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::whatsapp as wa;

use super::{message, other, user_jid};
use crate::domain::event::EventName;
use crate::{InboundMessage, NetworkEvent};

/// One decrypted message, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageItem {
    /// A message event (user content, a revoke, an edit or a pin).
    Message(Box<InboundMessage>),
    /// A vote on a poll, still encrypted.
    PollVote(PollVote),
    /// Another event the message stands for (a chat's disappearing timer).
    Event(NetworkEvent),
    /// Traffic between the account's devices, handled by the crate: the kind,
    /// for the unmapped-event count.
    Internal(&'static str),
}

/// An encrypted poll vote and what opening it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PollVote {
    /// The vote message's own id.
    pub message_id: String,
    /// The chat, as the API prints it.
    pub chat: String,
    /// The voter (non-AD JID).
    pub voter: String,
    /// The poll's message id.
    pub poll_id: String,
    /// The encrypted selection.
    pub enc_payload: Vec<u8>,
    /// Its GCM IV.
    pub enc_iv: Vec<u8>,
    /// Unix seconds.
    pub timestamp: i64,
}

/// Classifies one decrypted message.
pub fn classify(msg: &wa::Message, info: &MessageInfo, drained: bool) -> MessageItem {
    let base = msg.get_base_message();
    if let Some(p) = base.protocol_message.as_option() {
        return protocol(p, msg, info, drained);
    }
    if let Some(u) = base.poll_update_message.as_option() {
        return poll_vote(u, info);
    }
    if let Some(p) = base.pin_in_chat_message.as_option() {
        return MessageItem::Message(Box::new(pin(p, msg, info, drained)));
    }
    if !has_content(base) {
        // A sender-key distribution or a secret with nothing to show.
        return MessageItem::Internal("message_without_content");
    }
    MessageItem::Message(Box::new(message::inbound(msg, info, drained)))
}

/// Whether a message carries anything but the keys and metadata that ride
/// along with content.
fn has_content(b: &wa::Message) -> bool {
    let bare = wa::Message {
        sender_key_distribution_message: b.sender_key_distribution_message.clone(),
        message_context_info: b.message_context_info.clone(),
        ..Default::default()
    };
    *b != bare
}

/// A message pinned for everyone in its chat (`pin`) or unpinned
/// (`unpin`); `quoted_message_id` names it.
fn pin(
    p: &wa::message::PinInChatMessage,
    msg: &wa::Message,
    info: &MessageInfo,
    drained: bool,
) -> InboundMessage {
    use wa::message::pin_in_chat_message::Type as Pin;
    let mut m = message::inbound(msg, info, drained);
    m.message_type = match p.r#type {
        Some(Pin::UNPIN_FOR_ALL) => "unpin",
        _ => "pin",
    }
    .into();
    let target = p.key.as_option();
    m.quoted_message_id = target.and_then(|k| k.id.clone());
    m.quoted_sender_jid = target.and_then(|k| k.participant.clone());
    m
}

fn protocol(
    p: &wa::message::ProtocolMessage,
    msg: &wa::Message,
    info: &MessageInfo,
    drained: bool,
) -> MessageItem {
    let target = p.key.as_option();
    match p.r#type {
        Some(Protocol::REVOKE) => {
            let mut m = message::inbound(msg, info, drained);
            m.message_type = "revoke".into();
            m.quoted_message_id = target.and_then(|k| k.id.clone());
            m.quoted_sender_jid = target.and_then(|k| k.participant.clone());
            MessageItem::Message(Box::new(m))
        }
        Some(Protocol::MESSAGE_EDIT) => {
            let mut m = message::inbound(msg, info, drained);
            let mut edited = InboundMessage::default();
            if let Some(new) = p.edited_message.as_option() {
                super::message_content::fill(&mut edited, new);
            }
            m.message_type = "edit".into();
            m.text = edited.text;
            m.caption = edited.caption;
            m.quoted_message_id = target.and_then(|k| k.id.clone());
            m.quoted_sender_jid = target.and_then(|k| k.participant.clone());
            MessageItem::Message(Box::new(m))
        }
        Some(Protocol::EPHEMERAL_SETTING) => MessageItem::Event(other(
            EventName::EphemeralSetting,
            json!({
                "chat": user_jid(&info.source.chat),
                "sender": user_jid(&info.source.sender),
                "expiration_seconds": p.ephemeral_expiration.unwrap_or(0),
                "timestamp": info.timestamp.timestamp(),
            }),
        )),
        Some(Protocol::HISTORY_SYNC_NOTIFICATION) => {
            MessageItem::Internal("protocol_history_sync_notification")
        }
        Some(Protocol::APP_STATE_SYNC_KEY_SHARE) => {
            MessageItem::Internal("protocol_app_state_sync_key_share")
        }
        Some(Protocol::APP_STATE_SYNC_KEY_REQUEST) => {
            MessageItem::Internal("protocol_app_state_sync_key_request")
        }
        Some(Protocol::PEER_DATA_OPERATION_REQUEST_MESSAGE)
        | Some(Protocol::PEER_DATA_OPERATION_REQUEST_RESPONSE_MESSAGE) => {
            MessageItem::Internal("protocol_peer_data_operation")
        }
        Some(Protocol::LID_MIGRATION_MAPPING_SYNC) => {
            MessageItem::Internal("protocol_lid_migration_mapping_sync")
        }
        Some(Protocol::INITIAL_SECURITY_NOTIFICATION_SETTING_SYNC) => {
            MessageItem::Internal("protocol_security_notification_setting")
        }
        _ => MessageItem::Internal("protocol_other"),
    }
}

fn poll_vote(u: &wa::message::PollUpdateMessage, info: &MessageInfo) -> MessageItem {
    let vote = u.vote.as_option();
    MessageItem::PollVote(PollVote {
        message_id: info.id.clone(),
        chat: user_jid(&info.source.chat),
        voter: user_jid(&info.source.sender),
        poll_id: u
            .poll_creation_message_key
            .as_option()
            .and_then(|k| k.id.clone())
            .unwrap_or_default(),
        enc_payload: vote.and_then(|v| v.enc_payload.clone()).unwrap_or_default(),
        enc_iv: vote.and_then(|v| v.enc_iv.clone()).unwrap_or_default(),
        timestamp: info.timestamp.timestamp(),
    })
}

/// The poll's question, option names and message secret, from its stored
/// message (`None` when the message is no poll or carries no secret).
pub fn poll_of(msg: &wa::Message) -> Option<(String, Vec<String>, Vec<u8>)> {
    let secret = msg
        .message_context_info
        .as_option()
        .and_then(|c| c.message_secret.clone())?;
    let b = msg.get_base_message();
    let poll = b
        .poll_creation_message
        .as_option()
        .or(b.poll_creation_message_v2.as_option())
        .or(b.poll_creation_message_v3.as_option())?;
    let options = poll
        .options
        .iter()
        .map(|o| o.option_name.clone().unwrap_or_default())
        .collect();
    Some((poll.name.clone().unwrap_or_default(), options, secret))
}

/// The names of the options whose hashes were selected, in the poll's order.
pub fn selected_names(options: &[String], hashes: &[Vec<u8>]) -> Vec<String> {
    options
        .iter()
        .filter(|name| {
            let h = whatsapp_rust::wacore::poll::compute_option_hash(name);
            hashes.iter().any(|s| s.as_slice() == h)
        })
        .cloned()
        .collect()
}

/// The `poll_vote` event: the selection when the vote could be opened (empty
/// when the voter withdrew their vote), or none and `error` saying why not.
pub fn poll_vote_event(vote: &PollVote, selected: Result<Vec<String>, String>) -> NetworkEvent {
    let mut data = json!({
        "message_id": vote.message_id,
        "chat": vote.chat,
        "voter": vote.voter,
        "poll_message_id": vote.poll_id,
        "timestamp": vote.timestamp,
    });
    match selected {
        Ok(names) => data["selected_options"] = json!(names),
        Err(why) => {
            data["selected_options"] = json!([]);
            data["error"] = json!(why);
        }
    }
    other(EventName::PollVote, data)
}
