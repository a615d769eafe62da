//! Media records: what the gateway knows of each media it holds (the bytes
//! are in the media store, named by the same session and media id).

use redb::ReadableTable;

use super::tables::{MEDIA, SESSIONS};
use super::{Store, StoreResult, decode, encode};
use crate::domain::media::MediaRecord;

/// Greater than any media id (they are ASCII): the end of a session's key range.
const ID_MAX: &str = "\u{10FFFF}";

impl Store {
    /// Writes (or replaces) a media record; `false`, writing nothing, when
    /// its session no longer exists (so a download that outlived its
    /// session's deletion leaves no record behind).
    pub fn put_media(&self, record: &MediaRecord) -> StoreResult<bool> {
        let bytes = encode(record)?;
        self.write(|tx| {
            if tx
                .open_table(SESSIONS)?
                .get(record.session_id.as_str())?
                .is_none()
            {
                return Ok(false);
            }
            tx.open_table(MEDIA)?.insert(
                (record.session_id.as_str(), record.id.as_str()),
                bytes.as_slice(),
            )?;
            Ok(true)
        })
    }

    /// One media record.
    pub fn media(&self, session_id: &str, media_id: &str) -> StoreResult<Option<MediaRecord>> {
        self.read(|tx| {
            let t = tx.open_table(MEDIA)?;
            t.get((session_id, media_id))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// Removes one media record; whether it existed.
    pub fn delete_media(&self, session_id: &str, media_id: &str) -> StoreResult<bool> {
        self.write(|tx| {
            Ok(tx
                .open_table(MEDIA)?
                .remove((session_id, media_id))?
                .is_some())
        })
    }

    /// Every media record of one session (what an upload's quota counts).
    pub fn session_media(&self, session_id: &str) -> StoreResult<Vec<MediaRecord>> {
        self.read(|tx| {
            let t = tx.open_table(MEDIA)?;
            let mut out = Vec::new();
            for row in t.range((session_id, "")..=(session_id, ID_MAX))? {
                let (_, v) = row?;
                out.push(decode(v.value())?);
            }
            Ok(out)
        })
    }

    /// Every media record of every session (what the retention sweep reads).
    pub fn all_media(&self) -> StoreResult<Vec<MediaRecord>> {
        self.read(|tx| {
            let t = tx.open_table(MEDIA)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                let (_, v) = row?;
                out.push(decode(v.value())?);
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::domain::media::{MediaKind, MediaRecord, NetworkMedia};
    use crate::domain::session::SessionRecord;

    fn record(session: &str, message: &str) -> MediaRecord {
        let media = NetworkMedia {
            mimetype: Some("image/png".into()),
            file_length: Some(3),
            ..NetworkMedia::default()
        };
        MediaRecord::inbound(
            session,
            message,
            "1@s.whatsapp.net",
            MediaKind::Image,
            &media,
            1,
        )
    }

    #[test]
    fn media_records_are_per_session_and_go_with_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for id in ["a", "ab"] {
            store
                .insert_session(&SessionRecord::new(id.into(), None, "sim".into(), None))
                .unwrap();
        }
        let a = record("a", "M1");
        let ab = record("ab", "M1");
        assert_ne!(a.id, ab.id, "ids differ by session");
        assert!(store.put_media(&a).unwrap());
        assert!(store.put_media(&ab).unwrap());
        assert_eq!(store.media("a", &a.id).unwrap(), Some(a.clone()));
        assert_eq!(store.all_media().unwrap().len(), 2);
        assert_eq!(
            store.session_media("a").unwrap(),
            vec![a.clone()],
            "a session's media, not those of a session whose id it prefixes"
        );
        store.delete_session("a").unwrap();
        assert_eq!(store.media("a", &a.id).unwrap(), None);
        assert_eq!(store.media("ab", &ab.id).unwrap(), Some(ab));
        assert!(
            !store.put_media(&a).unwrap(),
            "no record for a deleted session"
        );
    }

    #[test]
    fn a_fresh_store_has_no_media_and_says_so_without_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert!(store.all_media().unwrap().is_empty());
        assert!(store.media("s", "m").unwrap().is_none());
    }
}
