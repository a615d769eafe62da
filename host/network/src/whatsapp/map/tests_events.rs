//! Mapping tests for receipts, presence, contact, app-state and group events.

use serde_json::{Value, json};
use whatsapp_rust::Jid;
use whatsapp_rust::chrono::DateTime;
use whatsapp_rust::types::events::{
    ArchiveUpdate, ChatPresenceUpdate, ContactUpdate, DeviceListUpdate, DeviceListUpdateType,
    DeviceNotificationInfo, Event, GroupUpdate, MarkChatAsReadUpdate, MuteUpdate, PictureUpdate,
    PinUpdate, PresenceUpdate, PushNameUpdate, Receipt, UserAboutUpdate,
};
use whatsapp_rust::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::types::presence::{ChatPresence, ChatPresenceMedia, ReceiptType};
use whatsapp_rust::wacore::stanza::groups::{GroupNotificationAction, GroupParticipantInfo};
use whatsapp_rust::waproto::whatsapp as wa;

use super::{MapContext, map_event};
use crate::NetworkEvent;
use crate::contacts::{AddressBookEntry, ContactSync};
use crate::domain::event::EventName;
use crate::domain::event_data::validate;

fn jid(s: &str) -> Jid {
    s.parse().unwrap()
}

fn at() -> DateTime<whatsapp_rust::chrono::Utc> {
    DateTime::from_timestamp(1_700_000_000, 0).unwrap()
}

fn cx() -> MapContext {
    MapContext {
        now: 0,
        own_users: vec!["15550001111".into(), "777000".into()],
        push_name: None,
    }
}

fn source(chat: &str, sender: &str) -> MessageSource {
    MessageSource {
        chat: jid(chat),
        sender: jid(sender),
        ..Default::default()
    }
}

