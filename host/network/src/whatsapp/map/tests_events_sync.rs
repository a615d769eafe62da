//! Mapping tests for what the account's other devices and the server sync to
//! this one beyond messages: calls, history sync chunks, labels, stars, chat
//! deletes and clears, deletes for me, status mutes, contact identity,
//! number and timer changes, app-state sync failures and channel updates;
//! and the kinds an event is counted under when nothing forwards it.

use std::sync::Arc;

use serde_json::{Value, json};
use whatsapp_rust::Jid;
use whatsapp_rust::buffa::Message as _;
use whatsapp_rust::bytes::Bytes;
use whatsapp_rust::chrono::DateTime;
use whatsapp_rust::types::call::{
    CallAction, CallEndedElsewhere, ElsewhereOutcome, IncomingCall, MissedCall, MissedReason,
};
use whatsapp_rust::types::events::{
    AppStateSyncFailed, BatchOrigin, ClearChatUpdate, ContactNumberChanged, ContactUpdated,
    DeleteChatUpdate, DeleteMessageForMeUpdate, DisappearingModeChanged, Event, IdentityChange,
    LabelAssociationUpdate, LabelEditUpdate, LazyHistorySync, MessageBatch, NewsletterLiveUpdate,
    NewsletterLiveUpdateMessage, NewsletterLiveUpdateReaction, PairPasskeyError,
    PairingCodeRefresh, SelfPushNameUpdated, ServerAck, StarUpdate, UserStatusMuteUpdate,
};
use whatsapp_rust::waproto::whatsapp as wa;

use super::history::{Own, message_count, read, sync_type_name};
use super::kinds::kind_name;
use super::{MapContext, map_event, unmapped_kind};
use crate::NetworkEvent;
use crate::domain::event::EventName;
use crate::domain::event_data::{CALL_ACTIONS, HISTORY_SYNC_TYPES, validate};

fn jid(s: &str) -> Jid {
    s.parse().unwrap()
}

fn at() -> DateTime<whatsapp_rust::chrono::Utc> {
    DateTime::from_timestamp(1_700_000_000, 0).unwrap()
}

const PHONE: &str = "4915112345678@s.whatsapp.net";
const GROUP: &str = "120363000000000001@g.us";

/// The data of the one event `ev` maps to, checked against its shape.
fn data(ev: Event, want: EventName) -> Value {
    let out = map_event(&ev, &MapContext::default());
    assert_eq!(out.len(), 1, "{out:?}");
    match &out[0] {
        NetworkEvent::Other { event, data } => {
            assert_eq!(*event, want);
            validate(*event, data).unwrap_or_else(|e| panic!("{want:?}: {e:?}"));
            data.clone()
        }
        other => panic!("{other:?}"),
    }
}

fn call(from: &str, action: CallAction) -> Event {
    Event::IncomingCall(
        IncomingCall::builder()
            .from(jid(from))
            .stanza_id("STANZA1".to_string())
            .timestamp(at())
            .offline(false)
            .action(action)
            .build(),
    )
}

#[test]
fn a_call_offer_from_a_lid_caller_names_the_caller_phone_and_the_group() {
    let offer = CallAction::Offer {
        call_id: "CALL1".into(),
        call_creator: jid("99887766@lid"),
        caller_pn: Some(jid(PHONE)),
        caller_country_code: None,
        device_class: None,
        joinable: false,
        is_video: true,
        audio: Vec::new(),
        group_jid: Some(jid(GROUP)),
    };
    assert_eq!(
        data(call("99887766:3@lid", offer), EventName::Call),
        json!({
            "call_id": "CALL1", "from": "99887766@lid", "from_phone": "4915112345678",
            "action": "offer", "call_creator": "99887766@lid", "offline": false,
            "is_video": true, "is_group": true, "group_jid": GROUP, "timestamp": 1_700_000_000,
        })
    );
}

#[test]
fn a_terminate_and_a_reject_carry_their_reason_and_duration() {
    let terminate = CallAction::Terminate {
        call_id: "CALL1".into(),
        call_creator: jid(PHONE),
        reason: Some("timeout".into()),
        duration: Some(42),
        audio_duration: None,
    };
    let d = data(call(PHONE, terminate), EventName::Call);
    assert_eq!(
        (
            d["action"].as_str(),
            d["from_phone"].as_str(),
            d["reason"].as_str(),
            d["duration_seconds"].as_i64()
        ),
        (
            Some("terminate"),
            Some("4915112345678"),
            Some("timeout"),
            Some(42)
        )
    );
    let reject = CallAction::Reject {
        call_id: "CALL1".into(),
        call_creator: jid(PHONE),
        reason: None,
    };
    let d = data(call(PHONE, reject), EventName::Call);
    assert_eq!(
        (d["action"].as_str(), &d["reason"]),
        (Some("reject"), &Value::Null)
    );
}

