//! Disappearing-messages timers: learned from what the network says of a
//! chat, kept per chat in the store (`Store::put_wa_chat_timers`), and put
//! on what the session sends there. A message sent into a disappearing chat
//! without the chat's timer never disappears, for the recipient too.
//!
//! A chat's timer is learned from every message received in it (their
//! `contextInfo.expiration`, which WhatsApp's clients set on every message
//! of a disappearing chat, including the account's own from its phone), a
//! change of it (a protocol message, `0` to turn it off) and, in a group,
//! the group's timer notification. A one-to-one chat has two addresses, its
//! phone number and its LID: the timer is kept under both when the message
//! names both, and a send looks under the other too, through the crate's
//! mapping, when the one it sends to has none.

use wa::message::protocol_message::Type as Protocol;
use whatsapp_rust::Client;
use whatsapp_rust::Jid as WaJid;
use whatsapp_rust::types::events::{GroupUpdate, InboundMessage as WaInbound};
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::wacore::stanza::groups::GroupNotificationAction;
use whatsapp_rust::wacore_binary::jid::JidExt;
use whatsapp_rust::waproto::whatsapp as wa;

use super::map::user_jid;
use super::off_thread::with_store;
use crate::store::Store;
use crate::store::whatsapp::ChatTimer;

/// The timer a message states for its chat, in seconds: a change of it
/// (`0`: turned off), or the `expiration` its content carries; `None` when
/// it says nothing of it.
pub fn stated(message: &wa::Message) -> Option<u32> {
    let base = message.get_base_message();
    if let Some(p) = base.protocol_message.as_option()
        && p.r#type == Some(Protocol::EPHEMERAL_SETTING)
    {
        return Some(p.ephemeral_expiration.unwrap_or(0));
    }
    base.get_ephemeral_expiration()
}

/// The chat timers a batch of received messages states, the newest word per
/// chat address (with when it was said, so the store keeps the newest).
pub fn learned(batch: &[WaInbound]) -> Vec<ChatTimer> {
    let mut timers: Vec<ChatTimer> = Vec::new();
    for m in batch {
        let Some(secs) = stated(&m.message) else {
            continue;
        };
        let source = &m.info.source;
        if !(source.chat.is_group() || source.chat.is_pn() || source.chat.is_lid()) {
            continue;
        }
        let mut chats = vec![user_jid(&source.chat)];
        let other = if source.is_from_me {
            source.recipient_alt.as_ref()
        } else {
            source.sender_alt.as_ref()
        };
        if !source.is_group
            && let Some(alt) = other.filter(|a| a.is_pn() || a.is_lid())
        {
            chats.push(user_jid(alt));
        }
        let at = m.info.timestamp.timestamp();
        for chat in chats {
            if timers.iter().any(|t| t.chat == chat && t.at > at) {
                continue;
            }
            timers.retain(|t| t.chat != chat);
            timers.push(ChatTimer { chat, secs, at });
        }
    }
    timers
}

/// The timer a group notification sets, if it is a timer change.
pub fn of_group_update(e: &GroupUpdate) -> Option<ChatTimer> {
    match &e.action {
        GroupNotificationAction::Ephemeral { expiration, .. } => Some(ChatTimer {
            chat: user_jid(&e.group_jid),
            secs: *expiration,
            at: e.timestamp.timestamp(),
        }),
        _ => None,
    }
}

/// Keeps `timers` (a failure is logged: the messages that stated them are
/// stored either way, and the next one states the timer again).
pub(super) async fn remember(store: &Store, session_id: &str, timers: Vec<ChatTimer>) {
    if timers.is_empty() {
        return;
    }
    let kept = with_store(store, session_id, move |s, id| {
        s.put_wa_chat_timers(id, &timers)
    })
    .await;
    if let Err(e) = kept {
        tracing::warn!(session = %session_id, error = %e, "could not keep a chat's disappearing-messages timer");
    }
}

