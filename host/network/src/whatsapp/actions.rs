//! The messages that act on an earlier message, built as WhatsApp Web builds
//! them so they go out under the gateway's message id through the ordinary
//! send (the crate infers the stanza's `edit` attribute from the message):
//! a revoke and an edit are `protocolMessage`s naming the target's key, a
//! pin is a `pinInChatMessage` with its duration in the context, a forward
//! is a copy marked forwarded.

use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::chats::MessageKey;

/// The key of `target` as the network names it: `participant` is the
/// author of a group message of someone else, or (edits in a group) this
/// account's own address there.
pub fn key(target: &MessageKey, participant: Option<String>) -> wa::MessageKey {
    wa::MessageKey {
        remote_jid: Some(target.chat.to_string()),
        from_me: Some(target.from_me),
        id: Some(target.message_id.clone()),
        participant,
    }
}

/// The author a key names: someone else's message in a group only (a
/// one-to-one chat's key names no participant).
fn others_author(target: &MessageKey) -> Option<String> {
    if target.from_me || !target.chat.is_group() {
        return None;
    }
    target.sender.as_ref().map(ToString::to_string)
}

/// Deletes `target` for everyone: this account's own message (no
/// participant), or someone else's as a group admin (their address as
/// participant).
pub fn revoke(target: &MessageKey) -> wa::Message {
    let participant = others_author(target);
    wa::Message {
        protocol_message: MessageField::some(wa::message::ProtocolMessage {
            key: MessageField::some(key(target, participant)),
            r#type: Some(wa::message::protocol_message::Type::REVOKE),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Replaces the text of this account's message `target`. When the original
/// is known and is a picture, video or document, its caption is what
/// changes (the edit carries the media message with the new caption);
/// otherwise the new text. `own_participant` is this account's address in a
/// group chat (its LID in a LID-addressed group), `None` elsewhere.
pub fn edit(
    target: &MessageKey,
    own_participant: Option<String>,
    text: &str,
    original: Option<&wa::Message>,
    timestamp_ms: i64,
) -> wa::Message {
    let new_content = original
        .and_then(|m| recaptioned(m.get_base_message(), text))
        .unwrap_or_else(|| wa::Message {
            conversation: Some(text.to_owned()),
            ..Default::default()
        });
    let mut key = key(target, own_participant);
    key.from_me = Some(true);
    wa::Message {
        protocol_message: MessageField::some(wa::message::ProtocolMessage {
            key: MessageField::some(key),
            r#type: Some(wa::message::protocol_message::Type::MESSAGE_EDIT),
            edited_message: MessageField::some(new_content),
            timestamp_ms: Some(timestamp_ms),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The media message of `original` with `caption` in place of its own, when
/// it is a picture, video or document.
fn recaptioned(original: &wa::Message, caption: &str) -> Option<wa::Message> {
    let caption = Some(caption.to_owned());
    if let Some(m) = original.image_message.as_option() {
        let mut m = m.clone();
        m.caption = caption;
        return Some(wa::Message {
            image_message: MessageField::some(m),
            ..Default::default()
        });
    }
    if let Some(m) = original.video_message.as_option() {
        let mut m = m.clone();
        m.caption = caption;
        return Some(wa::Message {
            video_message: MessageField::some(m),
            ..Default::default()
        });
    }
    if let Some(m) = original.document_message.as_option() {
        let mut m = m.clone();
        m.caption = caption;
        return Some(wa::Message {
            document_message: MessageField::some(m),
            ..Default::default()
        });
    }
    None
}

/// Pins `target` for everyone for `duration_seconds`, or unpins it (`0`).
pub fn pin(target: &MessageKey, duration_seconds: u32, timestamp_ms: i64) -> wa::Message {
    use wa::message::pin_in_chat_message::Type;
    let participant = others_author(target);
    let kind = if duration_seconds == 0 {
        Type::UNPIN_FOR_ALL
    } else {
        Type::PIN_FOR_ALL
    };
    wa::Message {
        pin_in_chat_message: MessageField::some(wa::message::PinInChatMessage {
            key: MessageField::some(key(target, participant)),
            r#type: Some(kind),
            sender_timestamp_ms: Some(timestamp_ms),
        }),
        message_context_info: MessageField::some(wa::MessageContextInfo {
            message_add_on_duration_in_secs: Some(duration_seconds),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A copy of a kept message to forward: out of its wrappers, marked
/// forwarded (its forwarding score raised), without its quote and secret;
/// media is relayed from the same CDN blob.
pub fn forward(original: &wa::Message) -> wa::Message {
    *original.get_base_message().prepare_for_forward()
}

/// A text marked as forwarded.
pub fn forward_text(text: &str) -> wa::Message {
    wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some(text.to_owned()),
            context_info: MessageField::some(wa::ContextInfo {
                is_forwarded: Some(true),
                // A first forward, as WhatsApp Web scores it.
                forwarding_score: Some(0),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::jid::Jid;
    use wa::message::protocol_message::Type as Protocol;

    fn target(chat: &str, from_me: bool, sender: Option<&str>) -> MessageKey {
        MessageKey {
            chat: Jid::parse(chat).unwrap(),
            message_id: "3EB0AAAA".into(),
            from_me,
            sender: sender.map(|s| Jid::parse(s).unwrap()),
        }
    }

    fn protocol(m: &wa::Message) -> &wa::message::ProtocolMessage {
        m.protocol_message.as_option().expect("a protocol message")
    }

    #[test]
    fn a_revoke_of_an_own_message_names_it_from_me_without_a_participant() {
        let m = revoke(&target("15550001111@s.whatsapp.net", true, None));
        let p = protocol(&m);
        assert_eq!(p.r#type, Some(Protocol::REVOKE));
        let k = p.key.as_option().unwrap();
        assert_eq!(k.remote_jid.as_deref(), Some("15550001111@s.whatsapp.net"));
        assert_eq!(k.id.as_deref(), Some("3EB0AAAA"));
        assert_eq!(k.from_me, Some(true));
        assert_eq!(k.participant, None);
        assert_eq!(
            whatsapp_rust::types::message::EditAttribute::infer_from_message(&m),
            Some(whatsapp_rust::types::message::EditAttribute::SenderRevoke)
        );
    }

    #[test]
    fn an_admin_revoke_names_the_author_as_participant() {
        let m = revoke(&target(
            "120363000000000001@g.us",
            false,
            Some("15550002222@s.whatsapp.net"),
        ));
        let k = protocol(&m).key.as_option().unwrap();
        assert_eq!(k.from_me, Some(false));
        assert_eq!(k.participant.as_deref(), Some("15550002222@s.whatsapp.net"));
        assert_eq!(
            whatsapp_rust::types::message::EditAttribute::infer_from_message(&m),
            Some(whatsapp_rust::types::message::EditAttribute::AdminRevoke)
        );
    }

    #[test]
    fn an_edit_of_a_text_carries_the_new_text_the_target_and_the_time() {
        let m = edit(
            &target("120363000000000001@g.us", true, None),
            Some("99999@lid".into()),
            "fixed",
            None,
            1_700_000_000_000,
        );
        let p = protocol(&m);
        assert_eq!(p.r#type, Some(Protocol::MESSAGE_EDIT));
        assert_eq!(p.timestamp_ms, Some(1_700_000_000_000));
        let k = p.key.as_option().unwrap();
        assert_eq!(k.from_me, Some(true));
        assert_eq!(k.id.as_deref(), Some("3EB0AAAA"));
        assert_eq!(k.participant.as_deref(), Some("99999@lid"));
        let new = p.edited_message.as_option().unwrap();
        assert_eq!(new.conversation.as_deref(), Some("fixed"));
        assert_eq!(
            whatsapp_rust::types::message::EditAttribute::infer_from_message(&m),
            Some(whatsapp_rust::types::message::EditAttribute::MessageEdit)
        );
    }

    #[test]
    fn an_edit_of_a_picture_changes_its_caption_and_keeps_the_picture() {
        let original = wa::Message {
            image_message: MessageField::some(wa::message::ImageMessage {
                caption: Some("old".into()),
                direct_path: Some("/v/t62/pic".into()),
                mimetype: Some("image/jpeg".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let m = edit(
            &target("15550001111@s.whatsapp.net", true, None),
            None,
            "new caption",
            Some(&original),
            1,
        );
        let new = protocol(&m).edited_message.as_option().unwrap();
        let image = new.image_message.as_option().unwrap();
        assert_eq!(image.caption.as_deref(), Some("new caption"));
        assert_eq!(image.direct_path.as_deref(), Some("/v/t62/pic"));
        assert_eq!(new.conversation, None);
    }

    #[test]
    fn a_key_in_a_one_to_one_chat_names_no_participant() {
        let t = target(
            "15550001111@s.whatsapp.net",
            false,
            Some("15550001111@s.whatsapp.net"),
        );
        let m = pin(&t, 86_400, 1);
        let k = m
            .pin_in_chat_message
            .as_option()
            .unwrap()
            .key
            .as_option()
            .unwrap();
        assert_eq!((k.from_me, k.participant.as_deref()), (Some(false), None));
    }

    #[test]
    fn a_pin_carries_the_target_key_its_type_and_its_duration() {
        use wa::message::pin_in_chat_message::Type;
        let t = target(
            "120363000000000001@g.us",
            false,
            Some("15550002222@s.whatsapp.net"),
        );
        let m = pin(&t, 604_800, 42);
        let p = m.pin_in_chat_message.as_option().unwrap();
        assert_eq!(p.r#type, Some(Type::PIN_FOR_ALL));
        assert_eq!(p.sender_timestamp_ms, Some(42));
        let k = p.key.as_option().unwrap();
        assert_eq!(k.id.as_deref(), Some("3EB0AAAA"));
        assert_eq!(k.from_me, Some(false));
        assert_eq!(k.participant.as_deref(), Some("15550002222@s.whatsapp.net"));
        let info = m.message_context_info.as_option().unwrap();
        assert_eq!(info.message_add_on_duration_in_secs, Some(604_800));
        let unpin = pin(&t, 0, 43);
        assert_eq!(
            unpin.pin_in_chat_message.as_option().unwrap().r#type,
            Some(Type::UNPIN_FOR_ALL)
        );
        assert_eq!(
            whatsapp_rust::types::message::EditAttribute::infer_from_message(&m),
            Some(whatsapp_rust::types::message::EditAttribute::PinInChat)
        );
    }

    #[test]
    fn a_forward_is_marked_forwarded_and_drops_the_quote() {
        let original = wa::Message {
            extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
                text: Some("hello".into()),
                context_info: MessageField::some(wa::ContextInfo {
                    stanza_id: Some("QUOTED".into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let m = forward(&original);
        let t = m.extended_text_message.as_option().unwrap();
        assert_eq!(t.text.as_deref(), Some("hello"));
        let c = t.context_info.as_option().unwrap();
        assert_eq!(c.is_forwarded, Some(true));
        assert_eq!(
            c.forwarding_score,
            Some(0),
            "a first forward, as WhatsApp Web scores it"
        );
        assert_eq!(c.stanza_id, None);
    }

    #[test]
    fn a_forwarded_text_is_an_extended_text_marked_forwarded() {
        let m = forward_text("fwd");
        let t = m.extended_text_message.as_option().unwrap();
        assert_eq!(t.text.as_deref(), Some("fwd"));
        let c = t.context_info.as_option().unwrap();
        assert_eq!(c.is_forwarded, Some(true));
        assert_eq!(c.forwarding_score, Some(0));
    }
}