#[test]
fn a_group_call_notice_an_accept_and_a_preaccept_are_calls() {
    let notice = CallAction::OfferNotice {
        call_id: "CALL2".into(),
        call_creator: jid(PHONE),
        is_video: false,
        is_group: true,
    };
    let d = data(call(PHONE, notice), EventName::Call);
    assert_eq!(
        (
            d["action"].as_str(),
            d["is_group"].as_bool(),
            d["is_video"].as_bool()
        ),
        (Some("offer_notice"), Some(true), Some(false))
    );
    let accept = CallAction::Accept {
        call_id: "CALL2".into(),
        call_creator: jid(PHONE),
        audio: Vec::new(),
    };
    assert_eq!(
        data(call(PHONE, accept), EventName::Call)["action"],
        "accept"
    );
    let preaccept = CallAction::PreAccept {
        call_id: "CALL2".into(),
        call_creator: jid(PHONE),
        audio: Vec::new(),
    };
    assert_eq!(
        data(call(PHONE, preaccept), EventName::Call)["action"],
        "preaccept"
    );
}

#[test]
fn in_call_signalling_is_not_forwarded_and_is_counted_as_an_incoming_call() {
    let transport = call(
        PHONE,
        CallAction::RelayLatency {
            call_id: "CALL1".into(),
            call_creator: jid(PHONE),
        },
    );
    assert!(map_event(&transport, &MapContext::default()).is_empty());
    assert_eq!(unmapped_kind(&transport), Some("incoming_call"));
}

#[test]
fn missed_calls_and_calls_ended_on_another_device_are_call_outcomes() {
    let missed = MissedCall::new(jid(PHONE), "CALL1".into(), at(), MissedReason::Offline);
    assert_eq!(
        data(Event::MissedCall(missed), EventName::Call),
        json!({
            "call_id": "CALL1", "from": PHONE, "from_phone": "4915112345678",
            "action": "missed", "reason": "offline", "timestamp": 1_700_000_000,
        })
    );
    let remote = MissedCall::new(jid(PHONE), "CALL1".into(), at(), MissedReason::Remote);
    assert_eq!(
        data(Event::MissedCall(remote), EventName::Call)["reason"],
        "remote"
    );
    for (outcome, action) in [
        (ElsewhereOutcome::Accepted, "accepted_elsewhere"),
        (ElsewhereOutcome::Rejected, "rejected_elsewhere"),
    ] {
        let ended = CallEndedElsewhere::new(jid("99887766@lid"), "CALL1".into(), at(), outcome);
        let d = data(Event::CallEndedElsewhere(ended), EventName::Call);
        assert_eq!(
            (d["action"].as_str(), &d["from_phone"]),
            (Some(action), &Value::Null)
        );
        assert!(CALL_ACTIONS.contains(&action));
    }
}

