//! Classification tests: revokes, edits and pins become messages naming
//! their target, a forward says it is one, poll votes are opened with the poll's secret, a chat's timer is
//! an event, and traffic between the account's own devices is no message.

use serde_json::json;
use wa::message::protocol_message::Type as Protocol;
use whatsapp_rust::Jid;
use whatsapp_rust::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::wacore::poll;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::protocol::{MessageItem, PollVote, classify, poll_of, poll_vote_event, selected_names};
use crate::NetworkEvent;
use crate::domain::event::EventName;

fn jid(s: &str) -> Jid {
    s.parse().unwrap()
}

fn info() -> MessageInfo {
    MessageInfo {
        source: MessageSource {
            chat: jid("120363000000000001@g.us"),
            sender: jid("4915112345678:2@s.whatsapp.net"),
            is_group: true,
            ..Default::default()
        },
        id: "3EB0BB".into(),
        push_name: "Greta".into(),
        timestamp: whatsapp_rust::chrono::DateTime::from_timestamp(1_700_000_100, 0).unwrap(),
        ..Default::default()
    }
}

fn key(id: &str, participant: &str) -> MessageField<wa::MessageKey> {
    MessageField::some(wa::MessageKey {
        remote_jid: Some("120363000000000001@g.us".into()),
        from_me: Some(false),
        id: Some(id.into()),
        participant: Some(participant.into()),
    })
}

fn protocol(p: wa::message::ProtocolMessage) -> wa::Message {
    wa::Message {
        protocol_message: MessageField::some(p),
        ..Default::default()
    }
}

fn message(item: MessageItem) -> crate::InboundMessage {
    match item {
        MessageItem::Message(m) => *m,
        other => panic!("not a message: {other:?}"),
    }
}

#[test]
fn a_revoke_becomes_a_revoke_message_naming_its_target_and_its_author() {
    let m = message(classify(
        &protocol(wa::message::ProtocolMessage {
            r#type: Some(Protocol::REVOKE),
            key: key("TARGET", "4915100000000@s.whatsapp.net"),
            ..Default::default()
        }),
        &info(),
        false,
    ));
    assert_eq!(m.message_type, "revoke");
    assert_eq!(m.message_id, "3EB0BB", "the revoke's own id");
    assert_eq!(m.quoted_message_id.as_deref(), Some("TARGET"));
    assert_eq!(
        m.quoted_sender_jid.as_deref(),
        Some("4915100000000@s.whatsapp.net")
    );
    assert_eq!(m.chat, "120363000000000001@g.us");
    assert_eq!(m.from, "4915112345678@s.whatsapp.net");
    assert_eq!(m.text, None);
}

