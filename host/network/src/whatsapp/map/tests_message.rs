//! Mapping tests for messages: the crate's message values of every listed
//! type, checked field by field on the resulting inbound message.

use std::sync::Arc;

use serde_json::json;
use wa::__buffa::oneof::message::buttons_response_message::Response as ButtonsResponse;
use wa::__buffa::oneof::message::interactive_response_message::InteractiveResponseMessage as Reply;
use whatsapp_rust::Jid;
use whatsapp_rust::types::events::{
    BatchOrigin, Event, InboundMessage as WaInbound, MessageBatch, UndecryptableMessage,
};
use whatsapp_rust::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::protocol::MessageItem;
use super::{MapContext, map_event, message};
use crate::domain::event::EventName;
use crate::domain::event_data::validate;
use crate::{InboundMessage, NetworkEvent};

fn jid(s: &str) -> Jid {
    s.parse().unwrap()
}

fn info(sender: &str, chat: &str) -> MessageInfo {
    MessageInfo {
        source: MessageSource {
            chat: jid(chat),
            sender: jid(sender),
            is_group: chat.ends_with("@g.us"),
            ..Default::default()
        },
        id: "3EB0AA".into(),
        push_name: "Greta".into(),
        timestamp: whatsapp_rust::chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
        ..Default::default()
    }
}

fn batch(message: wa::Message, info: MessageInfo, origin: BatchOrigin) -> Vec<NetworkEvent> {
    let m = WaInbound::builder()
        .message(Arc::new(message))
        .info(Arc::new(info))
        .build();
    let b = MessageBatch::builder()
        .messages(Arc::from(vec![m]))
        .origin(origin)
        .build();
    assert!(
        map_event(&Event::Messages(b.clone()), &MapContext::default()).is_empty(),
        "message batches take the inbound path"
    );
    message::batch(&b)
        .into_iter()
        .map(|item| match item {
            MessageItem::Message(m) => NetworkEvent::Message(m),
            other => panic!("not a message: {other:?}"),
        })
        .collect()
}

/// The inbound message of a live direct message from a phone JID.
fn inbound(message: wa::Message) -> InboundMessage {
    let mut out = batch(
        message,
        info(
            "4915112345678:3@s.whatsapp.net",
            "4915112345678@s.whatsapp.net",
        ),
        BatchOrigin::Live,
    );
    assert_eq!(out.len(), 1);
    match out.remove(0) {
        NetworkEvent::Message(m) => *m,
        other => panic!("{other:?}"),
    }
}

fn quoting(id: &str, participant: &str) -> MessageField<wa::ContextInfo> {
    MessageField::some(wa::ContextInfo {
        stanza_id: Some(id.into()),
        participant: Some(participant.into()),
        ..Default::default()
    })
}

#[test]
fn a_text_keeps_its_envelope_fields() {
    let m = inbound(wa::Message {
        conversation: Some("Is my order ready?".into()),
        ..Default::default()
    });
    let want = InboundMessage {
        message_id: "3EB0AA".into(),
        from: "4915112345678@s.whatsapp.net".into(),
        from_phone: None,
        chat: "4915112345678@s.whatsapp.net".into(),
        participant: "4915112345678@s.whatsapp.net".into(),
        is_from_me: false,
        push_name: "Greta".into(),
        message_type: "text".into(),
        text: Some("Is my order ready?".into()),
        timestamp: 1_700_000_000,
        offline: false,
        ..InboundMessage::default()
    };
    assert_eq!(m, want);
}

#[test]
fn a_reply_carries_the_quoted_id_and_sender() {
    let m = inbound(wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some("yes".into()),
            context_info: quoting("QUOTED1", "15550001111@s.whatsapp.net"),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        (m.message_type.as_str(), m.text.as_deref()),
        ("text", Some("yes"))
    );
    assert_eq!(m.quoted_message_id.as_deref(), Some("QUOTED1"));
    assert_eq!(
        m.quoted_sender_jid.as_deref(),
        Some("15550001111@s.whatsapp.net")
    );
}

#[test]
fn a_lid_sender_keeps_its_lid_and_gets_the_phone_the_network_supplied() {
    let mut i = info("99887766:2@lid", "120363000000000001@g.us");
    i.source.sender_alt = Some(jid("4915112345678@s.whatsapp.net"));
    i.is_offline = true;
    let out = batch(
        wa::Message {
            conversation: Some("hi".into()),
            ..Default::default()
        },
        i,
        BatchOrigin::Live,
    );
    let NetworkEvent::Message(m) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(m.from, "99887766@lid");
    assert_eq!(m.participant, "99887766@lid");
    assert_eq!(m.from_phone.as_deref(), Some("4915112345678"));
    assert_eq!(m.chat, "120363000000000001@g.us");
    assert!(m.offline, "flagged offline by the server");
}