/// `raw` as a zlib stream of one stored (uncompressed) deflate block.
fn zlib_stored(raw: &[u8]) -> Bytes {
    let len = u16::try_from(raw.len()).expect("one stored block");
    let mut out = vec![0x78, 0x01, 0x01];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(raw);
    let (mut a, mut b) = (1u32, 0u32);
    for &x in raw {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    Bytes::from(out)
}

fn conversation(id: &str, messages: u64) -> wa::Conversation {
    wa::Conversation {
        id: id.into(),
        messages: (0..messages)
            .map(|i| wa::HistorySyncMsg {
                msg_order_id: Some(i),
                ..Default::default()
            })
            .collect(),
        unread_count: Some(1),
        ..Default::default()
    }
}

/// A history chunk of these conversations, compressed as the crate gets it.
pub(crate) fn chunk(conversations: Vec<wa::Conversation>) -> (Bytes, usize) {
    let raw = wa::HistorySync {
        conversations,
        chunk_order: Some(2),
        progress: Some(40),
        ..Default::default()
    }
    .encode_to_vec();
    (zlib_stored(&raw), raw.len())
}

#[test]
fn a_history_sync_chunk_reports_its_progress_and_counts_not_its_payload() {
    let (compressed, size) = chunk(vec![conversation(PHONE, 3), conversation(GROUP, 0)]);
    let lazy = LazyHistorySync::new(compressed, size, 3, Some(2), Some(40))
        .with_peer_data_request_session_id(Some("REQ1".into()));
    assert_eq!(
        data(Event::HistorySync(Box::new(lazy)), EventName::HistorySync),
        json!({
            "sync_type": "recent", "chunk_order": 2, "progress": 40,
            "conversations": 2, "messages": 3, "request_id": "REQ1",
        })
    );
}

#[test]
fn a_history_sync_chunk_that_does_not_inflate_still_reports_its_progress() {
    let lazy = LazyHistorySync::new(Bytes::from_static(&[0xFF, 0xFF, 0xFF]), 16, 0, None, None);
    assert_eq!(
        data(Event::HistorySync(Box::new(lazy)), EventName::HistorySync),
        json!({
            "sync_type": "initial_bootstrap", "chunk_order": null, "progress": null,
            "conversations": null, "messages": null, "request_id": null,
        })
    );
}

/// A history message in a conversation.
pub(crate) fn said(
    id: &str,
    from_me: bool,
    participant: Option<&str>,
    content: wa::Message,
) -> wa::HistorySyncMsg {
    wa::HistorySyncMsg {
        message: wa::WebMessageInfo {
            key: wa::MessageKey {
                id: Some(id.into()),
                from_me: Some(from_me),
                participant: participant.map(Into::into),
                ..Default::default()
            }
            .into(),
            message: content.into(),
            message_timestamp: Some(1_600_000_000),
            ..Default::default()
        }
        .into(),
        msg_order_id: None,
    }
}

/// A text message.
pub(crate) fn text(t: &str) -> wa::Message {
    wa::Message {
        conversation: Some(t.into()),
        ..Default::default()
    }
}

#[test]
fn a_history_chunk_gives_its_messages_with_their_authors_to_keep() {
    let reaction = wa::Message {
        reaction_message: wa::message::ReactionMessage {
            text: Some("👍".into()),
            ..Default::default()
        }
        .into(),
        ..Default::default()
    };
    let one_to_one = wa::Conversation {
        id: PHONE.into(),
        messages: vec![
            said("THEIRS", false, None, text("hi")),
            said("OURS", true, None, text("hello")),
            said("LIKE", false, None, reaction),
            wa::HistorySyncMsg::default(),
        ],
        ..Default::default()
    };
    let group = wa::Conversation {
        id: GROUP.into(),
        messages: vec![said(
            "G1",
            false,
            Some("15553334444:2@s.whatsapp.net"),
            text("all"),
        )],
        ..Default::default()
    };
    let (compressed, size) = chunk(vec![one_to_one, group]);
    let lazy = LazyHistorySync::new(compressed, size, 2, None, None);
    let own = Own {
        pn: Some("15550001111@s.whatsapp.net".into()),
        lid: Some("99887766@lid".into()),
    };
    let got = read(&lazy, &own);
    assert_eq!(got.counts, Some((2, 5)));
    let authors: Vec<(&str, &str, &str)> = got
        .rows
        .iter()
        .map(|r| (r.message_id.as_str(), r.chat.as_str(), r.sender.as_str()))
        .collect();
    assert_eq!(
        authors,
        [
            ("THEIRS", PHONE, PHONE),
            ("OURS", PHONE, "15550001111@s.whatsapp.net"),
            ("G1", GROUP, "15553334444@s.whatsapp.net"),
        ],
        "reactions and empty entries are not kept; a group message is its participant's"
    );
    assert_eq!(got.rows[0].timestamp, 1_600_000_000);
    let kept = wa::Message::decode_from_slice(&got.rows[0].proto).unwrap();
    assert_eq!(kept.conversation.as_deref(), Some("hi"));
}

#[test]
fn a_history_chunk_that_does_not_inflate_gives_nothing_to_keep() {
    let lazy = LazyHistorySync::new(Bytes::from_static(&[0xFF, 0xFF, 0xFF]), 16, 0, None, None);
    let got = read(&lazy, &Own::default());
    assert_eq!(got.counts, None);
    assert!(got.rows.is_empty());
}

#[test]
fn messages_are_counted_from_a_conversation_s_field_tags() {
    let bytes = conversation(PHONE, 5).encode_to_vec();
    assert_eq!(message_count(&bytes), Some(5));
    assert_eq!(message_count(&[]), Some(0));
    // A length running past the end is a broken encoding, not a count.
    assert_eq!(message_count(&[0x12, 0x05, 0x00]), None);
}

#[test]
fn every_history_sync_type_name_is_one_the_shape_allows() {
    for t in -1..12 {
        assert!(HISTORY_SYNC_TYPES.contains(&sync_type_name(t)), "{t}");
    }
    assert_eq!(sync_type_name(6), "on_demand");
    assert_eq!(sync_type_name(42), "unknown");
}

#[test]
fn label_edits_and_associations_are_forwarded() {
    let edit = LabelEditUpdate::builder()
        .label_id("5".to_string())
        .timestamp(at())
        .action(Box::new(wa::sync_action_value::LabelEditAction {
            name: Some("Paid".into()),
            color: Some(3),
            ..Default::default()
        }))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::LabelEditUpdate(edit), EventName::LabelUpdate),
        json!({"label_id": "5", "name": "Paid", "color": 3, "predefined_id": null,
            "deleted": false, "timestamp": 1_700_000_000})
    );
    let deleted = LabelEditUpdate::builder()
        .label_id("5".to_string())
        .timestamp(at())
        .action(Box::new(wa::sync_action_value::LabelEditAction {
            deleted: Some(true),
            ..Default::default()
        }))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::LabelEditUpdate(deleted), EventName::LabelUpdate)["deleted"],
        true
    );
    let association = LabelAssociationUpdate::builder()
        .label_id("5".to_string())
        .chat_jid(jid(PHONE))
        .timestamp(at())
        .action(Box::new(wa::sync_action_value::LabelAssociationAction {
            labeled: Some(true),
            ..Default::default()
        }))
        .from_full_sync(true)
        .build();
    assert_eq!(
        data(
            Event::LabelAssociationUpdate(association),
            EventName::LabelAssociation
        ),
        json!({"label_id": "5", "chat_jid": PHONE, "labeled": true, "timestamp": 1_700_000_000})
    );
}

