//! Contact and profile events: pictures, about texts, push names, address-book
//! contacts from app-state sync (fed to the contact directory as `appstate`
//! through [`NetworkEvent::Contacts`]) and device lists.

use serde_json::json;
use whatsapp_rust::Jid;
use whatsapp_rust::types::events::{
    ContactUpdate, DeviceListUpdate, PictureUpdate, PushNameUpdate, UserAboutUpdate,
};

use super::{jid_user, other, user_jid};
use crate::NetworkEvent;
use crate::contacts::{AddressBookEntry, ContactSync};
use crate::domain::event::EventName;

/// A profile picture was set or removed.
pub fn picture(e: &PictureUpdate) -> NetworkEvent {
    other(
        EventName::PictureUpdate,
        json!({
            "jid": user_jid(&e.jid),
            "action": if e.removed { "remove" } else { "set" },
            "author": e.author.as_ref().map(user_jid),
            "picture_id": e.picture_id,
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// An about text changed.
pub fn about(e: &UserAboutUpdate) -> NetworkEvent {
    other(
        EventName::UserAboutUpdate,
        json!({
            "jid": user_jid(&e.jid),
            "about": e.status,
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A contact's push name changed (seen on one of its messages). `jid` is the
/// phone JID when the message carried one beside an `@lid`, and `lid` the
/// `@lid` then, so intake learns the pair.
pub fn push_name(e: &PushNameUpdate) -> NetworkEvent {
    let source = &e.message.source;
    let (jid, lid) = match (&source.sender, &source.sender_alt) {
        (s, Some(alt)) if s.is_lid() && alt.is_pn() => (user_jid(alt), Some(user_jid(s))),
        (s, Some(alt)) if s.is_pn() && alt.is_lid() => (user_jid(s), Some(user_jid(alt))),
        (s, _) => (user_jid(s), None),
    };
    let mut data = json!({
        "jid": jid,
        "push_name": e.new_push_name,
        "old_push_name": Some(e.old_push_name.as_str()).filter(|n| !n.is_empty()),
    });
    if let Some(lid) = lid {
        data["lid"] = json!(lid);
    }
    other(EventName::PushNameUpdate, data)
}

/// An address-book contact from app-state sync.
pub fn contact(e: &ContactUpdate) -> Vec<NetworkEvent> {
    let a = &e.action;
    let pn: Option<Jid> = a.pn_jid.as_deref().and_then(|s| s.parse().ok());
    let jid = match (&pn, e.jid.is_pn()) {
        (_, true) => e.jid.clone(),
        (Some(pn), false) => pn.clone(),
        // Only an @lid and no phone: nothing the directory can key on.
        (None, false) => return Vec::new(),
    };
    let lid = if e.jid.is_lid() {
        Some(user_jid(&e.jid))
    } else {
        a.lid_jid.clone()
    };
    vec![NetworkEvent::Contacts(ContactSync {
        full_sync: e.from_full_sync,
        contacts: vec![AddressBookEntry {
            jid: user_jid(&jid),
            phone: jid_user(&jid),
            full_name: a.full_name.clone().filter(|n| !n.is_empty()),
            first_name: a.first_name.clone().filter(|n| !n.is_empty()),
            lid,
            business_name: None,
        }],
        applied: None,
    })]
}

/// A user's linked devices changed.
pub fn device_list(e: &DeviceListUpdate) -> NetworkEvent {
    let devices: Vec<u32> = e.devices.iter().map(|d| d.device_id).collect();
    other(
        EventName::DeviceListUpdate,
        json!({ "jid": user_jid(&e.user), "devices": devices }),
    )
}
