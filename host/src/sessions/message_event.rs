//! The `message` event's data, built from an inbound message as the network
//! decoded it.

use serde_json::{Value, json};

use crate::domain::jid::{Jid, JidKind};
use crate::network::InboundMessage;

/// Phone digits of a user JID; `None` for anything else (an `@lid` is never
/// converted here).
fn phone_of(jid: &str) -> Option<String> {
    Jid::parse(jid)
        .ok()
        .filter(|j| j.kind() == JidKind::User)
        .and_then(|j| j.phone().map(str::to_owned))
}

/// The `data` object of a `message` event.
pub fn message_data(m: &InboundMessage) -> Value {
    let is_group = Jid::parse(&m.chat).is_ok_and(|j| j.is_group());
    let from_phone = phone_of(&m.from).or_else(|| m.from_phone.clone());
    let chat_phone = if is_group { None } else { phone_of(&m.chat) };
    json!({
        "from": m.from,
        "from_phone": from_phone,
        "chat": m.chat,
        "chat_phone": chat_phone,
        "quoted_message_id": m.quoted_message_id,
        "quoted_sender_jid": m.quoted_sender_jid,
        "message_id": m.message_id,
        "is_from_me": m.is_from_me,
        "push_name": m.push_name,
        "message_type": m.message_type,
        "text": m.text,
        "caption": m.caption,
        "media_mimetype": m.media_mimetype,
        "media": m.media,
        "location": m.location,
        "is_group": is_group,
        "participant": m.participant,
        "selected_id": m.selected_id,
        "selected_text": m.selected_text,
        "native_flow": m.native_flow,
    })
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

    #[test]
    fn a_direct_message_from_a_user_carries_both_phones() {
        let d = message_data(&msg(
            "4915112345678@s.whatsapp.net",
            "4915112345678@s.whatsapp.net",
        ));
        assert_eq!(d["from_phone"], "4915112345678");
        assert_eq!(d["chat_phone"], "4915112345678");
        assert_eq!(d["is_group"], false);
    }

    #[test]
    fn a_lid_sender_stays_a_lid_and_its_phone_is_null_when_unknown() {
        let d = message_data(&msg("987654321@lid", "987654321@lid"));
        assert_eq!(d["from"], "987654321@lid");
        assert!(d["from_phone"].is_null());
        assert!(d["chat_phone"].is_null());
    }

    #[test]
    fn a_group_message_has_no_chat_phone() {
        let d = message_data(&msg(
            "4915112345678@s.whatsapp.net",
            "120363000000000001@g.us",
        ));
        assert_eq!(d["is_group"], true);
        assert!(d["chat_phone"].is_null());
        assert_eq!(d["from_phone"], "4915112345678");
    }
}
