//! Scheduled sends: the records, their request bodies, the fleet-wide id
//! index, the due index the scheduler sleeps on, and the waiting index of due
//! sends parked until their session can send. Every change rewrites the
//! indexes from the record in the same transaction, so they never disagree.

use redb::{ReadableTable, WriteTransaction};
use serde::Deserialize;

use super::tables::{
    SCHEDULED, SCHEDULED_BODIES, SCHEDULED_DUE, SCHEDULED_IDS, SCHEDULED_WAITING, SESSIONS,
};
use super::{Store, StoreResult, decode, delete_session_keys, encode};
use crate::domain::scheduled::{ScheduledSend, ScheduledStatus};

/// One row of the due index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueEntry {
    /// When it is due, Unix milliseconds.
    pub due_ms: u64,
    /// The scheduled id.
    pub id: String,
    /// Its session.
    pub session_id: String,
}

/// What the scheduler can start now: the earliest due send of each session
/// it is not busy with, and when the next one comes due.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DueHeads {
    /// Each listed session's earliest due entry, in due order (earliest
    /// first), one per session.
    pub due: Vec<DueEntry>,
    /// When the earliest entry of a session not skipped comes due, when
    /// none is due yet (Unix ms); `None` when there is none, or when `due`
    /// was cut off at its limit.
    pub next_ms: Option<u64>,
}

/// Greater than any scheduled id (they are ASCII): the end of a session's key range.
const ID_MAX: &str = "\u{10FFFF}";

impl Store {
    /// Stores a new scheduled send and its request body; `false` (and nothing
    /// written) when its session does not exist, checked in the same transaction.
    pub fn insert_scheduled(&self, send: &ScheduledSend, request: &[u8]) -> StoreResult<bool> {
        let bytes = encode(send)?;
        self.write(|tx| {
            if tx
                .open_table(SESSIONS)?
                .get(send.session_id.as_str())?
                .is_none()
            {
                return Ok(false);
            }
            let key = (send.session_id.as_str(), send.id.as_str());
            tx.open_table(SCHEDULED)?.insert(key, bytes.as_slice())?;
            tx.open_table(SCHEDULED_BODIES)?.insert(key, request)?;
            tx.open_table(SCHEDULED_IDS)?
                .insert(send.id.as_str(), send.session_id.as_str())?;
            sync_indexes(tx, None, send)?;
            Ok(true)
        })
    }

