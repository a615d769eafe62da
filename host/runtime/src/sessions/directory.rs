//! The contact directory as intake fills it: what each event teaches about a
//! contact (app-state sync, contact notifications, push names, inbound
//! messages), resolved to a user JID, and stored. The pure part turns events
//! into [`Observation`]s; [`record`] stores them and never fails intake.

use serde_json::{Value, json};

use super::intake::Intake;
use super::lid::{lid_user_of, phone_of};
use super::message_event::Phones;
use crate::domain::contact::{ContactSource, FieldChange, Observation};
use crate::domain::event::{Envelope, EventName};
use crate::domain::jid::Jid;
use crate::domain::time::{sql_datetime, unix_now};
use crate::network::InboundMessage;
use crate::network::contacts::ContactSync;
use crate::store::{Store, StoreResult};

/// The user JID and phone of an account named by `jid` (a user JID, or an
/// `@lid` whose phone the session learned through `learned`), with the lid
/// when it was one.
fn resolve(
    jid: &str,
    learned: &impl Fn(&str) -> Option<String>,
) -> Option<(String, String, Option<String>)> {
    if let Some(phone) = phone_of(jid) {
        return Some((user_jid(&phone)?, phone, None));
    }
    let lid_user = lid_user_of(jid)?;
    let phone = learned(&lid_user)?;
    Some((user_jid(&phone)?, phone, Some(format!("{lid_user}@lid"))))
}

fn user_jid(phone: &str) -> Option<String> {
    Jid::user(phone).ok().map(|j| j.to_string())
}

/// A canonical `<id>@lid` from an event field.
fn lid_field(data: &Value) -> Option<String> {
    let lid = data.get("lid")?.as_str()?;
    lid_user_of(lid).map(|u| format!("{u}@lid"))
}

/// A field the event carries: absent → untouched; `null` or a string → set.
fn field(data: &Value, name: &str) -> FieldChange {
    match data.get(name)? {
        Value::Null => Some(None),
        Value::String(s) => Some(Some(s.clone())),
        _ => None,
    }
}

/// What an app-state sync teaches: the address book's names (authoritative,
/// so a missing name clears the stored one), the lid and business name when
/// the network gave them.
pub(super) fn from_sync(sync: &ContactSync) -> (ContactSource, Vec<Observation>) {
    let source = if sync.full_sync {
        ContactSource::AppstateSync
    } else {
        ContactSource::Appstate
    };
    let obs = sync
        .contacts
        .iter()
        .filter_map(|c| {
            let phone = phone_of(&c.jid).or_else(|| Some(c.phone.clone()))?;
            let mut o = Observation::of(user_jid(&phone)?, phone);
            o.full_name = Some(c.full_name.clone());
            o.first_name = Some(c.first_name.clone());
            o.lid_jid = c
                .lid
                .as_deref()
                .and_then(lid_user_of)
                .map(|u| format!("{u}@lid"));
            if c.business_name.is_some() {
                o.business_name = Some(c.business_name.clone());
            }
            Some(o)
        })
        .collect();
    (source, obs)
}

/// What a `push_name_update` teaches: `{jid, push_name, lid?}`.
pub(super) fn from_push_name(
    data: &Value,
    learned: impl Fn(&str) -> Option<String>,
) -> Option<Observation> {
    let (jid, phone, via_lid) = resolve(data.get("jid")?.as_str()?, &learned)?;
    let mut o = Observation::of(jid, phone);
    o.lid_jid = lid_field(data).or(via_lid);
    o.push_name = Some(Some(data.get("push_name")?.as_str()?.to_owned()));
    Some(o)
}

/// What a `contact_update` notification teaches: `{jid, full_name?,
/// first_name?, lid?}` and, when the network adds it, `business_name`.
pub(super) fn from_contact_update(
    data: &Value,
    learned: impl Fn(&str) -> Option<String>,
) -> Option<Observation> {
    let (jid, phone, via_lid) = resolve(data.get("jid")?.as_str()?, &learned)?;
    let mut o = Observation::of(jid, phone);
    o.lid_jid = lid_field(data).or(via_lid);
    o.full_name = field(data, "full_name");
    o.first_name = field(data, "first_name");
    o.business_name = field(data, "business_name");
    Some(o)
}

/// What an inbound message teaches: a sender whose phone is known (a user
/// JID, or an `@lid` resolved to a phone) and who has a push name.
pub(super) fn from_message(m: &InboundMessage, phones: &Phones) -> Option<Observation> {
    if m.is_from_me || m.push_name.trim().is_empty() {
        return None;
    }
    let phone = phones.from_phone.clone()?;
    let mut o = Observation::of(user_jid(&phone)?, phone);
    o.lid_jid = lid_user_of(&m.from).map(|u| format!("{u}@lid"));
    o.push_name = Some(Some(m.push_name.clone()));
    Some(o)
}

