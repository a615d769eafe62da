//! The lid-to-phone mapping as intake uses it: which pairs an event teaches
//! and how a message's `from_phone` and `chat_phone` are resolved. Pure; the
//! learned pairs live in the store (`Store::learn_lid`, `Store::lid_phone`).

use serde_json::Value;

use super::message_event::Phones;
use crate::domain::jid::{Jid, JidKind};
use crate::network::InboundMessage;

/// A pair learned from the network: `lid_user` (the part before `@lid`) is `phone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnedLid {
    /// The digits before `@lid`.
    pub lid_user: String,
    /// The phone digits.
    pub phone: String,
}

/// The phone digits of a user JID; `None` for anything else.
pub fn phone_of(jid: &str) -> Option<String> {
    Jid::parse(jid)
        .ok()
        .and_then(|j| j.phone().map(str::to_owned))
}

/// The part before `@lid` of an `@lid` JID; `None` for anything else.
pub fn lid_user_of(jid: &str) -> Option<String> {
    Jid::parse(jid)
        .ok()
        .filter(|j| j.kind() == JidKind::Lid)
        .map(|j| j.user_part().to_owned())
}

/// Phone digits as a network supplies them (`+` and separators allowed).
fn digits(phone: &str) -> Option<String> {
    Jid::user(phone).ok().map(|j| j.user_part().to_owned())
}

/// What a message teaches: its sender is an `@lid` (`from`, or else
/// `participant`) and the network supplied the sender's phone beside it.
pub fn learned_from_message(m: &InboundMessage) -> Option<LearnedLid> {
    let phone = m.from_phone.as_deref().and_then(digits)?;
    let lid_user = lid_user_of(&m.from).or_else(|| lid_user_of(&m.participant))?;
    Some(LearnedLid { lid_user, phone })
}

/// What a `push_name_update` or `contact_update` teaches: `jid` is a user JID
/// and `lid` names the same account as `<id>@lid`.
pub fn learned_from_contact(data: &Value) -> Option<LearnedLid> {
    let phone = phone_of(data.get("jid")?.as_str()?)?;
    let lid_user = lid_user_of(data.get("lid")?.as_str()?)?;
    Some(LearnedLid { lid_user, phone })
}