    /// One scheduled send.
    pub fn get_scheduled(&self, session_id: &str, id: &str) -> StoreResult<Option<ScheduledSend>> {
        self.read(|tx| {
            let t = tx.open_table(SCHEDULED)?;
            t.get((session_id, id))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// The stored request body of a scheduled send that is not yet terminal.
    pub fn scheduled_request(&self, session_id: &str, id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.read(|tx| {
            let t = tx.open_table(SCHEDULED_BODIES)?;
            Ok(t.get((session_id, id))?.map(|v| v.value().to_vec()))
        })
    }

    /// Reads a scheduled send, lets `f` change it and writes it back with its
    /// indexes, in one transaction. `f` returns `false` to write nothing.
    /// Returns the record as it is now and whether it was written; `None` when
    /// there is no such send. A terminal status drops the due work and the body.
    pub fn update_scheduled(
        &self,
        session_id: &str,
        id: &str,
        f: impl FnOnce(&mut ScheduledSend) -> bool,
    ) -> StoreResult<Option<(ScheduledSend, bool)>> {
        self.write(|tx| modify_in(tx, session_id, id, f))
    }

    /// Up to `limit` rows of the due index due at or before `until_ms`, earliest first.
    pub fn due_scheduled(&self, until_ms: u64, limit: usize) -> StoreResult<Vec<DueEntry>> {
        self.read(|tx| {
            let t = tx.open_table(SCHEDULED_DUE)?;
            let mut out = Vec::new();
            for row in t.range(..(until_ms.saturating_add(1), ""))?.take(limit) {
                let (k, v) = row?;
                let (due_ms, id) = k.value();
                out.push(DueEntry {
                    due_ms,
                    id: id.to_owned(),
                    session_id: v.value().to_owned(),
                });
            }
            Ok(out)
        })
    }

    /// The earliest entry due at or before `until_ms` of each session not in
    /// `skip`, for at most `max_sessions` sessions, and when the next entry
    /// of a session not in `skip` comes due. One read of the due index in
    /// due order; the rows of skipped sessions (those whose sends are in
    /// flight) are passed over, so their backlog costs a scan, never a turn.
    pub fn due_scheduled_heads(
        &self,
        until_ms: u64,
        skip: &std::collections::HashSet<String>,
        max_sessions: usize,
    ) -> StoreResult<DueHeads> {
        self.read(|tx| {
            let t = tx.open_table(SCHEDULED_DUE)?;
            let mut heads = DueHeads::default();
            let mut listed = std::collections::HashSet::new();
            for row in t.iter()? {
                if heads.due.len() >= max_sessions {
                    break;
                }
                let (k, v) = row?;
                let session_id = v.value();
                if skip.contains(session_id) || listed.contains(session_id) {
                    continue;
                }
                let (due_ms, id) = k.value();
                if due_ms > until_ms {
                    heads.next_ms = Some(due_ms);
                    break;
                }
                listed.insert(session_id.to_owned());
                heads.due.push(DueEntry {
                    due_ms,
                    id: id.to_owned(),
                    session_id: session_id.to_owned(),
                });
            }
            Ok(heads)
        })
    }

    /// When the earliest row of the due index is due, Unix milliseconds.
    pub fn next_scheduled_due(&self) -> StoreResult<Option<u64>> {
        self.read(|tx| {
            let t = tx.open_table(SCHEDULED_DUE)?;
            Ok(t.first()?.map(|(k, _)| k.value().0))
        })
    }

    /// Removes a due-index row that no longer matches its record.
    pub fn drop_due_entry(&self, due_ms: u64, id: &str) -> StoreResult<()> {
        self.write(|tx| {
            tx.open_table(SCHEDULED_DUE)?.remove((due_ms, id))?;
            Ok(())
        })
    }

    /// Makes the parked sends of `session_id` (of every session when `None`)
    /// due at `now_ms`, so the scheduler looks at them again. Returns how many.
    pub fn wake_waiting(&self, session_id: Option<&str>, now_ms: u64) -> StoreResult<usize> {
        // Most connects have nothing parked: a read answers that without a commit.
        let any = self.read(|tx| {
            let t = tx.open_table(SCHEDULED_WAITING)?;
            Ok(match session_id {
                Some(sid) => t.range((sid, "")..=(sid, ID_MAX))?.next().is_some(),
                None => t.first()?.is_some(),
            })
        })?;
        if !any {
            return Ok(0);
        }
        self.write(|tx| {
            let keys: Vec<(String, String)> = {
                let t = tx.open_table(SCHEDULED_WAITING)?;
                let rows = match session_id {
                    Some(sid) => t.range((sid, "")..=(sid, ID_MAX))?,
                    None => t.iter()?,
                };
                rows.map(|row| {
                    row.map(|(k, _)| {
                        let (sid, id) = k.value();
                        (sid.to_owned(), id.to_owned())
                    })
                })
                .collect::<Result<_, _>>()?
            };
            let mut woken = 0;
            for (sid, id) in &keys {
                let found = modify_in(tx, sid, id, |s| {
                    if !s.waiting {
                        return false;
                    }
                    s.waiting = false;
                    s.due_ms = Some(now_ms);
                    true
                })?;
                match found {
                    Some((_, true)) => woken += 1,
                    // A stale row: drop it.
                    _ => {
                        tx.open_table(SCHEDULED_WAITING)?
                            .remove((sid.as_str(), id.as_str()))?;
                    }
                }
            }
            Ok(woken)
        })
    }

    /// One page of a session's scheduled sends, newest first, only those in
    /// `statuses` (every status when empty).
    pub fn list_scheduled(
        &self,
        session_id: &str,
        statuses: &[ScheduledStatus],
        offset: usize,
        limit: usize,
    ) -> StoreResult<Vec<ScheduledSend>> {
        self.read(|tx| {
            let t = tx.open_table(SCHEDULED)?;
            let rows = t
                .range((session_id, "")..=(session_id, ID_MAX))?
                .rev()
                .map(|row| row.map(|(_, v)| v.value().to_vec()));
            page(rows, statuses, offset, limit)
        })
    }

    /// One page of every session's scheduled sends, newest first, only those
    /// in `statuses` (every status when empty).
    pub fn list_all_scheduled(
        &self,
        statuses: &[ScheduledStatus],
        offset: usize,
        limit: usize,
    ) -> StoreResult<Vec<ScheduledSend>> {
        self.read(|tx| {
            let ids = tx.open_table(SCHEDULED_IDS)?;
            let records = tx.open_table(SCHEDULED)?;
            let rows = ids.iter()?.rev().filter_map(|row| {
                let bytes = row.map_err(redb::Error::from).and_then(|(k, v)| {
                    Ok(records
                        .get((v.value(), k.value()))?
                        .map(|r| r.value().to_vec()))
                });
                bytes.transpose()
            });
            page(rows, statuses, offset, limit)
        })
    }
}

/// Skips `offset` matching records and decodes up to `limit` more; records
/// are only decoded when a status filter needs it or they are kept.
fn page<E: Into<redb::Error>>(
    rows: impl Iterator<Item = Result<Vec<u8>, E>>,
    statuses: &[ScheduledStatus],
    offset: usize,
    limit: usize,
) -> StoreResult<Vec<ScheduledSend>> {
    #[derive(Deserialize)]
    struct StatusOnly {
        status: ScheduledStatus,
    }
    let mut out = Vec::new();
    let mut skipped = 0;
    for row in rows {
        if out.len() >= limit {
            break;
        }
        let bytes = row.map_err(|e| super::StoreError::Redb(e.into()))?;
        if !statuses.is_empty() && !statuses.contains(&decode::<StatusOnly>(&bytes)?.status) {
            continue;
        }
        if skipped < offset {
            skipped += 1;
            continue;
        }
        out.push(decode(&bytes)?);
    }
    Ok(out)
}

/// [`Store::update_scheduled`] inside a transaction.
fn modify_in(
    tx: &WriteTransaction,
    session_id: &str,
    id: &str,
    f: impl FnOnce(&mut ScheduledSend) -> bool,
) -> StoreResult<Option<(ScheduledSend, bool)>> {
    let old: Option<ScheduledSend> = {
        let t = tx.open_table(SCHEDULED)?;
        t.get((session_id, id))?
            .map(|v| decode(v.value()))
            .transpose()?
    };
    let Some(old) = old else {
        return Ok(None);
    };
    let mut new = old.clone();
    if !f(&mut new) {
        return Ok(Some((old, false)));
    }
    if new.status.is_terminal() {
        new.due_ms = None;
    }
    if new.due_ms.is_none() {
        new.waiting = false;
    }
    tx.open_table(SCHEDULED)?
        .insert((session_id, id), encode(&new)?.as_slice())?;
    sync_indexes(tx, Some(&old), &new)?;
    Ok(Some((new, true)))
}

/// Brings the due index, the waiting index and the body in line with `new`.
fn sync_indexes(
    tx: &WriteTransaction,
    old: Option<&ScheduledSend>,
    new: &ScheduledSend,
) -> StoreResult<()> {
    let (sid, id) = (new.session_id.as_str(), new.id.as_str());
    let old_due = old.and_then(|o| o.due_ms);
    if old_due != new.due_ms {
        let mut due = tx.open_table(SCHEDULED_DUE)?;
        if let Some(d) = old_due {
            due.remove((d, id))?;
        }
        if let Some(d) = new.due_ms {
            due.insert((d, id), sid)?;
        }
    }
    if old.map(|o| (o.waiting, o.due_ms)) != Some((new.waiting, new.due_ms)) {
        let mut waiting = tx.open_table(SCHEDULED_WAITING)?;
        match (new.waiting, new.due_ms) {
            (true, Some(deadline)) => waiting.insert((sid, id), deadline)?,
            _ => waiting.remove((sid, id))?,
        };
    }
    if new.status.is_terminal() {
        tx.open_table(SCHEDULED_BODIES)?.remove((sid, id))?;
    }
    Ok(())
}

/// Removes every scheduled send of a session with its index rows (part of the
/// session delete cascade; the due and id indexes are not keyed by session).
pub(crate) fn delete_session_scheduled(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    #[derive(Deserialize)]
    struct Keys {
        id: String,
        due_ms: Option<u64>,
    }
    let keys: Vec<Keys> = {
        let t = tx.open_table(SCHEDULED)?;
        let mut keys = Vec::new();
        for row in t.range((session_id, "")..=(session_id, ID_MAX))? {
            keys.push(decode(row?.1.value())?);
        }
        keys
    };
    {
        let mut ids = tx.open_table(SCHEDULED_IDS)?;
        let mut due = tx.open_table(SCHEDULED_DUE)?;
        for k in &keys {
            ids.remove(k.id.as_str())?;
            if let Some(d) = k.due_ms {
                due.remove((d, k.id.as_str()))?;
            }
        }
    }
    delete_session_keys(tx, SCHEDULED, session_id)?;
    delete_session_keys(tx, SCHEDULED_BODIES, session_id)?;
    delete_session_keys(tx, SCHEDULED_WAITING, session_id)?;
    Ok(())
}

#[cfg(test)]
#[path = "scheduled_tests.rs"]
mod tests;
