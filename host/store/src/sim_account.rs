//! The simulated network's per-account state that outlives a restart: each
//! session's address book (what app-state sync delivers), the app-state
//! version the session's device last synced per collection, and the trust
//! contact tokens in the device store, the accounts it blocked, and its own
//! profile's about text and picture.

use redb::{ReadableTable, WriteTransaction};

use super::tables::{
    ADDRESS_BOOK_SEQ_KEY, SIM_ADDRESS_BOOK, SIM_APP_STATE, SIM_BLOCKS, SIM_PROFILES, SIM_TCTOKENS,
};
use super::{Store, StoreResult, decode, delete_session_keys, encode, next_seq};

pub use crate::domain::sim::{SimAddressEntry, SimTcToken};

impl Store {
    /// Adds or replaces an address-book entry; it gets the next version.
    pub fn put_sim_address_entry(
        &self,
        session_id: &str,
        mut entry: SimAddressEntry,
    ) -> StoreResult<SimAddressEntry> {
        self.write(|tx| {
            entry.version = next_seq(tx, ADDRESS_BOOK_SEQ_KEY)?;
            tx.open_table(SIM_ADDRESS_BOOK)?.insert(
                (session_id, entry.phone.as_str()),
                encode(&entry)?.as_slice(),
            )?;
            Ok(entry)
        })
    }

    /// A session's address book, ordered by phone.
    pub fn sim_address_book(&self, session_id: &str) -> StoreResult<Vec<SimAddressEntry>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_ADDRESS_BOOK)?;
            let mut out = Vec::new();
            for row in t.range((session_id, "")..)? {
                let (k, v) = row?;
                if k.value().0 != session_id {
                    break;
                }
                out.push(decode(v.value())?);
            }
            Ok(out)
        })
    }

    /// The app-state version a session's device holds for a collection (0: none).
    pub fn sim_app_state_version(&self, session_id: &str, collection: &str) -> StoreResult<u64> {
        self.read(|tx| {
            let t = tx.open_table(SIM_APP_STATE)?;
            Ok(t.get((session_id, collection))?
                .map(|v| v.value())
                .unwrap_or(0))
        })
    }

    /// Records the app-state version a session's device now holds.
    pub fn set_sim_app_state_version(
        &self,
        session_id: &str,
        collection: &str,
        version: u64,
    ) -> StoreResult<()> {
        self.write(|tx| {
            tx.open_table(SIM_APP_STATE)?
                .insert((session_id, collection), version)?;
            Ok(())
        })
    }

    /// Changes the token records of several (session, JID) pairs in one
    /// transaction; `f` sees the current record (default when absent).
    pub fn update_sim_tctokens(
        &self,
        keys: &[(String, String)],
        f: impl Fn(&str, &mut SimTcToken),
    ) -> StoreResult<()> {
        self.write(|tx| {
            let mut t = tx.open_table(SIM_TCTOKENS)?;
            for (session, jid) in keys {
                let key = (session.as_str(), jid.as_str());
                let mut rec: SimTcToken = t
                    .get(key)?
                    .map(|v| decode(v.value()))
                    .transpose()?
                    .unwrap_or_default();
                f(session, &mut rec);
                t.insert(key, encode(&rec)?.as_slice())?;
            }
            Ok(())
        })
    }

    /// One token record.
    pub fn sim_tctoken(&self, session_id: &str, jid: &str) -> StoreResult<Option<SimTcToken>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_TCTOKENS)?;
            t.get((session_id, jid))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// Every token record of a session, ordered by JID.
    pub fn sim_tctokens(&self, session_id: &str) -> StoreResult<Vec<(String, SimTcToken)>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_TCTOKENS)?;
            session_rows(&t, session_id, decode)
        })
    }

    /// Removes a session's token records whose newest time is before
    /// `cutoff_ms`, in one transaction; returns how many.
    pub fn prune_sim_tctokens(&self, session_id: &str, cutoff_ms: i64) -> StoreResult<usize> {
        let expired: Vec<String> = self
            .sim_tctokens(session_id)?
            .into_iter()
            .filter(|(_, r)| r.newest_ms() < cutoff_ms)
            .map(|(jid, _)| jid)
            .collect();
        self.write(|tx| {
            let mut t = tx.open_table(SIM_TCTOKENS)?;
            let mut removed = 0;
            for jid in &expired {
                if t.remove((session_id, jid.as_str()))?.is_some() {
                    removed += 1;
                }
            }
            Ok(removed)
        })
    }
}