#[test]
fn messages_of_an_offline_drain_are_offline() {
    let i = info(
        "4915112345678@s.whatsapp.net",
        "4915112345678@s.whatsapp.net",
    );
    let out = batch(
        wa::Message {
            conversation: Some("late".into()),
            ..Default::default()
        },
        i,
        BatchOrigin::OfflineDrain,
    );
    let NetworkEvent::Message(m) = &out[0] else {
        panic!("{out:?}")
    };
    assert!(m.offline);
}

#[test]
fn an_image_has_its_caption_mimetype_and_media() {
    let m = inbound(wa::Message {
        image_message: MessageField::some(wa::message::ImageMessage {
            url: Some("https://mmg.whatsapp.net/x".into()),
            mimetype: Some("image/jpeg".into()),
            caption: Some("look".into()),
            file_length: Some(1234),
            context_info: quoting("Q2", "15550001111@s.whatsapp.net"),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(m.message_type, "image");
    assert_eq!(m.caption.as_deref(), Some("look"));
    assert_eq!(m.media_mimetype.as_deref(), Some("image/jpeg"));
    let media = m.media.expect("the media");
    assert_eq!(media.file_length, Some(1234));
    assert_eq!(media.mimetype.as_deref(), Some("image/jpeg"));
    assert!(
        !media.handle.to_string().contains("mmg.whatsapp.net"),
        "the encrypted CDN URL is not kept: {}",
        media.handle
    );
    assert_eq!(m.quoted_message_id.as_deref(), Some("Q2"));
    assert_eq!(m.text, None);
}

#[test]
fn a_location_has_every_location_field() {
    let m = inbound(wa::Message {
        location_message: MessageField::some(wa::message::LocationMessage {
            degrees_latitude: Some(52.52),
            degrees_longitude: Some(13.405),
            name: Some("Mitte".into()),
            address: Some("Berlin".into()),
            url: Some("https://maps.example".into()),
            accuracy_in_meters: Some(5),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(m.message_type, "location");
    assert_eq!(
        m.location,
        Some(
            json!({"latitude": 52.52, "longitude": 13.405, "name": "Mitte", "address": "Berlin",
            "url": "https://maps.example", "accuracy_meters": 5, "speed_mps": 0.0, "is_live": false})
        )
    );
}

#[test]
fn a_live_location_is_live_with_its_sequence_and_caption() {
    let m = inbound(wa::Message {
        live_location_message: MessageField::some(wa::message::LiveLocationMessage {
            degrees_latitude: Some(1.5),
            degrees_longitude: Some(2.5),
            speed_in_mps: Some(1.25),
            sequence_number: Some(7),
            caption: Some("on my way".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(m.message_type, "live_location");
    let loc = m.location.unwrap();
    assert_eq!(
        (loc["is_live"].as_bool(), loc["sequence_number"].as_i64()),
        (Some(true), Some(7))
    );
    assert_eq!(
        (loc["latitude"].as_f64(), loc["speed_mps"].as_f64()),
        (Some(1.5), Some(1.25))
    );
    assert_eq!(loc["caption"], "on my way");
}

#[test]
fn a_buttons_reply_gives_the_button_id_and_label() {
    let m = inbound(wa::Message {
        buttons_response_message: MessageField::some(wa::message::ButtonsResponseMessage {
            selected_button_id: Some("yes".into()),
            response: Some(ButtonsResponse::SelectedDisplayText("Yes".into())),
            context_info: quoting("BTN1", "15550001111@s.whatsapp.net"),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(m.message_type, "buttons_response");
    assert_eq!(
        (
            m.selected_id.as_deref(),
            m.selected_text.as_deref(),
            m.text.as_deref()
        ),
        (Some("yes"), Some("Yes"), Some("Yes"))
    );
    assert_eq!(m.quoted_message_id.as_deref(), Some("BTN1"));
    assert_eq!(m.native_flow, None);
}

#[test]
fn a_list_reply_gives_the_row_id_and_title() {
    let m = inbound(wa::Message {
        list_response_message: MessageField::some(wa::message::ListResponseMessage {
            title: Some("Tomorrow".into()),
            single_select_reply: MessageField::some(
                wa::message::list_response_message::SingleSelectReply {
                    selected_row_id: Some("row-2".into()),
                },
            ),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(m.message_type, "list_response");
    assert_eq!(
        (
            m.selected_id.as_deref(),
            m.selected_text.as_deref(),
            m.text.as_deref()
        ),
        (Some("row-2"), Some("Tomorrow"), Some("Tomorrow"))
    );
}

#[test]
fn a_template_button_reply_without_a_label_uses_the_id_as_text() {
    let m = inbound(wa::Message {
        template_button_reply_message: MessageField::some(
            wa::message::TemplateButtonReplyMessage {
                selected_id: Some("t1".into()),
                ..Default::default()
            },
        ),
        ..Default::default()
    });
    assert_eq!(m.message_type, "template_button_reply");
    assert_eq!(
        (
            m.selected_id.as_deref(),
            m.selected_text.as_deref(),
            m.text.as_deref()
        ),
        (Some("t1"), None, Some("t1"))
    );
}

#[test]
fn a_native_flow_reply_parses_its_params() {
    let flow = wa::message::interactive_response_message::NativeFlowResponseMessage {
        name: Some("quick_reply".into()),
        params_json: Some(r#"{"id":"later","extra":1}"#.into()),
        ..Default::default()
    };
    let m = inbound(wa::Message {
        interactive_response_message: MessageField::some(wa::message::InteractiveResponseMessage {
            body: MessageField::some(wa::message::interactive_response_message::Body {
                text: Some("Later".into()),
                ..Default::default()
            }),
            interactive_response_message: Some(Reply::NativeFlowResponseMessage(Box::new(flow))),
            context_info: quoting("INT1", "15550001111@s.whatsapp.net"),
        }),
        ..Default::default()
    });
    assert_eq!(m.message_type, "interactive_response");
    assert_eq!(
        (
            m.selected_id.as_deref(),
            m.selected_text.as_deref(),
            m.text.as_deref()
        ),
        (Some("later"), Some("Later"), Some("Later"))
    );
    assert_eq!(
        m.native_flow,
        Some(json!({"name": "quick_reply", "params": {"id": "later", "extra": 1}}))
    );
    assert_eq!(m.quoted_message_id.as_deref(), Some("INT1"));
}

#[test]
fn buttons_someone_sent_arrive_as_interactive_with_their_body_as_text() {
    let sent = crate::whatsapp::send_interactive::buttons(&crate::domain::send::ButtonsBody {
        text: "Pick one".into(),
        header: None,
        footer: None,
        buttons: vec![crate::domain::send::Button {
            id: "yes".into(),
            text: "Yes".into(),
        }],
    });
    let m = inbound(sent);
    assert_eq!(
        (m.message_type.as_str(), m.text.as_deref()),
        ("interactive", Some("Pick one"))
    );
}

#[test]
fn a_reaction_names_the_message_it_reacts_to() {
    let m = inbound(wa::Message {
        reaction_message: MessageField::some(wa::message::ReactionMessage {
            key: MessageField::some(wa::MessageKey {
                id: Some("TARGET".into()),
                ..Default::default()
            }),
            text: Some("👍".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        (
            m.message_type.as_str(),
            m.text.as_deref(),
            m.quoted_message_id.as_deref()
        ),
        ("reaction", Some("👍"), Some("TARGET"))
    );
    let in_group = inbound(wa::Message {
        reaction_message: MessageField::some(wa::message::ReactionMessage {
            key: MessageField::some(wa::MessageKey {
                id: Some("TARGET".into()),
                participant: Some("15559990000@s.whatsapp.net".into()),
                ..Default::default()
            }),
            text: Some("🎉".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        in_group.quoted_sender_jid.as_deref(),
        Some("15559990000@s.whatsapp.net"),
        "a group reaction names the author of its target"
    );
}

#[test]
fn an_unknown_message_is_typed_unknown() {
    let m = inbound(wa::Message {
        keep_in_chat_message: MessageField::some(wa::message::KeepInChatMessage {
            timestamp_ms: Some(1),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!((m.message_type.as_str(), m.text.clone()), ("unknown", None));
}

#[test]
fn an_undecryptable_message_names_chat_sender_and_id() {
    let i = info(
        "4915112345678:1@s.whatsapp.net",
        "4915112345678@s.whatsapp.net",
    );
    let ev = UndecryptableMessage::builder()
        .info(Arc::new(i))
        .is_unavailable(false)
        .unavailable_type(whatsapp_rust::types::events::UnavailableType::Unknown)
        .decrypt_fail_mode(whatsapp_rust::types::events::DecryptFailMode::Show)
        .build();
    let out = map_event(&Event::UndecryptableMessage(ev), &MapContext::default());
    let NetworkEvent::Other { event, data } = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(*event, EventName::UndecryptableMessage);
    validate(*event, data).unwrap();
    assert_eq!(
        *data,
        json!({"chat": "4915112345678@s.whatsapp.net", "sender": "4915112345678@s.whatsapp.net",
            "message_id": "3EB0AA", "is_unavailable": false, "unavailable_type": "unknown",
            "decrypt_fail_mode": "show", "timestamp": 1_700_000_000})
    );
}