#[test]
fn a_star_names_the_message_and_the_group_sender() {
    let star = StarUpdate::builder()
        .chat_jid(jid(GROUP))
        .participant_jid(jid("4915112345678:2@s.whatsapp.net"))
        .message_id("M1".to_string())
        .from_me(false)
        .timestamp(at())
        .action(Box::new(wa::sync_action_value::StarAction {
            starred: Some(true),
        }))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::StarUpdate(star), EventName::StarUpdate),
        json!({"chat_jid": GROUP, "message_id": "M1", "from_me": false, "participant": PHONE,
            "starred": true, "timestamp": 1_700_000_000})
    );
}

#[test]
fn chat_deletes_clears_and_deletes_for_me_are_forwarded() {
    let deleted = DeleteChatUpdate::builder()
        .jid(jid(PHONE))
        .delete_media(true)
        .timestamp(at())
        .action(Box::default())
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::DeleteChatUpdate(deleted), EventName::ChatDeleted),
        json!({"chat_jid": PHONE, "delete_media": true, "timestamp": 1_700_000_000})
    );
    let cleared = ClearChatUpdate::builder()
        .jid(jid(GROUP))
        .delete_starred(false)
        .delete_media(true)
        .timestamp(at())
        .action(Box::default())
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::ClearChatUpdate(cleared), EventName::ChatCleared),
        json!({"chat_jid": GROUP, "delete_starred": false, "delete_media": true,
            "timestamp": 1_700_000_000})
    );
    let for_me = DeleteMessageForMeUpdate::builder()
        .chat_jid(jid(PHONE))
        .message_id("M2".to_string())
        .from_me(true)
        .timestamp(at())
        .action(Box::new(wa::sync_action_value::DeleteMessageForMeAction {
            delete_media: Some(true),
            message_timestamp: Some(1_699_999_000),
        }))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(
            Event::DeleteMessageForMeUpdate(for_me),
            EventName::MessageDeletedForMe
        ),
        json!({"chat_jid": PHONE, "message_id": "M2", "from_me": true, "participant": null,
            "delete_media": true, "message_timestamp": 1_699_999_000, "timestamp": 1_700_000_000})
    );
}

#[test]
fn a_status_mute_is_forwarded() {
    let mute = UserStatusMuteUpdate::builder()
        .jid(jid(PHONE))
        .muted(true)
        .timestamp(at())
        .action(Box::default())
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(
            Event::UserStatusMuteUpdate(mute),
            EventName::StatusMuteUpdate
        ),
        json!({"jid": PHONE, "muted": true, "timestamp": 1_700_000_000})
    );
}