/// The timer of the chat `to`, in seconds, under its own address or, for a
/// one-to-one chat, under its other one.
pub(super) async fn of_chat(
    client: &Client,
    store: &Store,
    session_id: &str,
    to: &WaJid,
) -> Option<u32> {
    let mut chats = vec![user_jid(to)];
    if (to.is_pn() || to.is_lid())
        && let Ok(Some(entry)) = client.get_lid_pn_entry(to).await
    {
        chats.push(if to.is_pn() {
            format!("{}@lid", entry.lid)
        } else {
            format!("{}@s.whatsapp.net", entry.phone_number)
        });
    }
    let found = with_store(store, session_id, move |s, id| {
        for chat in &chats {
            if let Some(secs) = s.wa_chat_timer(id, chat)? {
                return Ok(Some(secs));
            }
        }
        Ok(None)
    })
    .await;
    found.unwrap_or_else(|e| {
        tracing::warn!(session = %session_id, error = %e, "could not read a chat's disappearing-messages timer; sending without it");
        None
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use whatsapp_rust::types::message::{MessageInfo, MessageSource};
    use whatsapp_rust::waproto::buffa::MessageField;

    use super::*;

    const DAY: u32 = 86_400;

    fn with_timer(text: &str, secs: u32) -> wa::Message {
        let inner = wa::Message {
            extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
                text: Some(text.into()),
                context_info: MessageField::some(wa::ContextInfo {
                    expiration: Some(secs),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        // As a disappearing chat's messages arrive: wrapped.
        wa::Message {
            ephemeral_message: MessageField::some(wa::message::FutureProofMessage {
                message: MessageField::some(inner),
            }),
            ..Default::default()
        }
    }

    fn setting(secs: u32) -> wa::Message {
        wa::Message {
            protocol_message: MessageField::some(wa::message::ProtocolMessage {
                r#type: Some(Protocol::EPHEMERAL_SETTING),
                ephemeral_expiration: Some(secs),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn received(message: wa::Message, chat: &str, alt: Option<&str>, at: i64) -> WaInbound {
        let info = MessageInfo {
            source: MessageSource {
                chat: chat.parse().unwrap(),
                sender: chat.parse().unwrap(),
                is_group: chat.ends_with("@g.us"),
                sender_alt: alt.map(|a| a.parse().unwrap()),
                ..Default::default()
            },
            id: "3EB0TIMER".into(),
            timestamp: whatsapp_rust::chrono::DateTime::from_timestamp(at, 0).unwrap(),
            ..Default::default()
        };
        WaInbound::builder()
            .message(Arc::new(message))
            .info(Arc::new(info))
            .build()
    }

    #[test]
    fn a_message_states_its_chats_timer_a_change_of_it_even_to_off_and_a_plain_one_nothing() {
        assert_eq!(stated(&with_timer("hi", DAY)), Some(DAY));
        assert_eq!(stated(&setting(7 * DAY)), Some(7 * DAY));
        assert_eq!(stated(&setting(0)), Some(0), "turned off");
        let plain = wa::Message {
            conversation: Some("hi".into()),
            ..Default::default()
        };
        assert_eq!(stated(&plain), None);
    }

    #[test]
    fn a_batch_keeps_the_newest_word_per_chat_under_both_addresses_of_a_one_to_one_chat() {
        let lid = "123456789012345@lid";
        let pn = "15550001111@s.whatsapp.net";
        let group = "120363000000000001@g.us";
        let said = |chat: &str, secs, at| ChatTimer {
            chat: chat.into(),
            secs,
            at,
        };
        let batch = [
            received(with_timer("a", DAY), lid, Some(pn), 10),
            received(setting(0), lid, Some(pn), 20),
            // Redelivered late: older than the change before it.
            received(with_timer("a", DAY), lid, Some(pn), 10),
            received(with_timer("b", 7 * DAY), group, None, 30),
            received(
                wa::Message {
                    conversation: Some("c".into()),
                    ..Default::default()
                },
                pn,
                None,
                40,
            ),
        ];
        assert_eq!(
            learned(&batch),
            vec![said(lid, 0, 20), said(pn, 0, 20), said(group, 7 * DAY, 30)]
        );
    }

    #[test]
    fn a_groups_timer_notification_sets_its_timer_and_other_changes_none() {
        let update = |action| {
            GroupUpdate::builder()
                .group_jid("120363000000000001@g.us".parse().unwrap())
                .timestamp(whatsapp_rust::chrono::Utc::now())
                .is_lid_addressing_mode(false)
                .action(action)
                .build()
        };
        let set = update(GroupNotificationAction::Ephemeral {
            expiration: DAY,
            trigger: None,
        });
        let set = of_group_update(&set).unwrap();
        assert_eq!(
            (set.chat.as_str(), set.secs),
            ("120363000000000001@g.us", DAY)
        );
        assert_eq!(
            of_group_update(&update(GroupNotificationAction::Announce)),
            None
        );
    }
}
