//! The lid-to-phone mapping each session learns passively (from messages that
//! carry both, contacts and push names), used to fill `from_phone`.

use super::tables::LID_MAP;
use super::{Store, StoreResult};

impl Store {
    /// Remembers that `lid_user` (the part before `@lid`) is `phone` for this
    /// session. Returns whether the mapping changed.
    pub fn learn_lid(&self, session_id: &str, lid_user: &str, phone: &str) -> StoreResult<bool> {
        if self.lid_phone(session_id, lid_user)?.as_deref() == Some(phone) {
            return Ok(false);
        }
        self.write(|tx| {
            tx.open_table(LID_MAP)?
                .insert((session_id, lid_user), phone)?;
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
    /// if any: a scan of the session's mapping (a lookup asked for now and
    /// then, never on the message path).
    pub fn lid_of_phone(&self, session_id: &str, phone: &str) -> StoreResult<Option<String>> {
        self.read(|tx| {
            let t = tx.open_table(LID_MAP)?;
            for row in t.range((session_id, "")..)? {
                let (k, v) = row?;
                let (sid, lid_user) = k.value();
                if sid != session_id {
                    break;
                }
                if v.value() == phone {
                    return Ok(Some(lid_user.to_owned()));
                }
            }
            Ok(None)
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
        assert!(store.learn_lid("a", "777", "15550001111").unwrap());
        assert!(
            !store.learn_lid("a", "777", "15550001111").unwrap(),
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
        store.delete_session("a").unwrap();
        assert_eq!(store.lid_phone("a", "777").unwrap(), None);
    }
}
