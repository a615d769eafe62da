//! Webhooks and their dead-letter queue (`webhook_dlq`).

use redb::{ReadableTable, ReadableTableMetadata};

use super::tables::{DLQ_SEQ_KEY, WEBHOOK_DLQ, WEBHOOKS};
use super::{Store, StoreResult, decode, encode, next_seq, page_newest_first};
use crate::domain::webhook::{DlqEntry, Webhook};

/// What became of a new webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookInsert {
    /// Stored.
    Stored,
    /// Its session was deleted (or deleted and created again) meanwhile:
    /// nothing was written.
    SessionGone,
    /// The session has this many webhooks already, its limit: nothing was
    /// written.
    Full(usize),
}

impl Store {
    /// Stores (or replaces) a webhook, unchecked (tests and fixtures).
    pub fn put_webhook(&self, hook: &Webhook) -> StoreResult<()> {
        let bytes = encode(hook)?;
        self.write(|tx| {
            tx.open_table(WEBHOOKS)?.insert(
                (hook.session_id.as_str(), hook.id.as_str()),
                bytes.as_slice(),
            )?;
            Ok(())
        })
    }

    /// Stores a new webhook for the session's `incarnation`, checked in the
    /// same transaction: refused when that session is no longer the live
    /// one (a delete won the race), or when it has `max` webhooks already.
    pub fn insert_webhook(
        &self,
        hook: &Webhook,
        incarnation: u64,
        max: usize,
    ) -> StoreResult<WebhookInsert> {
        let bytes = encode(hook)?;
        let session = hook.session_id.as_str();
        self.write(|tx| {
            if !super::sessions::is_live_in(tx, session, incarnation)? {
                return Ok(WebhookInsert::SessionGone);
            }
            let mut t = tx.open_table(WEBHOOKS)?;
            let held = t.range((session, "")..=(session, "\u{10FFFF}"))?.count();
            if held >= max {
                return Ok(WebhookInsert::Full(held));
            }
            t.insert((session, hook.id.as_str()), bytes.as_slice())?;
            Ok(WebhookInsert::Stored)
        })
    }

    /// Replaces a webhook that is still stored; `false` (nothing written)
    /// when it was deleted meanwhile, so a change racing a delete cannot
    /// write it back.
    pub fn update_webhook(&self, hook: &Webhook) -> StoreResult<bool> {
        let bytes = encode(hook)?;
        self.write(|tx| {
            let mut t = tx.open_table(WEBHOOKS)?;
            let key = (hook.session_id.as_str(), hook.id.as_str());
            if t.get(key)?.is_none() {
                return Ok(false);
            }
            t.insert(key, bytes.as_slice())?;
            Ok(true)
        })
    }

    /// Every webhook of every session.
    pub fn list_all_webhooks(&self) -> StoreResult<Vec<Webhook>> {
        self.read(|tx| {
            let t = tx.open_table(WEBHOOKS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                out.push(decode(row?.1.value())?);
            }
            Ok(out)
        })
    }

    /// Deletes a webhook; `false` when it did not exist.
    pub fn delete_webhook(&self, session_id: &str, id: &str) -> StoreResult<bool> {
        self.write(|tx| Ok(tx.open_table(WEBHOOKS)?.remove((session_id, id))?.is_some()))
    }

    /// How many dead-letter entries every session holds together.
    pub fn count_dlq(&self) -> StoreResult<u64> {
        self.read(|tx| Ok(tx.open_table(WEBHOOK_DLQ)?.len()?))
    }

    /// A session's dead-letter entries, newest first.
    pub fn list_dlq(&self, session_id: &str) -> StoreResult<Vec<DlqEntry>> {
        self.read(|tx| page_newest_first(tx, WEBHOOK_DLQ, session_id, 0, usize::MAX))
    }

    /// One dead-letter entry by id.
    pub fn get_dlq(&self, session_id: &str, entry_id: &str) -> StoreResult<Option<DlqEntry>> {
        Ok(self
            .list_dlq(session_id)?
            .into_iter()
            .find(|e| e.id == entry_id))
    }
}

/// Removes and returns one dead-letter entry by id inside `tx`.
pub(crate) fn take_dlq_in(
    tx: &redb::WriteTransaction,
    session_id: &str,
    entry_id: &str,
) -> StoreResult<Option<DlqEntry>> {
    let mut t = tx.open_table(WEBHOOK_DLQ)?;
    let mut found = None;
    for row in t.range((session_id, 0u64)..=(session_id, u64::MAX))? {
        let (k, v) = row?;
        let entry: DlqEntry = decode(v.value())?;
        if entry.id == entry_id {
            found = Some((k.value().1, entry));
            break;
        }
    }
    if let Some((seq, _)) = &found {
        t.remove((session_id, *seq))?;
    }
    Ok(found.map(|(_, e)| e))
}

/// Queues a dead-letter entry inside `tx`, evicting the session's oldest
/// entries beyond `capacity`.
pub(crate) fn push_dlq_in(
    tx: &redb::WriteTransaction,
    entry: &DlqEntry,
    capacity: usize,
) -> StoreResult<()> {
    let bytes = encode(entry)?;
    let sid = entry.session_id.as_str();
    let seq = next_seq(tx, DLQ_SEQ_KEY)?;
    let mut t = tx.open_table(WEBHOOK_DLQ)?;
    t.insert((sid, seq), bytes.as_slice())?;
    let keys: Vec<u64> = t
        .range((sid, 0u64)..=(sid, u64::MAX))?
        .rev()
        .skip(capacity)
        .map(|row| row.map(|(k, _)| k.value().1))
        .collect::<Result<_, _>>()?;
    for k in keys {
        t.remove((sid, k))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{push_dlq_in, take_dlq_in};
    use crate::Store;
    use crate::domain::webhook::DlqEntry;

    fn entry(id: &str) -> DlqEntry {
        DlqEntry {
            id: id.into(),
            session_id: "s".into(),
            webhook_id: None,
            webhook_url: "http://x".into(),
            event: "message".into(),
            payload: "{}".into(),
            last_error: "HTTP 500".into(),
            attempts: 3,
            failed_at: 1,
            secret: Some("k".into()),
            delivery_id: "d".into(),
            reason: Default::default(),
            signature_scheme: Default::default(),
        }
    }

    #[test]
    fn the_dlq_keeps_the_newest_entries_up_to_its_capacity() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for id in ["a", "b", "c"] {
            store.write(|tx| push_dlq_in(tx, &entry(id), 2)).unwrap();
        }
        let ids: Vec<String> = store
            .list_dlq("s")
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(ids, ["c", "b"]);
    }

    #[test]
    fn taking_an_entry_removes_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.write(|tx| push_dlq_in(tx, &entry("a"), 10)).unwrap();
        assert_eq!(
            store
                .write(|tx| take_dlq_in(tx, "s", "a"))
                .unwrap()
                .unwrap()
                .secret
                .as_deref(),
            Some("k")
        );
        assert!(
            store
                .write(|tx| take_dlq_in(tx, "s", "a"))
                .unwrap()
                .is_none()
        );
        assert!(store.list_dlq("s").unwrap().is_empty());
    }
}