impl Intake {
    fn learned(&self) -> impl Fn(&str) -> Option<String> + '_ {
        |lid| self.store.lid_phone(&self.live.id, lid).ok().flatten()
    }

    /// A fresh pair starts with an empty directory; the full sync that follows fills it.
    pub(super) fn fresh_pair(&self) {
        if let Err(e) = self
            .store
            .clear_contacts(&self.live.id, Some(self.live.incarnation))
        {
            tracing::error!(session = %self.live.id, error = %e, "could not clear the contact directory");
        }
    }

    /// Stores what app-state sync delivered and tells the network whether it
    /// could; an incremental change is also published as `contact_update`.
    pub(super) fn contacts_synced(&mut self, sync: &ContactSync) {
        let (source, observations) = from_sync(sync);
        for o in &observations {
            if let Some(lid_user) = o.lid_jid.as_deref().and_then(lid_user_of)
                && let Err(e) = self.store.learn_lid(
                    &self.live.id,
                    &lid_user,
                    &o.phone,
                    Some(self.live.incarnation),
                )
            {
                tracing::error!(session = %self.live.id, error = %e, "could not store a lid mapping");
            }
        }
        let stored = record(
            &self.store,
            (&self.live.id, self.live.incarnation),
            source,
            &observations,
        );
        if let Some(applied) = &sync.applied {
            applied.done(stored.is_ok());
        }
        if source == ContactSource::Appstate {
            for c in &sync.contacts {
                let mut data = json!({
                    "jid": c.jid,
                    "full_name": c.full_name,
                    "first_name": c.first_name,
                    "timestamp": unix_now(),
                });
                if let Some(lid) = &c.lid {
                    data["lid"] = json!(lid);
                }
                let env = Envelope::now(&self.live.id, EventName::ContactUpdate, data);
                let owed = self.owed();
                self.queue.push(env, owed);
            }
        }
    }

    /// A `push_name_update` or `contact_update` from the network.
    pub(super) fn contact_event(&self, event: EventName, data: &Value) {
        let (source, obs) = match event {
            EventName::PushNameUpdate => (
                ContactSource::PushName,
                from_push_name(data, self.learned()),
            ),
            EventName::ContactUpdate => (
                ContactSource::Notification,
                from_contact_update(data, self.learned()),
            ),
            _ => return,
        };
        if let Some(o) = obs {
            let _ = record(
                &self.store,
                (&self.live.id, self.live.incarnation),
                source,
                &[o],
            );
        }
    }

    /// An inbound message with the sender's phone and push name.
    pub(super) fn contact_from_message(&self, m: &InboundMessage, phones: &Phones) {
        if let Some(o) = from_message(m, phones) {
            let _ = record(
                &self.store,
                (&self.live.id, self.live.incarnation),
                ContactSource::Message,
                &[o],
            );
        }
    }
}

/// Stores observations; a store failure is logged, never raised (intake goes on).
pub(super) fn record(
    store: &Store,
    (session_id, incarnation): (&str, u64),
    source: ContactSource,
    observations: &[Observation],
) -> StoreResult<usize> {
    let now = sql_datetime(unix_now());
    let result = store.observe_contacts(session_id, observations, source, &now, Some(incarnation));
    match &result {
        Ok(n) if *n > 0 => {
            tracing::debug!(session = %session_id, source = source.as_str(), changed = n, "contact directory updated")
        }
        Ok(_) => {}
        Err(e) => {
            tracing::error!(session = %session_id, error = %e, "could not store contacts")
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::network::contacts::AddressBookEntry;

    fn learned(lid: &str) -> Option<String> {
        (lid == "777").then(|| "15550007777".to_owned())
    }

    #[test]
    fn a_full_sync_is_appstate_sync_and_an_incremental_one_is_appstate() {
        let entry = AddressBookEntry {
            jid: "15550001111@s.whatsapp.net".into(),
            phone: "15550001111".into(),
            full_name: Some("Ann Smith".into()),
            first_name: None,
            lid: Some("777@lid".into()),
            business_name: None,
        };
        let full = ContactSync {
            full_sync: true,
            contacts: vec![entry.clone()],
            applied: None,
        };
        let (source, obs) = from_sync(&full);
        assert_eq!(source, ContactSource::AppstateSync);
        assert_eq!(obs[0].full_name, Some(Some("Ann Smith".into())));
        assert_eq!(
            obs[0].first_name,
            Some(None),
            "the address book is authoritative"
        );
        assert_eq!(obs[0].business_name, None, "left untouched");
        assert_eq!(obs[0].lid_jid.as_deref(), Some("777@lid"));
        let inc = ContactSync {
            full_sync: false,
            ..full
        };
        assert_eq!(from_sync(&inc).0, ContactSource::Appstate);
    }

    #[test]
    fn a_push_name_of_a_learned_lid_lands_on_its_phone() {
        let o = from_push_name(&json!({ "jid": "777@lid", "push_name": "Ann" }), learned).unwrap();
        assert_eq!(o.jid, "15550007777@s.whatsapp.net");
        assert_eq!(o.lid_jid.as_deref(), Some("777@lid"));
        assert!(from_push_name(&json!({ "jid": "888@lid", "push_name": "X" }), learned).is_none());
    }

    #[test]
    fn a_contact_update_sets_only_the_fields_it_carries() {
        let o = from_contact_update(
            &json!({ "jid": "15550001111@s.whatsapp.net", "full_name": null, "business_name": "ACME" }),
            learned,
        )
        .unwrap();
        assert_eq!(o.full_name, Some(None));
        assert_eq!(o.first_name, None);
        assert_eq!(o.business_name, Some(Some("ACME".into())));
    }

    #[test]
    fn a_message_teaches_only_with_a_phone_and_a_push_name_and_not_from_me() {
        let m = InboundMessage {
            from: "777@lid".into(),
            push_name: "Ann".into(),
            ..InboundMessage::default()
        };
        let known = Phones {
            from_phone: Some("15550007777".into()),
            chat_phone: None,
        };
        let o = from_message(&m, &known).unwrap();
        assert_eq!(o.jid, "15550007777@s.whatsapp.net");
        assert_eq!(o.lid_jid.as_deref(), Some("777@lid"));
        let unknown = Phones {
            from_phone: None,
            chat_phone: None,
        };
        assert!(from_message(&m, &unknown).is_none());
        let nameless = InboundMessage {
            push_name: " ".into(),
            ..m.clone()
        };
        assert!(from_message(&nameless, &known).is_none());
        let mine = InboundMessage {
            is_from_me: true,
            ..m
        };
        assert!(from_message(&mine, &known).is_none());
    }
}