/// The data of the one event `ev` maps to, checked against its shape.
fn data(ev: Event, want: EventName) -> Value {
    let out = map_event(&ev, &cx());
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

#[test]
fn read_and_delivery_receipts_are_forwarded_and_retries_are_not() {
    let r = |t| {
        Receipt::builder()
            .source(source(
                "4915112345678@s.whatsapp.net",
                "4915112345678:2@s.whatsapp.net",
            ))
            .message_ids(vec!["M1".to_string(), "M2".to_string()])
            .timestamp(at())
            .r#type(t)
            .offline(false)
            .build()
    };
    assert_eq!(
        data(Event::Receipt(r(ReceiptType::Read)), EventName::Receipt),
        json!({"message_ids": ["M1", "M2"], "chat": "4915112345678@s.whatsapp.net",
            "sender": "4915112345678@s.whatsapp.net", "type": "read", "timestamp": 1_700_000_000,
            "offline": false})
    );
    for (t, name) in [
        (ReceiptType::Sent, "sent"),
        (ReceiptType::ServerError, "server_error"),
        (ReceiptType::ReadSelf, "read_self"),
        (ReceiptType::PlayedSelf, "played_self"),
    ] {
        assert_eq!(data(Event::Receipt(r(t)), EventName::Receipt)["type"], name);
    }
    let mut drained = r(ReceiptType::Delivered);
    drained.offline = true;
    assert_eq!(
        data(Event::Receipt(drained), EventName::Receipt)["offline"],
        true
    );
    assert_eq!(
        data(
            Event::Receipt(r(ReceiptType::Delivered)),
            EventName::Receipt
        )["type"],
        "delivered"
    );
    assert_eq!(
        data(Event::Receipt(r(ReceiptType::Played)), EventName::Receipt)["type"],
        "played"
    );
    assert!(map_event(&Event::Receipt(r(ReceiptType::Retry)), &cx()).is_empty());
}

#[test]
fn presence_and_typing_are_forwarded() {
    let p = PresenceUpdate::builder()
        .from(jid("4915112345678@s.whatsapp.net"))
        .unavailable(true)
        .last_seen(at())
        .build();
    assert_eq!(
        data(Event::Presence(p), EventName::Presence),
        json!({"jid": "4915112345678@s.whatsapp.net", "available": false, "last_seen": 1_700_000_000})
    );
    let c = ChatPresenceUpdate::builder()
        .source(source(
            "4915112345678@s.whatsapp.net",
            "4915112345678@s.whatsapp.net",
        ))
        .state(ChatPresence::Composing)
        .media(ChatPresenceMedia::Audio)
        .build();
    assert_eq!(
        data(Event::ChatPresence(c), EventName::ChatPresence),
        json!({"chat": "4915112345678@s.whatsapp.net", "sender": "4915112345678@s.whatsapp.net", "state": "composing", "media": "audio"})
    );
}

#[test]
fn picture_about_and_device_list_changes_are_forwarded() {
    let pic = PictureUpdate::builder()
        .jid(jid("4915112345678@s.whatsapp.net"))
        .timestamp(at())
        .removed(false)
        .picture_id("123".to_string())
        .build();
    let d = data(Event::PictureUpdate(pic), EventName::PictureUpdate);
    assert_eq!(
        (
            d["jid"].as_str(),
            d["action"].as_str(),
            d["picture_id"].as_str()
        ),
        (
            Some("4915112345678@s.whatsapp.net"),
            Some("set"),
            Some("123")
        )
    );
    let about = UserAboutUpdate::builder()
        .jid(jid("4915112345678@s.whatsapp.net"))
        .status("busy".to_string())
        .timestamp(at())
        .build();
    assert_eq!(
        data(Event::UserAboutUpdate(about), EventName::UserAboutUpdate)["about"],
        "busy"
    );
    let devices = DeviceListUpdate::builder()
        .user(jid("4915112345678@s.whatsapp.net"))
        .update_type(DeviceListUpdateType::Add)
        .devices(vec![
            DeviceNotificationInfo::builder().device_id(0).build(),
            DeviceNotificationInfo::builder().device_id(3).build(),
        ])
        .build();
    assert_eq!(
        data(
            Event::DeviceListUpdate(devices),
            EventName::DeviceListUpdate
        ),
        json!({"jid": "4915112345678@s.whatsapp.net", "devices": [0, 3]})
    );
}

#[test]
fn a_push_name_from_a_lid_sender_teaches_the_lid() {
    let mut s = source("99887766@lid", "99887766@lid");
    s.sender_alt = Some(jid("4915112345678@s.whatsapp.net"));
    let info = MessageInfo {
        source: s,
        ..Default::default()
    };
    let ev = PushNameUpdate::builder()
        .jid(jid("99887766@lid"))
        .message(Box::new(info))
        .old_push_name(String::new())
        .new_push_name("Greta".to_string())
        .build();
    assert_eq!(
        data(Event::PushNameUpdate(ev), EventName::PushNameUpdate),
        json!({"jid": "4915112345678@s.whatsapp.net", "push_name": "Greta", "old_push_name": null, "lid": "99887766@lid"})
    );
}

#[test]
fn an_address_book_contact_feeds_the_directory() {
    let action = wa::sync_action_value::ContactAction {
        full_name: Some("Greta Berg".into()),
        first_name: Some("Greta".into()),
        lid_jid: Some("99887766@lid".into()),
        ..Default::default()
    };
    let ev = ContactUpdate::builder()
        .jid(jid("4915112345678@s.whatsapp.net"))
        .timestamp(at())
        .action(Box::new(action))
        .from_full_sync(true)
        .build();
    let want = ContactSync {
        full_sync: true,
        contacts: vec![AddressBookEntry {
            jid: "4915112345678@s.whatsapp.net".into(),
            phone: "4915112345678".into(),
            full_name: Some("Greta Berg".into()),
            first_name: Some("Greta".into()),
            lid: Some("99887766@lid".into()),
            business_name: None,
        }],
        applied: None,
    };
    assert_eq!(
        map_event(&Event::ContactUpdate(ev), &cx()),
        vec![NetworkEvent::Contacts(want)]
    );
}

#[test]
fn pin_mute_archive_and_read_changes_are_forwarded() {
    let chat = || jid("4915112345678@s.whatsapp.net");
    let pin = PinUpdate::builder()
        .jid(chat())
        .timestamp(at())
        .action(Box::new(wa::sync_action_value::PinAction {
            pinned: Some(true),
        }))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::PinUpdate(pin), EventName::PinUpdate),
        json!({"chat_jid": "4915112345678@s.whatsapp.net", "pinned": true, "timestamp": 1_700_000_000})
    );
    let mute_action = wa::sync_action_value::MuteAction {
        muted: Some(true),
        mute_end_timestamp: Some(1_700_003_600),
        ..Default::default()
    };
    let mute = MuteUpdate::builder()
        .jid(chat())
        .timestamp(at())
        .action(Box::new(mute_action))
        .from_full_sync(false)
        .build();
    let d = data(Event::MuteUpdate(mute), EventName::MuteUpdate);
    assert_eq!(
        (d["muted"].as_bool(), d["mute_end_timestamp"].as_i64()),
        (Some(true), Some(1_700_003_600))
    );
    let archive_action = wa::sync_action_value::ArchiveChatAction {
        archived: Some(false),
        ..Default::default()
    };
    let archive = ArchiveUpdate::builder()
        .jid(chat())
        .timestamp(at())
        .action(Box::new(archive_action))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::ArchiveUpdate(archive), EventName::ArchiveUpdate)["archived"],
        false
    );
    let read_action = wa::sync_action_value::MarkChatAsReadAction {
        read: Some(true),
        ..Default::default()
    };
    let read = MarkChatAsReadUpdate::builder()
        .jid(chat())
        .timestamp(at())
        .action(Box::new(read_action))
        .from_full_sync(false)
        .build();
    assert_eq!(
        data(Event::MarkChatAsReadUpdate(read), EventName::MarkChatAsRead)["read"],
        true
    );
}

