//! Session records, and the cascade that removes everything of a session.

use redb::{ReadableTable, WriteTransaction};

use super::tables::{
    LID_MAP, MEDIA, MESSAGES, SESSION_INCARNATION_KEY, SESSION_INCARNATIONS, SESSIONS, SIM_OUTBOX,
    SIM_OUTBOX_IDS, WEBHOOK_DLQ, WEBHOOKS,
};
use super::{
    Store, StoreResult, decode, delete_session_keys, delete_session_range, encode, next_seq,
};
use crate::domain::session::SessionRecord;

/// The live incarnation of a session inside `tx`; `None` when there is no
/// such session.
pub(crate) fn incarnation_in(
    t: &impl ReadableTable<&'static str, u64>,
    session_id: &str,
) -> StoreResult<Option<u64>> {
    Ok(t.get(session_id)?.map(|v| v.value()))
}

/// Whether `incarnation` of `session_id` is the live one inside `tx`.
pub(crate) fn is_live_in(
    tx: &WriteTransaction,
    session_id: &str,
    incarnation: u64,
) -> StoreResult<bool> {
    let t = tx.open_table(SESSION_INCARNATIONS)?;
    Ok(incarnation_in(&t, session_id)? == Some(incarnation))
}

/// Whether a write for `incarnation` of `session_id` may go ahead inside
/// `tx`: `None` (a write made for whatever session has the id now, by a
/// caller that checked it exists) always may; an incarnation only while it
/// is the live one.
pub(crate) fn owned_in(
    tx: &WriteTransaction,
    session_id: &str,
    incarnation: Option<u64>,
) -> StoreResult<bool> {
    match incarnation {
        None => Ok(true),
        Some(i) => is_live_in(tx, session_id, i),
    }
}

/// Gives every session of a store from before incarnations were kept the
/// one its record holds (0), so the check of later writes finds it.
pub(crate) fn index_incarnations(tx: &WriteTransaction) -> StoreResult<()> {
    let records: Vec<SessionRecord> = {
        let t = tx.open_table(SESSIONS)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            out.push(decode(row?.1.value())?);
        }
        out
    };
    let mut t = tx.open_table(SESSION_INCARNATIONS)?;
    for r in records {
        if t.get(r.id.as_str())?.is_none() {
            t.insert(r.id.as_str(), r.incarnation)?;
        }
    }
    Ok(())
}

impl Store {
    /// Inserts a new session; returns `false` (and writes nothing) if the id is taken.
    pub fn insert_session(&self, record: &SessionRecord) -> StoreResult<bool> {
        Ok(self.create_session(record.clone())?.is_some())
    }

    /// Inserts a new session under a new incarnation; returns the record as
    /// stored, or `None` (and writes nothing) if the id is taken.
    pub fn create_session(&self, mut record: SessionRecord) -> StoreResult<Option<SessionRecord>> {
        let _order = self.sessions.lock();
        let inserted = self.write(|tx| {
            if tx.open_table(SESSIONS)?.get(record.id.as_str())?.is_some() {
                return Ok(None);
            }
            record.incarnation = next_seq(tx, SESSION_INCARNATION_KEY)?;
            let bytes = encode(&record)?;
            tx.open_table(SESSIONS)?
                .insert(record.id.as_str(), bytes.as_slice())?;
            tx.open_table(SESSION_INCARNATIONS)?
                .insert(record.id.as_str(), record.incarnation)?;
            Ok(Some(record))
        })?;
        if let Some(r) = &inserted {
            self.sessions.put(r.clone());
        }
        Ok(inserted)
    }

    /// Whether `incarnation` is the live one of `session_id` (it exists and
    /// was not deleted and created again since).
    pub fn is_live_incarnation(&self, session_id: &str, incarnation: u64) -> StoreResult<bool> {
        self.read(|tx| {
            let t = tx.open_table(SESSION_INCARNATIONS)?;
            Ok(incarnation_in(&t, session_id)? == Some(incarnation))
        })
    }

    /// Replaces a session record (it must exist; a deleted session is not revived).
    pub fn update_session(&self, record: &SessionRecord) -> StoreResult<bool> {
        let bytes = encode(record)?;
        let _order = self.sessions.lock();
        let updated = self.write(|tx| {
            let mut t = tx.open_table(SESSIONS)?;
            if t.get(record.id.as_str())?.is_none() {
                return Ok(false);
            }
            t.insert(record.id.as_str(), bytes.as_slice())?;
            Ok(true)
        })?;
        if updated {
            self.sessions.put(record.clone());
        }
        Ok(updated)
    }

    /// One session record (from memory once it has been read or written).
    pub fn get_session(&self, id: &str) -> StoreResult<Option<SessionRecord>> {
        if let Some(cached) = self.sessions.get(id) {
            return Ok(Some(SessionRecord::clone(&cached)));
        }
        let _order = self.sessions.lock();
        if let Some(cached) = self.sessions.get(id) {
            return Ok(Some(SessionRecord::clone(&cached)));
        }
        let record: Option<SessionRecord> = self.read(|tx| {
            let t = tx.open_table(SESSIONS)?;
            t.get(id)?.map(|v| decode(v.value())).transpose()
        })?;
        if let Some(r) = &record {
            self.sessions.put(r.clone());
        }
        Ok(record)
    }

    /// Every session record, ordered by id.
    pub fn list_sessions(&self) -> StoreResult<Vec<SessionRecord>> {
        self.read(|tx| {
            let t = tx.open_table(SESSIONS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                let (_, v) = row?;
                out.push(decode(v.value())?);
            }
            Ok(out)
        })
    }