#[test]
fn identity_number_and_timer_changes_of_a_contact_are_forwarded() {
    let identity = IdentityChange::builder()
        .user(jid(PHONE))
        .lid_user(jid("99887766@lid"))
        .implicit(true)
        .build();
    assert_eq!(
        data(Event::IdentityChange(identity), EventName::IdentityChange),
        json!({"jid": PHONE, "lid": "99887766@lid", "implicit": true})
    );
    let number = ContactNumberChanged::builder()
        .old_jid(jid(PHONE))
        .new_jid(jid("4915199999999@s.whatsapp.net"))
        .new_lid(jid("99887766@lid"))
        .timestamp(at())
        .build();
    assert_eq!(
        data(
            Event::ContactNumberChanged(number),
            EventName::ContactNumberChanged
        ),
        json!({"old_jid": PHONE, "new_jid": "4915199999999@s.whatsapp.net", "old_lid": null,
            "new_lid": "99887766@lid", "timestamp": 1_700_000_000})
    );
    let timer = DisappearingModeChanged::builder()
        .from(jid(PHONE))
        .duration(86_400)
        .setting_timestamp(at())
        .build();
    assert_eq!(
        data(
            Event::DisappearingModeChanged(timer),
            EventName::DisappearingModeUpdate
        ),
        json!({"jid": PHONE, "ephemeral_seconds": 86_400, "timestamp": 1_700_000_000})
    );
}

#[test]
fn an_app_state_sync_failure_names_its_collections() {
    let failed = AppStateSyncFailed::builder()
        .fatal(vec!["critical_block".to_string()])
        .retryable(vec!["regular_high".to_string()])
        .skipped(Vec::new())
        .connected(true)
        .build();
    assert_eq!(
        data(
            Event::AppStateSyncFailed(failed),
            EventName::AppStateSyncFailed
        ),
        json!({"fatal": ["critical_block"], "retryable": ["regular_high"], "skipped": [],
            "connected": true})
    );
}

#[test]
fn a_channel_live_update_carries_its_reaction_counts() {
    let update = NewsletterLiveUpdate::builder()
        .newsletter_jid(jid("120363000000000002@newsletter"))
        .messages(vec![
            NewsletterLiveUpdateMessage::builder()
                .server_id(7)
                .reactions(vec![
                    NewsletterLiveUpdateReaction::builder()
                        .code("👍".to_string())
                        .count(12)
                        .build(),
                ])
                .build(),
        ])
        .build();
    assert_eq!(
        data(
            Event::NewsletterLiveUpdate(update),
            EventName::NewsletterLiveUpdate
        ),
        json!({"jid": "120363000000000002@newsletter",
            "messages": [{"server_id": 7, "reactions": [{"code": "👍", "count": 12}]}]})
    );
}

/// `IncomingCall` as `incoming_call`.
fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Events no mapping forwards.
fn unmapped_events() -> Vec<Event> {
    vec![
        Event::ServerAck(ServerAck::builder().id("A1".to_string()).build()),
        Event::ContactUpdated(
            ContactUpdated::builder()
                .jid(jid(PHONE))
                .timestamp(at())
                .build(),
        ),
        Event::SelfPushNameUpdated(
            SelfPushNameUpdated::builder()
                .from_server(true)
                .old_name("Old".to_string())
                .new_name("New".to_string())
                .build(),
        ),
        Event::PairPasskeyError(
            PairPasskeyError::builder()
                .error("no passkey".to_string())
                .continuation(false)
                .build(),
        ),
    ]
}

#[test]
fn events_no_mapping_forwards_are_counted_by_their_crate_variant() {
    let names: Vec<_> = unmapped_events()
        .iter()
        .map(|ev| {
            assert!(map_event(ev, &MapContext::default()).is_empty());
            unmapped_kind(ev)
        })
        .collect();
    assert_eq!(
        names,
        [
            Some("server_ack"),
            Some("contact_updated"),
            Some("self_push_name_updated"),
            Some("pair_passkey_error")
        ]
    );
}

#[test]
fn message_batches_and_pair_code_refreshes_are_handled_elsewhere_and_not_counted() {
    let batch = MessageBatch::builder()
        .messages(Arc::from(Vec::new()))
        .origin(BatchOrigin::Live)
        .build();
    assert_eq!(unmapped_kind(&Event::Messages(batch)), None);
    let refresh = PairingCodeRefresh::builder().force_manual(false).build();
    assert_eq!(unmapped_kind(&Event::PairingCodeRefresh(refresh)), None);
}

#[test]
fn every_kind_name_is_the_crate_variant_in_snake_case() {
    let mut events = unmapped_events();
    events.push(Event::IdentityChange(
        IdentityChange::builder()
            .user(jid(PHONE))
            .implicit(false)
            .build(),
    ));
    events.push(Event::PairingCodeRefresh(
        PairingCodeRefresh::builder().force_manual(true).build(),
    ));
    events.push(Event::AppStateSyncFailed(
        AppStateSyncFailed::builder()
            .fatal(Vec::new())
            .retryable(Vec::new())
            .skipped(Vec::new())
            .connected(false)
            .build(),
    ));
    for ev in &events {
        assert_eq!(kind_name(ev), snake(&format!("{ev:?}")));
    }
}