fn participant(j: &str) -> GroupParticipantInfo {
    GroupParticipantInfo {
        jid: jid(j),
        phone_number: None,
        display_name: None,
        r#type: None,
        lid: None,
        username: None,
        join_time: None,
        group_history_sent_state: None,
    }
}

fn group(action: GroupNotificationAction) -> Event {
    Event::GroupUpdate(
        GroupUpdate::builder()
            .group_jid(jid("120363000000000001@g.us"))
            .participant(jid("15559990000@s.whatsapp.net"))
            .timestamp(at())
            .is_lid_addressing_mode(false)
            .action(action)
            .build(),
    )
}

#[test]
fn group_changes_are_group_updates_and_our_own_add_is_a_join() {
    let d = data(
        group(GroupNotificationAction::Subject {
            subject: "Team".into(),
            subject_owner: None,
            subject_time: None,
        }),
        EventName::GroupUpdate,
    );
    assert_eq!(
        d,
        json!({"jid": "120363000000000001@g.us", "sender": "15559990000@s.whatsapp.net", "timestamp": 1_700_000_000, "name": "Team"})
    );
    let add = |who: &str| GroupNotificationAction::Add {
        participants: vec![participant(who)],
        reason: None,
    };
    assert_eq!(
        data(
            group(add("4915112345678@s.whatsapp.net")),
            EventName::GroupUpdate
        )["join"],
        json!(["4915112345678@s.whatsapp.net"])
    );
    let joined = data(
        group(add("15550001111@s.whatsapp.net")),
        EventName::JoinedGroup,
    );
    assert_eq!(
        (joined["jid"].as_str(), joined["sender"].as_str()),
        (
            Some("120363000000000001@g.us"),
            Some("15559990000@s.whatsapp.net")
        )
    );
    assert_eq!(
        data(
            group(GroupNotificationAction::Announce),
            EventName::GroupUpdate
        )["announce"],
        true
    );
    let eph = data(
        group(GroupNotificationAction::Ephemeral {
            expiration: 86_400,
            trigger: None,
        }),
        EventName::GroupUpdate,
    );
    assert_eq!(eph["ephemeral_seconds"], 86_400);
    assert!(map_event(&group(GroupNotificationAction::Suspended), &cx()).is_empty());
}

#[test]
fn a_group_created_with_the_account_is_a_join_and_a_deleted_one_a_leave() {
    use whatsapp_rust::wacore_binary::builder::NodeBuilder;
    let raw = NodeBuilder::new("create")
        .children([NodeBuilder::new("group")
            .attr("id", "120363000000000001")
            .attr("subject", "New team")
            .attr("creator", "15559990000@s.whatsapp.net")
            .children([
                NodeBuilder::new("participant")
                    .attr("jid", "15559990000@s.whatsapp.net")
                    .attr("type", "superadmin")
                    .build(),
                NodeBuilder::new("participant")
                    .attr("jid", "15550001111@s.whatsapp.net")
                    .build(),
            ])
            .build()])
        .build();
    let joined = data(
        group(GroupNotificationAction::Create { raw }),
        EventName::JoinedGroup,
    );
    assert_eq!(
        joined,
        json!({
            "jid": "120363000000000001@g.us",
            "name": "New team",
            "reason": "create",
            "sender": "15559990000@s.whatsapp.net",
            "participants": ["15559990000@s.whatsapp.net", "15550001111@s.whatsapp.net"],
        })
    );
    let deleted = data(
        group(GroupNotificationAction::Delete { reason: None }),
        EventName::GroupUpdate,
    );
    assert_eq!(deleted["leave"], json!(["15550001111@s.whatsapp.net"]));
    assert_eq!(deleted["deleted"], true);
    let renumbered = data(
        group(GroupNotificationAction::Modify {
            participants: vec![participant("4915112345678@s.whatsapp.net")],
        }),
        EventName::GroupUpdate,
    );
    assert_eq!(
        renumbered["renumbered"],
        json!(["4915112345678@s.whatsapp.net"])
    );
}