    /// Deletes a session and everything stored for it, in one transaction.
    /// Returns `false` when there was no such session.
    pub fn delete_session(&self, id: &str) -> StoreResult<bool> {
        let _order = self.sessions.lock();
        let existed = self.write(|tx| {
            let existed = tx.open_table(SESSIONS)?.remove(id)?.is_some();
            tx.open_table(SESSION_INCARNATIONS)?.remove(id)?;
            if existed {
                delete_session_range(tx, MESSAGES, id)?;
                delete_session_range(tx, SIM_OUTBOX, id)?;
                delete_session_range(tx, WEBHOOK_DLQ, id)?;
                super::outbox::delete_session_outbox(tx, id)?;
                delete_session_keys(tx, LID_MAP, id)?;
                delete_session_keys(tx, super::tables::LID_BY_PHONE, id)?;
                delete_session_keys(tx, MEDIA, id)?;
                delete_session_keys(tx, SIM_OUTBOX_IDS, id)?;
                delete_session_keys(tx, WEBHOOKS, id)?;
                super::chats::delete_session_chats(tx, id)?;
                super::contacts::delete_session_contacts(tx, id)?;
                super::sim_account::delete_session_sim_account(tx, id)?;
                super::blasts::delete_session_blasts(tx, id)?;
                super::scheduled::delete_session_scheduled(tx, id)?;
                super::whatsapp::delete_session_whatsapp(tx, id)?;
            }
            Ok(existed)
        })?;
        self.contact_memo.changed();
        self.sessions.remove(id);
        Ok(existed)
    }
}

impl Store {
    /// Reads, changes and writes back one session record in a single
    /// transaction; `None` when there is no such session.
    pub fn modify_session(
        &self,
        id: &str,
        f: impl FnOnce(&mut SessionRecord),
    ) -> StoreResult<Option<SessionRecord>> {
        self.modify_session_of(id, None, f)
    }

    /// [`Store::modify_session`] for one incarnation of the session: `None`
    /// (nothing written) when the session of that id is another one now.
    pub fn modify_session_of(
        &self,
        id: &str,
        incarnation: Option<u64>,
        f: impl FnOnce(&mut SessionRecord),
    ) -> StoreResult<Option<SessionRecord>> {
        let _order = self.sessions.lock();
        let modified = self.write(|tx| {
            let mut t = tx.open_table(SESSIONS)?;
            let Some(mut record): Option<SessionRecord> =
                t.get(id)?.map(|v| decode(v.value())).transpose()?
            else {
                return Ok(None);
            };
            if incarnation.is_some_and(|i| i != record.incarnation) {
                return Ok(None);
            }
            f(&mut record);
            t.insert(id, encode(&record)?.as_slice())?;
            Ok(Some(record))
        })?;
        if let Some(r) = &modified {
            self.sessions.put(r.clone());
        }
        Ok(modified)
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::domain::message::{Direction, MessageRecord};
    use crate::domain::session::SessionRecord;

    fn record(id: &str) -> SessionRecord {
        SessionRecord::new(id.into(), None, "sim".into(), None)
    }

    fn message(session: &str, id: &str) -> MessageRecord {
        MessageRecord {
            message_id: id.into(),
            session_id: session.into(),
            direction: Direction::Outbound,
            chat: "123456@s.whatsapp.net".into(),
            sender: None,
            kind: "text".into(),
            body: serde_json::json!({"text": "hi"}),
            timestamp: 1,
        }
    }

    #[test]
    fn a_duplicate_session_id_is_not_inserted_twice() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.insert_session(&record("a")).unwrap());
        assert!(!store.insert_session(&record("a")).unwrap());
        assert_eq!(store.list_sessions().unwrap().len(), 1);
    }

    #[test]
    fn deleting_a_session_removes_its_messages_but_not_another_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.insert_session(&record("a")).unwrap();
        store.insert_session(&record("ab")).unwrap();
        store.append_message(&message("a", "m1")).unwrap();
        store.append_message(&message("ab", "m2")).unwrap();
        assert!(store.delete_session("a").unwrap());
        assert!(store.list_messages("a", 0, 10).unwrap().is_empty());
        assert_eq!(store.list_messages("ab", 0, 10).unwrap().len(), 1);
        assert!(!store.delete_session("a").unwrap());
    }

    #[test]
    fn updating_a_deleted_session_does_not_revive_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let r = record("a");
        store.insert_session(&r).unwrap();
        store.delete_session("a").unwrap();
        assert!(!store.update_session(&r).unwrap());
        assert!(store.get_session("a").unwrap().is_none());
    }

    #[test]
    fn a_session_read_after_each_kind_of_write_is_what_was_committed() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store.insert_session(&record("a")).unwrap();
            assert!(!store.get_session("a").unwrap().unwrap().paused);
            store.modify_session("a", |r| r.paused = true).unwrap();
            assert!(store.get_session("a").unwrap().unwrap().paused);
            let mut named = store.get_session("a").unwrap().unwrap();
            named.name = Some("front desk".into());
            store.update_session(&named).unwrap();
            assert_eq!(
                store.get_session("a").unwrap().unwrap().name.as_deref(),
                Some("front desk")
            );
            // A failed modify (no such session) leaves nothing behind.
            assert!(
                store
                    .modify_session("zz", |r| r.paused = true)
                    .unwrap()
                    .is_none()
            );
            assert!(store.get_session("zz").unwrap().is_none());
            store.insert_session(&record("b")).unwrap();
            assert!(store.delete_session("b").unwrap());
            assert!(store.get_session("b").unwrap().is_none());
        }
        // What was read from memory is what a fresh store reads from disk.
        let store = Store::open(dir.path()).unwrap();
        let a = store.get_session("a").unwrap().unwrap();
        assert!(a.paused);
        assert_eq!(a.name.as_deref(), Some("front desk"));
        assert!(store.get_session("b").unwrap().is_none());
    }
}