#[test]
fn an_edit_carries_the_new_text_and_names_the_edited_message() {
    // Phones send edits wrapped as a future-proof `edited_message`.
    let edit = protocol(wa::message::ProtocolMessage {
        r#type: Some(Protocol::MESSAGE_EDIT),
        key: key("ORIGINAL", "4915112345678@s.whatsapp.net"),
        edited_message: MessageField::some(wa::Message {
            conversation: Some("fixed typo".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    let wrapped = wa::Message {
        edited_message: MessageField::some(wa::message::FutureProofMessage {
            message: MessageField::some(edit),
        }),
        ..Default::default()
    };
    let m = message(classify(&wrapped, &info(), true));
    assert_eq!(m.message_type, "edit");
    assert_eq!(m.text.as_deref(), Some("fixed typo"));
    assert_eq!(m.quoted_message_id.as_deref(), Some("ORIGINAL"));
    assert!(m.offline);
}

#[test]
fn an_edited_caption_is_the_edit_s_caption() {
    let edit = protocol(wa::message::ProtocolMessage {
        r#type: Some(Protocol::MESSAGE_EDIT),
        key: key("PHOTO", "4915112345678@s.whatsapp.net"),
        edited_message: MessageField::some(wa::Message {
            image_message: MessageField::some(wa::message::ImageMessage {
                caption: Some("new caption".into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    let m = message(classify(&edit, &info(), false));
    assert_eq!(
        (
            m.message_type.as_str(),
            m.caption.as_deref(),
            m.text.as_deref()
        ),
        ("edit", Some("new caption"), None)
    );
}

#[test]
fn a_pin_becomes_a_pin_message_naming_its_target_field_by_field() {
    use wa::message::pin_in_chat_message::Type as Pin;
    let pin = |kind| wa::Message {
        pin_in_chat_message: MessageField::some(wa::message::PinInChatMessage {
            key: key("PINNED", "4915100000000@s.whatsapp.net"),
            r#type: Some(kind),
            sender_timestamp_ms: Some(1_700_000_100_000),
        }),
        message_context_info: MessageField::some(wa::MessageContextInfo {
            message_add_on_duration_in_secs: Some(86_400),
            ..Default::default()
        }),
        ..Default::default()
    };
    let m = message(classify(&pin(Pin::PIN_FOR_ALL), &info(), false));
    assert_eq!(m.message_type, "pin");
    assert_eq!(m.message_id, "3EB0BB", "the pin's own id");
    assert_eq!(m.quoted_message_id.as_deref(), Some("PINNED"));
    assert_eq!(
        m.quoted_sender_jid.as_deref(),
        Some("4915100000000@s.whatsapp.net")
    );
    assert_eq!(m.chat, "120363000000000001@g.us");
    assert_eq!(m.from, "4915112345678@s.whatsapp.net");
    assert_eq!(m.push_name, "Greta");
    assert_eq!(m.timestamp, 1_700_000_100);
    assert_eq!((m.text, m.caption, m.media), (None, None, None));
    let m = message(classify(&pin(Pin::UNPIN_FOR_ALL), &info(), false));
    assert_eq!(m.message_type, "unpin");
}

#[test]
fn a_forwarded_message_says_so() {
    let forwarded = wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some("passed on".into()),
            context_info: MessageField::some(wa::ContextInfo {
                is_forwarded: Some(true),
                forwarding_score: Some(3),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let m = message(classify(&forwarded, &info(), false));
    assert_eq!(m.message_type, "text");
    assert_eq!(m.text.as_deref(), Some("passed on"));
    assert!(m.forwarded);
    let plain = wa::Message {
        conversation: Some("mine".into()),
        ..Default::default()
    };
    assert!(!message(classify(&plain, &info(), false)).forwarded);
}

#[test]
fn a_timer_change_is_an_ephemeral_setting_event() {
    let item = classify(
        &protocol(wa::message::ProtocolMessage {
            r#type: Some(Protocol::EPHEMERAL_SETTING),
            ephemeral_expiration: Some(604_800),
            ..Default::default()
        }),
        &info(),
        false,
    );
    let MessageItem::Event(NetworkEvent::Other { event, data }) = item else {
        panic!("{item:?}")
    };
    assert_eq!(event, EventName::EphemeralSetting);
    assert_eq!(
        data,
        json!({"chat": "120363000000000001@g.us", "sender": "4915112345678@s.whatsapp.net",
            "expiration_seconds": 604_800, "timestamp": 1_700_000_100})
    );
}

#[test]
fn traffic_between_own_devices_is_no_message() {
    for (kind, expected) in [
        (
            Protocol::APP_STATE_SYNC_KEY_SHARE,
            "protocol_app_state_sync_key_share",
        ),
        (
            Protocol::HISTORY_SYNC_NOTIFICATION,
            "protocol_history_sync_notification",
        ),
        (
            Protocol::PEER_DATA_OPERATION_REQUEST_RESPONSE_MESSAGE,
            "protocol_peer_data_operation",
        ),
    ] {
        let item = classify(
            &protocol(wa::message::ProtocolMessage {
                r#type: Some(kind),
                ..Default::default()
            }),
            &info(),
            false,
        );
        assert_eq!(item, MessageItem::Internal(expected));
    }
    let keys_only = wa::Message {
        sender_key_distribution_message: MessageField::some(Default::default()),
        message_context_info: MessageField::some(Default::default()),
        ..Default::default()
    };
    assert_eq!(
        classify(&keys_only, &info(), false),
        MessageItem::Internal("message_without_content")
    );
}

#[test]
fn a_sender_key_riding_along_with_text_keeps_the_text() {
    let m = message(classify(
        &wa::Message {
            conversation: Some("hello".into()),
            sender_key_distribution_message: MessageField::some(Default::default()),
            ..Default::default()
        },
        &info(),
        false,
    ));
    assert_eq!(
        (m.message_type.as_str(), m.text.as_deref()),
        ("text", Some("hello"))
    );
}

/// A poll as kept in the store: options and the 32-byte secret.
fn poll_message(secret: &[u8]) -> wa::Message {
    wa::Message {
        poll_creation_message_v3: MessageField::some(wa::message::PollCreationMessage {
            name: Some("Lunch?".into()),
            options: ["Pizza", "Sushi", "Salad"]
                .into_iter()
                .map(|o| wa::message::poll_creation_message::Option {
                    option_name: Some(o.into()),
                    ..Default::default()
                })
                .collect(),
            selectable_options_count: Some(1),
            ..Default::default()
        }),
        message_context_info: MessageField::some(wa::MessageContextInfo {
            message_secret: Some(secret.to_vec()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn a_vote_opened_with_the_poll_s_secret_names_the_chosen_options() {
    let secret = [7u8; 32];
    let creator = "4915100000000@s.whatsapp.net";
    let voter = "4915112345678@s.whatsapp.net";
    let chosen = vec![poll::compute_option_hash("Sushi").to_vec()];
    let (enc_payload, iv) =
        poll::encrypt_poll_vote_with_secret(&chosen, &secret, "POLL1", creator, voter).unwrap();
    let vote_message = wa::Message {
        poll_update_message: MessageField::some(wa::message::PollUpdateMessage {
            poll_creation_message_key: key("POLL1", creator),
            vote: MessageField::some(wa::message::PollEncValue {
                enc_payload: Some(enc_payload.clone()),
                enc_iv: Some(iv.to_vec()),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let MessageItem::PollVote(vote) = classify(&vote_message, &info(), false) else {
        panic!("not a vote")
    };
    assert_eq!(
        vote,
        PollVote {
            message_id: "3EB0BB".into(),
            chat: "120363000000000001@g.us".into(),
            voter: voter.into(),
            poll_id: "POLL1".into(),
            enc_payload,
            enc_iv: iv.to_vec(),
            timestamp: 1_700_000_100,
        }
    );

    let (question, options, kept_secret) = poll_of(&poll_message(&secret)).unwrap();
    assert_eq!(question, "Lunch?");
    assert_eq!(kept_secret, secret);
    let ciphertext = poll::PollVoteCiphertext {
        enc_payload: &vote.enc_payload,
        enc_iv: &vote.enc_iv,
    };
    let hashes =
        poll::decrypt_poll_vote_with_secret(ciphertext, &kept_secret, "POLL1", creator, voter)
            .unwrap();
    assert_eq!(selected_names(&options, &hashes), ["Sushi"]);

    let NetworkEvent::Other { event, data } =
        poll_vote_event(&vote, Ok(selected_names(&options, &hashes)))
    else {
        panic!()
    };
    assert_eq!(event, EventName::PollVote);
    assert_eq!(
        data,
        json!({"message_id": "3EB0BB", "chat": "120363000000000001@g.us",
            "voter": voter, "poll_message_id": "POLL1", "timestamp": 1_700_000_100,
            "selected_options": ["Sushi"]})
    );
}

#[test]
fn a_vote_that_cannot_be_opened_says_why_and_names_no_option() {
    let vote = PollVote {
        message_id: "V".into(),
        chat: "c@g.us".into(),
        voter: "1@s.whatsapp.net".into(),
        poll_id: "UNKNOWN".into(),
        enc_payload: vec![1],
        enc_iv: vec![2],
        timestamp: 5,
    };
    let NetworkEvent::Other { data, .. } =
        poll_vote_event(&vote, Err("the poll is not known".into()))
    else {
        panic!()
    };
    assert_eq!(data["selected_options"], json!([]));
    assert_eq!(data["error"], "the poll is not known");
}

#[test]
fn a_message_without_a_secret_or_poll_is_no_poll() {
    assert!(poll_of(&wa::Message::default()).is_none());
    let mut no_secret = poll_message(&[1; 32]);
    no_secret.message_context_info = MessageField::none();
    assert!(poll_of(&no_secret).is_none());
}
