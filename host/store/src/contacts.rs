//! The contact directory of each session: (session id, user JID) → stored
//! contact. Written only by intake, as a side effect of the event stream.

use redb::{ReadableTable, WriteTransaction};

use super::tables::CONTACTS;
use super::{Store, StoreResult, decode, delete_session_keys, encode};
use crate::domain::contact::{ContactSource, Observation, StoredContact, merge};

impl Store {
    /// Merges observations into a session's directory in one transaction
    /// (see [`merge`]), for its `incarnation` only when given (nothing is
    /// written for another); returns how many contacts changed.
    pub fn observe_contacts(
        &self,
        session_id: &str,
        observations: &[Observation],
        source: ContactSource,
        now: &str,
        incarnation: Option<u64>,
    ) -> StoreResult<usize> {
        if observations.is_empty() {
            return Ok(0);
        }
        // A full sync records even unchanged entries (see `merge`).
        let memo = source != ContactSource::AppstateSync;
        if memo && self.contact_memo.knows_all(session_id, observations) {
            return Ok(0);
        }
        let generation = self.contact_memo.generation();
        // Most observations (every message from a known sender) change
        // nothing: a read transaction tells, and saves a durable commit.
        let changes = self.read(|tx| {
            let t = tx.open_table(CONTACTS)?;
            for obs in observations {
                let current: Option<StoredContact> = t
                    .get((session_id, obs.jid.as_str()))?
                    .map(|v| decode(v.value()))
                    .transpose()?;
                if merge(current.as_ref(), obs, source, now).is_some() {
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
        if !changes {
            if memo {
                self.contact_memo
                    .remember(generation, session_id, observations);
            }
            return Ok(0);
        }
        let written = self.write(|tx| {
            if !super::sessions::owned_in(tx, session_id, incarnation)? {
                return Ok(0);
            }
            let mut t = tx.open_table(CONTACTS)?;
            let mut changed = 0;
            for obs in observations {
                let key = (session_id, obs.jid.as_str());
                let current: Option<StoredContact> =
                    t.get(key)?.map(|v| decode(v.value())).transpose()?;
                if let Some(next) = merge(current.as_ref(), obs, source, now) {
                    t.insert(key, encode(&next)?.as_slice())?;
                    changed += 1;
                }
            }
            Ok(changed)
        });
        // Whether or not it was committed (the memo only forgets).
        self.contact_memo.changed();
        written
    }

    /// One stored contact.
    pub fn get_contact(&self, session_id: &str, jid: &str) -> StoreResult<Option<StoredContact>> {
        self.read(|tx| {
            let t = tx.open_table(CONTACTS)?;
            t.get((session_id, jid))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// A session's stored contacts that satisfy `keep`, ordered by JID.
    pub fn list_contacts(
        &self,
        session_id: &str,
        keep: impl Fn(&StoredContact) -> bool,
    ) -> StoreResult<Vec<StoredContact>> {
        self.read(|tx| {
            let t = tx.open_table(CONTACTS)?;
            let mut out = Vec::new();
            for row in t.range((session_id, "")..)? {
                let (k, v) = row?;
                if k.value().0 != session_id {
                    break;
                }
                let c: StoredContact = decode(v.value())?;
                if keep(&c) {
                    out.push(c);
                }
            }
            Ok(out)
        })
    }

    /// Empties a session's directory (a fresh pair starts with none), of
    /// its `incarnation` only when given.
    pub fn clear_contacts(&self, session_id: &str, incarnation: Option<u64>) -> StoreResult<()> {
        let cleared = self.write(|tx| {
            if !super::sessions::owned_in(tx, session_id, incarnation)? {
                return Ok(());
            }
            delete_session_contacts(tx, session_id)
        });
        self.contact_memo.changed();
        cleared
    }
}

/// Removes a session's directory inside `tx` (the session delete cascade).
pub(crate) fn delete_session_contacts(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    delete_session_keys(tx, CONTACTS, session_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::session::SessionRecord;

    fn named(jid_user: &str, push: &str) -> Observation {
        let mut o = Observation::of(format!("{jid_user}@s.whatsapp.net"), jid_user);
        o.push_name = Some(Some(push.into()));
        o
    }

    #[test]
    fn contacts_are_per_session_ordered_by_jid_and_go_with_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .insert_session(&SessionRecord::new("a".into(), None, "sim".into(), None))
            .unwrap();
        let obs = [named("15550000002", "Bo"), named("15550000001", "Al")];
        let t = "2026-01-01 00:00:00";
        assert_eq!(
            store
                .observe_contacts("a", &obs, ContactSource::PushName, t, None)
                .unwrap(),
            2
        );
        assert_eq!(
            store
                .observe_contacts("a", &obs, ContactSource::Message, t, None)
                .unwrap(),
            0,
            "nothing changed"
        );
        store
            .observe_contacts("ab", &obs[..1], ContactSource::PushName, t, None)
            .unwrap();
        let listed = store.list_contacts("a", |_| true).unwrap();
        let phones: Vec<_> = listed.iter().map(|c| c.phone.as_str()).collect();
        assert_eq!(phones, ["15550000001", "15550000002"]);
        assert_eq!(listed[0].source, ContactSource::PushName);
        store.delete_session("a").unwrap();
        assert!(store.list_contacts("a", |_| true).unwrap().is_empty());
        assert_eq!(store.list_contacts("ab", |_| true).unwrap().len(), 1);
        store.clear_contacts("ab", None).unwrap();
        assert!(store.get_contact("ab", &obs[0].jid).unwrap().is_none());
    }

    #[test]
    fn an_observation_known_to_change_nothing_is_seen_again_once_the_directory_changed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .insert_session(&SessionRecord::new("a".into(), None, "sim".into(), None))
            .unwrap();
        let t = "2026-01-01 00:00:00";
        let observe = |o: &Observation| {
            store
                .observe_contacts(
                    "a",
                    std::slice::from_ref(o),
                    ContactSource::Message,
                    t,
                    None,
                )
                .unwrap()
        };
        let bo = named("15550000002", "Bo");
        let bob = named("15550000002", "Bob");
        assert_eq!(observe(&bo), 1);
        // Remembered as changing nothing, then asked again from memory.
        assert_eq!(observe(&bo), 0);
        assert_eq!(observe(&bo), 0);
        // Another name, then the first again: each is a change.
        assert_eq!(observe(&bob), 1);
        assert_eq!(observe(&bo), 1, "the push name changed back");
        assert_eq!(observe(&bo), 0);
        let push = |c: Option<StoredContact>| c.and_then(|c| c.push_name);
        assert_eq!(
            push(store.get_contact("a", &bo.jid).unwrap()).as_deref(),
            Some("Bo")
        );
        // A cleared directory learns the contact again.
        store.clear_contacts("a", None).unwrap();
        assert_eq!(observe(&bo), 1);
        assert_eq!(observe(&bo), 0);
        // As does a session deleted and made again under the same id.
        store.delete_session("a").unwrap();
        store
            .insert_session(&SessionRecord::new("a".into(), None, "sim".into(), None))
            .unwrap();
        assert_eq!(observe(&bo), 1);
        assert!(store.get_contact("a", &bo.jid).unwrap().is_some());
    }
}