impl Store {
    /// Blocks (`at` is when) or unblocks `jid` for a sim session's account;
    /// whether that changed anything.
    pub fn set_sim_blocked(
        &self,
        session_id: &str,
        jid: &str,
        blocked: Option<i64>,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            let mut t = tx.open_table(SIM_BLOCKS)?;
            let known = t.get((session_id, jid))?.is_some();
            // A second block keeps the time of the first.
            match blocked {
                Some(at) if !known => {
                    t.insert((session_id, jid), at)?;
                    Ok(true)
                }
                Some(_) => Ok(false),
                None if known => {
                    t.remove((session_id, jid))?;
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }

    /// The accounts a sim session's account blocked, with when, by JID.
    pub fn sim_blocklist(&self, session_id: &str) -> StoreResult<Vec<(String, i64)>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_BLOCKS)?;
            session_rows(&t, session_id, Ok)
        })
    }
}

impl Store {
    /// Sets (`Some`) or clears one field of a sim session's own profile
    /// (`about`, `picture`).
    pub fn set_sim_profile_field(
        &self,
        session_id: &str,
        field: &str,
        value: Option<&str>,
    ) -> StoreResult<()> {
        self.write(|tx| {
            let mut t = tx.open_table(SIM_PROFILES)?;
            match value {
                Some(v) => t.insert((session_id, field), v)?,
                None => t.remove((session_id, field))?,
            };
            Ok(())
        })
    }

    /// The fields of a sim session's own profile that are set, by name.
    pub fn sim_profile(&self, session_id: &str) -> StoreResult<Vec<(String, String)>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_PROFILES)?;
            session_rows(&t, session_id, |v: &str| Ok(v.to_owned()))
        })
    }
}

/// A session's rows of a `(session id, JID)` table, by JID, each value
/// read by `value`.
fn session_rows<V, T>(
    table: &impl ReadableTable<(&'static str, &'static str), V>,
    session_id: &str,
    value: impl Fn(V::SelfType<'_>) -> StoreResult<T>,
) -> StoreResult<Vec<(String, T)>>
where
    V: redb::Value + 'static,
{
    let mut out = Vec::new();
    for row in table.range((session_id, "")..)? {
        let (k, v) = row?;
        let (sid, jid) = k.value();
        if sid != session_id {
            break;
        }
        out.push((jid.to_owned(), value(v.value())?));
    }
    Ok(out)
}

/// Removes everything the sim keeps for a session's account, inside `tx`.
pub(crate) fn delete_session_sim_account(
    tx: &WriteTransaction,
    session_id: &str,
) -> StoreResult<()> {
    delete_session_keys(tx, SIM_ADDRESS_BOOK, session_id)?;
    delete_session_keys(tx, SIM_APP_STATE, session_id)?;
    delete_session_keys(tx, SIM_TCTOKENS, session_id)?;
    delete_session_keys(tx, SIM_BLOCKS, session_id)?;
    delete_session_keys(tx, SIM_PROFILES, session_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::session::SessionRecord;

    fn entry(phone: &str) -> SimAddressEntry {
        SimAddressEntry {
            phone: phone.into(),
            full_name: Some("Ann".into()),
            first_name: None,
            lid: None,
            version: 0,
        }
    }

    #[test]
    fn address_book_entries_get_growing_versions_and_go_with_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .insert_session(&SessionRecord::new("a".into(), None, "sim".into(), None))
            .unwrap();
        let first = store
            .put_sim_address_entry("a", entry("15550000002"))
            .unwrap();
        let second = store
            .put_sim_address_entry("a", entry("15550000001"))
            .unwrap();
        assert!(second.version > first.version);
        let book = store.sim_address_book("a").unwrap();
        assert_eq!(book[0].phone, "15550000001");
        store.set_sim_app_state_version("a", "regular", 7).unwrap();
        assert_eq!(store.sim_app_state_version("a", "regular").unwrap(), 7);
        assert_eq!(store.sim_app_state_version("a", "regular_low").unwrap(), 0);
        store.delete_session("a").unwrap();
        assert!(store.sim_address_book("a").unwrap().is_empty());
        assert_eq!(store.sim_app_state_version("a", "regular").unwrap(), 0);
    }

    #[test]
    fn tokens_are_updated_listed_and_pruned_by_their_newest_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let keys = [
            ("a".to_owned(), "1@s.whatsapp.net".to_owned()),
            ("a".to_owned(), "2@s.whatsapp.net".to_owned()),
        ];
        store
            .update_sim_tctokens(&keys, |_, r| r.sender_ms = Some(1_000))
            .unwrap();
        store
            .update_sim_tctokens(&keys[1..], |_, r| r.token_ms = Some(5_000))
            .unwrap();
        assert_eq!(store.sim_tctokens("a").unwrap().len(), 2);
        assert_eq!(store.prune_sim_tctokens("a", 2_000).unwrap(), 1);
        let left = store.sim_tctokens("a").unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].0, "2@s.whatsapp.net");
        assert_eq!(left[0].1.sender_ms, Some(1_000));
        assert!(
            store
                .sim_tctoken("a", "1@s.whatsapp.net")
                .unwrap()
                .is_none()
        );
    }
}