/// Resolves a message's phones. `from_phone`: the number of a user JID; for an
/// `@lid` the phone the network supplied, else the learned one (`lookup`
/// takes the part before `@lid`). `chat_phone`: the same for the chat, always
/// `None` for a group. Neither `from` nor `chat` is ever rewritten.
pub fn resolve_phones(m: &InboundMessage, lookup: impl Fn(&str) -> Option<String>) -> Phones {
    let supplied = m.from_phone.as_deref().and_then(digits);
    let from_lid = lid_user_of(&m.from);
    let resolve = |jid: &str| {
        if let Some(phone) = phone_of(jid) {
            return Some(phone);
        }
        let lid = lid_user_of(jid)?;
        if from_lid.as_deref() == Some(lid.as_str())
            && let Some(phone) = &supplied
        {
            return Some(phone.clone());
        }
        lookup(&lid)
    };
    let is_group = Jid::parse(&m.chat).is_ok_and(|j| j.is_group());
    Phones {
        from_phone: resolve(&m.from).or_else(|| supplied.clone()),
        chat_phone: if is_group { None } else { resolve(&m.chat) },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn msg(from: &str, chat: &str, from_phone: Option<&str>) -> InboundMessage {
        InboundMessage {
            message_id: "M1".into(),
            from: from.into(),
            chat: chat.into(),
            participant: from.into(),
            from_phone: from_phone.map(str::to_owned),
            ..InboundMessage::default()
        }
    }

    fn nothing_learned(_: &str) -> Option<String> {
        None
    }

    fn learned(lid: &str) -> Option<String> {
        (lid == "777").then(|| "15550007777".to_owned())
    }

    #[test]
    fn a_lid_message_with_a_supplied_phone_teaches_the_pair() {
        let m = msg("777@lid", "777@lid", Some("+1 555 000 7777"));
        let got = learned_from_message(&m).unwrap();
        assert_eq!(got.lid_user, "777");
        assert_eq!(got.phone, "15550007777");
    }

    #[test]
    fn a_group_message_teaches_through_its_lid_participant() {
        let mut m = msg(
            "4915112345678@s.whatsapp.net",
            "1203@g.us",
            Some("15550007777"),
        );
        m.participant = "777@lid".into();
        assert_eq!(learned_from_message(&m).unwrap().lid_user, "777");
    }

    #[test]
    fn nothing_is_learned_without_a_lid_or_without_a_phone() {
        assert!(learned_from_message(&msg("777@lid", "777@lid", None)).is_none());
        let user = msg(
            "15550001111@s.whatsapp.net",
            "15550001111@s.whatsapp.net",
            Some("1555"),
        );
        assert!(learned_from_message(&user).is_none());
    }

    #[test]
    fn a_user_sender_resolves_to_its_own_number() {
        let m = msg(
            "4915112345678@s.whatsapp.net",
            "4915112345678@s.whatsapp.net",
            None,
        );
        let p = resolve_phones(&m, nothing_learned);
        assert_eq!(p.from_phone.as_deref(), Some("4915112345678"));
        assert_eq!(p.chat_phone.as_deref(), Some("4915112345678"));
    }

    #[test]
    fn a_lid_sender_resolves_to_the_supplied_phone_then_the_learned_one_then_nothing() {
        let supplied = resolve_phones(&msg("777@lid", "777@lid", Some("15550009999")), learned);
        assert_eq!(supplied.from_phone.as_deref(), Some("15550009999"));
        assert_eq!(supplied.chat_phone.as_deref(), Some("15550009999"));
        let from_map = resolve_phones(&msg("777@lid", "777@lid", None), learned);
        assert_eq!(from_map.from_phone.as_deref(), Some("15550007777"));
        assert_eq!(from_map.chat_phone.as_deref(), Some("15550007777"));
        let unknown = resolve_phones(&msg("888@lid", "888@lid", None), learned);
        assert_eq!(unknown.from_phone, None);
        assert_eq!(unknown.chat_phone, None);
    }

    #[test]
    fn a_group_chat_never_has_a_chat_phone() {
        let p = resolve_phones(&msg("777@lid", "120363000000000001@g.us", None), learned);
        assert_eq!(p.from_phone.as_deref(), Some("15550007777"));
        assert_eq!(p.chat_phone, None);
    }

    #[test]
    fn a_lid_chat_of_a_message_from_me_resolves_from_the_map() {
        let mut m = msg("15550001111@s.whatsapp.net", "777@lid", None);
        m.is_from_me = true;
        let p = resolve_phones(&m, learned);
        assert_eq!(p.from_phone.as_deref(), Some("15550001111"));
        assert_eq!(p.chat_phone.as_deref(), Some("15550007777"));
    }

    #[test]
    fn a_contact_event_with_a_user_jid_and_a_lid_teaches_the_pair() {
        let got = learned_from_contact(&json!({
            "jid": "15550007777@s.whatsapp.net", "push_name": "Ann", "lid": "777@lid"
        }))
        .unwrap();
        assert_eq!(
            got,
            LearnedLid {
                lid_user: "777".into(),
                phone: "15550007777".into()
            }
        );
        assert!(learned_from_contact(&json!({ "jid": "15550007777@s.whatsapp.net" })).is_none());
        assert!(learned_from_contact(&json!({ "jid": "888@lid", "lid": "777@lid" })).is_none());
        assert!(
            learned_from_contact(&json!({ "jid": "15550007777@s.whatsapp.net", "lid": "777" }))
                .is_none(),
            "the lid is written as a JID"
        );
    }
}
