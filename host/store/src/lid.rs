//! The lid-to-phone mapping each session learns passively (from messages that
//! carry both, contacts and push names, lookups), used to fill `from_phone`,
//! and kept the other way too (phone to lid) for lookups by phone.

use redb::{ReadableTable, WriteTransaction};

use super::tables::{LID_BY_PHONE, LID_MAP, LID_REVERSE_INDEXED_KEY, META};
use super::{Store, StoreResult};

/// Indexes every learned lid by phone, once, in a store written before the
/// reverse index existed.
pub(crate) fn index_existing(tx: &WriteTransaction) -> StoreResult<()> {
    let mut meta = tx.open_table(META)?;
    if meta.get(LID_REVERSE_INDEXED_KEY)?.is_some() {
        return Ok(());
    }
    let rows: Vec<(String, String, String)> = {
        let map = tx.open_table(LID_MAP)?;
        let mut rows = Vec::new();
        for row in map.iter()? {
            let (k, v) = row?;
            let (sid, lid) = k.value();
            rows.push((sid.to_owned(), v.value().to_owned(), lid.to_owned()));
        }
        rows
    };
    let mut reverse = tx.open_table(LID_BY_PHONE)?;
    for (sid, phone, lid) in rows {
        reverse.insert((sid.as_str(), phone.as_str()), lid.as_str())?;
    }
    meta.insert(LID_REVERSE_INDEXED_KEY, 1)?;
    Ok(())
}

impl Store {
    /// Remembers that `lid_user` (the part before `@lid`) is `phone` for this
    /// session (for its `incarnation` only, when given: see
    /// `SessionRecord::incarnation`). Returns whether the mapping changed.
    pub fn learn_lid(
        &self,
        session_id: &str,
        lid_user: &str,
        phone: &str,
        incarnation: Option<u64>,
    ) -> StoreResult<bool> {
        if self.lid_phone(session_id, lid_user)?.as_deref() == Some(phone) {
            return Ok(false);
        }
        self.write(|tx| {
            if !super::sessions::owned_in(tx, session_id, incarnation)? {
                return Ok(false);
            }
            let old = tx
                .open_table(LID_MAP)?
                .insert((session_id, lid_user), phone)?
                .map(|v| v.value().to_owned());
            let mut reverse = tx.open_table(LID_BY_PHONE)?;
            // A lid that moved to another phone no longer answers for the old one.
            if let Some(old) = old
                && reverse
                    .get((session_id, old.as_str()))?
                    .map(|v| v.value().to_owned())
                    == Some(lid_user.to_owned())
            {
                reverse.remove((session_id, old.as_str()))?;
            }
            reverse.insert((session_id, phone), lid_user)?;
            Ok(true)
        })
    }

    /// The phone digits learned for `lid_user`, if any.
    pub fn lid_phone(&self, session_id: &str, lid_user: &str) -> StoreResult<Option<String>> {
        self.read(|tx| {
            let t = tx.open_table(LID_MAP)?;
            Ok(t.get((session_id, lid_user))?.map(|v| v.value().to_owned()))
        })
    }

    /// The lid (the part before `@lid`) learned for phone digits `phone`,
    /// if any.
    pub fn lid_of_phone(&self, session_id: &str, phone: &str) -> StoreResult<Option<String>> {
        self.read(|tx| {
            let t = tx.open_table(LID_BY_PHONE)?;
            Ok(t.get((session_id, phone))?.map(|v| v.value().to_owned()))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::domain::session::SessionRecord;

    #[test]
    fn a_learned_lid_resolves_per_session_and_goes_with_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .insert_session(&SessionRecord::new("a".into(), None, "sim".into(), None))
            .unwrap();
        assert!(store.learn_lid("a", "777", "15550001111", None).unwrap());
        assert!(
            !store.learn_lid("a", "777", "15550001111", None).unwrap(),
            "unchanged"
        );
        assert_eq!(
            store.lid_phone("a", "777").unwrap().as_deref(),
            Some("15550001111")
        );
        assert_eq!(store.lid_phone("b", "777").unwrap(), None);
        assert_eq!(
            store.lid_of_phone("a", "15550001111").unwrap().as_deref(),
            Some("777")
        );
        assert_eq!(store.lid_of_phone("a", "15550002222").unwrap(), None);
        assert!(store.learn_lid("a", "777", "15550002222", None).unwrap());
        assert_eq!(
            store.lid_of_phone("a", "15550002222").unwrap().as_deref(),
            Some("777")
        );
        assert_eq!(
            store.lid_of_phone("a", "15550001111").unwrap(),
            None,
            "the old phone no longer names the lid"
        );
        store.delete_session("a").unwrap();
        assert_eq!(store.lid_phone("a", "777").unwrap(), None);
    }
}
