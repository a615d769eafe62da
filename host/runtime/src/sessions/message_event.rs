//! The `message` event's data, built from an inbound message as the network
//! decoded it and the phones the gateway resolved for it (see `lid.rs`).

use crate::domain::event_data::own::MessageData;
use crate::domain::jid::Jid;
use crate::domain::media::MediaObject;
use crate::network::InboundMessage;

/// The phone numbers (digits) resolved for a message's sender and chat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Phones {
    /// The sender's phone; `None` when not known (a valid outcome for an `@lid`).
    pub from_phone: Option<String>,
    /// The chat's phone; always `None` for a group chat.
    pub chat_phone: Option<String>,
}

/// The `data` object of a `message` event.
/// `media` is the gateway's own media object (the network's description
/// is never shown: its URL is encrypted and useless without the keys).
pub fn message_data(
    m: &InboundMessage,
    phones: &Phones,
    media: Option<MediaObject>,
) -> MessageData {
    let is_group = Jid::parse(&m.chat).is_ok_and(|j| j.is_group());
    let chat_phone = if is_group {
        None
    } else {
        phones.chat_phone.clone()
    };
    MessageData {
        from: m.from.clone(),
        from_phone: phones.from_phone.clone(),
        chat: m.chat.clone(),
        chat_phone,
        quoted_message_id: m.quoted_message_id.clone(),
        quoted_sender_jid: m.quoted_sender_jid.clone(),
        forwarded: m.forwarded,
        message_id: m.message_id.clone(),
        is_from_me: m.is_from_me,
        push_name: m.push_name.clone(),
        message_type: m.message_type.clone(),
        text: m.text.clone(),
        caption: m.caption.clone(),
        media_mimetype: m.media_mimetype.clone(),
        media,
        location: m.location.clone(),
        is_group,
        participant: m.participant.clone(),
        selected_id: m.selected_id.clone(),
        selected_text: m.selected_text.clone(),
        native_flow: m.native_flow.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(from: &str, chat: &str) -> InboundMessage {
        InboundMessage {
            message_id: "M1".into(),
            from: from.into(),
            chat: chat.into(),
            participant: from.into(),
            message_type: "text".into(),
            text: Some("hi".into()),
            ..InboundMessage::default()
        }
    }

    fn phones(from: Option<&str>, chat: Option<&str>) -> Phones {
        Phones {
            from_phone: from.map(str::to_owned),
            chat_phone: chat.map(str::to_owned),
        }
    }

    #[test]
    fn the_resolved_phones_are_carried_as_given() {
        let d = message_data(
            &msg(
                "4915112345678@s.whatsapp.net",
                "4915112345678@s.whatsapp.net",
            ),
            &phones(Some("4915112345678"), Some("4915112345678")),
            None,
        );
        assert_eq!(d.from_phone.as_deref(), Some("4915112345678"));
        assert_eq!(d.chat_phone.as_deref(), Some("4915112345678"));
        assert!(!d.is_group);
    }

    #[test]
    fn a_lid_sender_stays_a_lid_whatever_its_phone() {
        let d = message_data(
            &msg("987654321@lid", "987654321@lid"),
            &Phones::default(),
            None,
        );
        assert_eq!(d.from, "987654321@lid");
        assert!(d.from_phone.is_none());
        assert!(d.chat_phone.is_none());
        let d = message_data(
            &msg("987654321@lid", "987654321@lid"),
            &phones(Some("15550001111"), None),
            None,
        );
        assert_eq!(d.from, "987654321@lid");
        assert_eq!(d.from_phone.as_deref(), Some("15550001111"));
    }

    #[test]
    fn a_group_message_has_no_chat_phone() {
        let d = message_data(
            &msg("4915112345678@s.whatsapp.net", "120363000000000001@g.us"),
            &phones(Some("4915112345678"), Some("1")),
            None,
        );
        assert!(d.is_group);
        assert!(d.chat_phone.is_none());
        assert_eq!(d.from_phone.as_deref(), Some("4915112345678"));
    }

    #[test]
    fn an_ordinary_message_has_null_reply_fields() {
        let d = message_data(
            &msg("1555000111@s.whatsapp.net", "1555000111@s.whatsapp.net"),
            &Phones::default(),
            None,
        );
        assert!(d.selected_id.is_none());
        assert!(d.selected_text.is_none());
        assert!(d.native_flow.is_none());
        assert!(d.location.is_none());
    }
}
