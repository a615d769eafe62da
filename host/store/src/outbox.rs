//! The webhook outbox (`webhook_outbox_v1`): every delivery owed to a URL,
//! from the commit of its event until it succeeds or is dead-lettered, so a
//! crash loses none and a restart resumes each with its delivery id and the
//! attempts it has left.
//!
//! A row's value is the length of the delivery's JSON (4 bytes,
//! little-endian), that JSON ([`PendingDelivery`]), then the payload as
//! sent, so the payload is never escaped into JSON. When the payload is the
//! event's envelope exactly as the event log holds it (every delivery but
//! one a webhook-scoped filter changed), the row does not hold it again:
//! the length's top bit says "in the log, under this row's sequence
//! number". That halves what an event writes; pruning the log copies the
//! payload into every row that still points at a row it removes
//! ([`PayloadKeeper`]), so a delivery never outlives its payload.
//!
//! Rows are keyed by session first, then URL: each session's backlog for a
//! URL is bounded on its own (past the limit, its oldest deliveries move to
//! the dead-letter queue with the reason `backlog_full`, in the same
//! transaction), so a session that shares another's URL can neither fill
//! nor empty the other's backlog. A store from before that (rows keyed by
//! URL first) is moved into this table when opened ([`migrate_v1`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use redb::{ReadableTable, WriteTransaction};

use super::tables::{
    EVENT_LOG, WEBHOOK_OUTBOX, WEBHOOK_OUTBOX_DEPTH, WEBHOOK_OUTBOX_DEPTH_V1, WEBHOOK_OUTBOX_V1,
};
use super::webhooks::push_dlq_in;
use super::{Store, StoreError, StoreResult, decode, encode};
use crate::domain::webhook::{DlqEntry, DlqReason, PendingDelivery};

/// Where a delivery sits in the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OutboxKey {
    /// The session whose event it carries.
    pub session_id: String,
    /// The destination.
    pub url: String,
    /// The sequence number of its event (or of its DLQ replay).
    pub seq: u64,
    /// The delivery id.
    pub delivery_id: String,
}

/// A delivery to record with its event.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    /// What is known of it.
    pub delivery: PendingDelivery,
    /// The body it POSTs.
    pub payload: Bytes,
}

/// A delivery read back from the outbox.
#[derive(Debug, Clone)]
pub struct OutboxRow {
    /// Where it sits.
    pub key: OutboxKey,
    /// What is known of it.
    pub delivery: PendingDelivery,
    /// The body it POSTs.
    pub payload: Bytes,
}

/// Delivered rows not yet removed. A success must not cost a commit of its
/// own (that would halve what the writer commits under load): its removal
/// rides on the next event's write, and only when no event is written for a
/// moment does [`Store::flush_outbox_removals`] commit them alone.
#[derive(Clone, Default)]
pub(crate) struct Removals(Arc<Mutex<Vec<OutboxKey>>>);

impl Removals {
    fn push(&self, keys: impl IntoIterator<Item = OutboxKey>) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(keys);
    }

    pub(crate) fn take(&self) -> Vec<OutboxKey> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Gives back removals whose write failed, to go with a later one.
    pub(crate) fn restore(&self, keys: Vec<OutboxKey>) {
        if !keys.is_empty() {
            self.push(keys);
        }
    }
}

/// Removes delivered rows inside `tx` (those already gone are skipped).
pub(crate) fn remove_rows(tx: &WriteTransaction, keys: &[OutboxKey]) -> StoreResult<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut outbox = OutboxTables::open(tx)?;
    outbox.remove(keys)?;
    outbox.close()
}

/// The outbox's two tables, opened once for everything a run of event
/// writes does to them: opening a table costs a lookup, and closing it a
/// write of its root, so a write that reopened them per delivery paid that
/// many times over. Each URL's depth is read once and kept here, changed in
/// memory and written by [`OutboxTables::close`]: a URL's depth changes
/// with every delivery added and every one removed, and writing it each
/// time was two of the handful of B-tree operations an event costs.
pub(crate) struct OutboxTables<'t> {
    rows: redb::Table<'t, RowKey, &'static [u8]>,
    depth: redb::Table<'t, (&'static str, &'static str), u64>,
    /// Depths read or changed, by (session, URL), and whether each changed.
    depths: HashMap<Lane, (u64, bool)>,
}

/// An outbox row's key: (session id, URL, sequence number, delivery id).
type RowKey = (&'static str, &'static str, u64, &'static str);

/// One session's deliveries to one URL: (session id, URL).
pub(crate) type Lane = (String, String);

/// The last string of a key range (no session id, URL or delivery id
/// reaches it).
const END: &str = "\u{10FFFF}";

impl<'t> OutboxTables<'t> {
    /// Opens both tables in `tx`.
    pub(crate) fn open(tx: &'t WriteTransaction) -> StoreResult<Self> {
        Ok(Self {
            rows: tx.open_table(WEBHOOK_OUTBOX)?,
            depth: tx.open_table(WEBHOOK_OUTBOX_DEPTH)?,
            depths: HashMap::new(),
        })
    }

    /// Writes the depths changed and closes both tables. Dropping the
    /// tables without this loses those changes (as a failed transaction
    /// does anyway).
    pub(crate) fn close(mut self) -> StoreResult<()> {
        for ((session, url), (depth, changed)) in std::mem::take(&mut self.depths) {
            if changed {
                put_depth(&mut self.depth, &session, &url, depth)?;
            }
        }
        Ok(())
    }

    /// Adds `by` (possibly negative) to a lane's depth; returns the new one.
    fn bump(&mut self, session: &str, url: &str, by: i64) -> StoreResult<u64> {
        let lane = (session.to_owned(), url.to_owned());
        let entry = match self.depths.get_mut(&lane) {
            Some(e) => e,
            None => {
                let now = self
                    .depth
                    .get((session, url))?
                    .map(|v| v.value())
                    .unwrap_or(0);
                self.depths.entry(lane).or_insert((now, false))
            }
        };
        entry.0 = entry.0.saturating_add_signed(by);
        entry.1 = true;
        Ok(entry.0)
    }

    /// Removes delivered rows (those already gone are skipped).
    ///
    /// Deliveries finish close to the order they were queued in, so a
    /// batch of them is a few dense stretches of each URL's rows. Each
    /// stretch is removed in one ordered pass (`retain_in`), which visits
    /// each leaf once and rebalances it once, instead of one descent from
    /// the root and one rebalance per row (those were about 6% of the
    /// store writer's time under load).
    pub(crate) fn remove(&mut self, keys: &[OutboxKey]) -> StoreResult<()> {
        let mut by_lane: HashMap<(&str, &str), Vec<(u64, &str)>> = HashMap::new();
        for key in keys {
            by_lane
                .entry((key.session_id.as_str(), key.url.as_str()))
                .or_default()
                .push((key.seq, key.delivery_id.as_str()));
        }
        for ((session, url), mut going) in by_lane {
            going.sort_unstable();
            going.dedup();
            let mut removed = 0i64;
            for stretch in stretches(&going) {
                let (lo, hi) = (stretch[0], stretch[stretch.len() - 1]);
                self.rows.retain_in(
                    (session, url, lo.0, lo.1)..=(session, url, hi.0, hi.1),
                    |k, _| {
                        let hit = stretch
                            .binary_search_by(|p| p.0.cmp(&k.2).then_with(|| p.1.cmp(k.3)))
                            .is_ok();
                        removed += i64::from(hit);
                        !hit
                    },
                )?;
            }
            if removed != 0 {
                self.bump(session, url, -removed)?;
            }
        }
        Ok(())
    }

    /// Records the deliveries of the event `seq` (each row: session id,
    /// URL, delivery id, value); returns each lane now past `backlog_limit`
    /// with how many deliveries it has beyond it (for [`evict_oldest`],
    /// which the caller runs once these tables are closed).
    pub(crate) fn add(
        &mut self,
        seq: u64,
        rows: &[(String, String, String, Vec<u8>)],
        backlog_limit: usize,
    ) -> StoreResult<Vec<(Lane, u64)>> {
        let mut over: Vec<(Lane, u64)> = Vec::new();
        for (session, url, delivery_id, value) in rows {
            self.rows.insert(
                (session.as_str(), url.as_str(), seq, delivery_id.as_str()),
                value.as_slice(),
            )?;
            let depth = self.bump(session, url, 1)?;
            let beyond = depth.saturating_sub(backlog_limit.max(1) as u64);
            if beyond > 0 {
                match over.iter_mut().find(|((s, u), _)| s == session && u == url) {
                    Some((_, n)) => *n = beyond,
                    None => over.push(((session.clone(), url.clone()), beyond)),
                }
            }
        }
        Ok(over)
    }
}

/// Moves a session's `n` oldest deliveries to a URL to its dead-letter
/// queue (bounded by `dlq_capacity`) with the reason `backlog_full`;
/// `limit` is the backlog limit the reason names. Another session's
/// deliveries to the same URL are not touched. Opens the outbox, the event
/// log, the dead-letter queue and the meta table.
pub(crate) fn evict_oldest(
    tx: &WriteTransaction,
    (session, url): (&str, &str),
    n: u64,
    limit: usize,
    dlq_capacity: usize,
) -> StoreResult<Vec<OutboxKey>> {
    let mut outbox = OutboxTables::open(tx)?;
    let keys: Vec<(u64, String)> = outbox
        .rows
        .range((session, url, 0u64, "")..=(session, url, u64::MAX, END))?
        .take(usize::try_from(n).unwrap_or(usize::MAX))
        .map(|row| row.map(|(k, _)| (k.value().2, k.value().3.to_owned())))
        .collect::<Result<_, _>>()?;
    let mut moved = Vec::with_capacity(keys.len());
    let mut entries = Vec::with_capacity(keys.len());
    {
        let log = tx.open_table(EVENT_LOG)?;
        for (seq, id) in keys {
            let Some(value) = outbox
                .rows
                .remove((session, url, seq, id.as_str()))?
                .map(|v| v.value().to_vec())
            else {
                continue;
            };
            let (d, payload) = decode_row(&value)?;
            let payload = payload.resolve(&log, seq)?;
            let secret = captured_secret(tx, &d)?;
            entries.push(dead_letter_entry(
                d,
                secret,
                &payload,
                format!(
                    "backlog_full: more than {limit} deliveries of this session were pending for this URL"
                ),
                DlqReason::BacklogFull,
            ));
            moved.push(OutboxKey {
                session_id: session.to_owned(),
                url: url.to_owned(),
                seq,
                delivery_id: id,
            });
        }
    }
    outbox.bump(session, url, -(moved.len() as i64))?;
    outbox.close()?;
    for entry in &entries {
        push_dlq_in(tx, entry, dlq_capacity)?;
    }
    Ok(moved)
}

/// The top bit of a row's length word: the payload is the event log's row
/// of the same sequence number, not stored after the header.
const PAYLOAD_IN_LOG: u32 = 1 << 31;

/// Where a row's payload is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RowPayload<'a> {
    /// Stored in the row, after its header.
    Inline(&'a [u8]),
    /// The event log's envelope of the row's sequence number.
    InLog,
}

impl RowPayload<'_> {
    /// The payload's bytes, read from `log` when the row points there.
    fn resolve(self, log: &impl ReadableTable<u64, &'static [u8]>, seq: u64) -> StoreResult<Bytes> {
        match self {
            RowPayload::Inline(bytes) => Ok(Bytes::copy_from_slice(bytes)),
            RowPayload::InLog => {
                let row = log.get(seq)?.ok_or_else(|| {
                    corrupt("an outbox row points at an event the log no longer holds")
                })?;
                Ok(Bytes::copy_from_slice(
                    row.value().get(8..).unwrap_or_default(),
                ))
            }
        }
    }
}

/// Encodes a row's value; `payload` is `Inline` unless the event log holds
/// it under the row's sequence number.
pub(crate) fn encode_row(
    delivery: &PendingDelivery,
    payload: RowPayload<'_>,
) -> StoreResult<Vec<u8>> {
    let meta = encode(delivery)?;
    let len = u32::try_from(meta.len())
        .ok()
        .filter(|l| l & PAYLOAD_IN_LOG == 0)
        .ok_or_else(|| corrupt("delivery record too large"))?;
    let (word, bytes) = match payload {
        RowPayload::Inline(bytes) => (len, bytes),
        RowPayload::InLog => (len | PAYLOAD_IN_LOG, &[][..]),
    };
    let mut out = Vec::with_capacity(4 + meta.len() + bytes.len());
    out.extend_from_slice(&word.to_le_bytes());
    out.extend_from_slice(&meta);
    out.extend_from_slice(bytes);
    Ok(out)
}

/// Decodes a row's value.
fn decode_row(bytes: &[u8]) -> StoreResult<(PendingDelivery, RowPayload<'_>)> {
    let (word, rest) = bytes
        .split_first_chunk::<4>()
        .ok_or_else(|| corrupt("outbox row too short"))?;
    let word = u32::from_le_bytes(*word);
    let len = (word & !PAYLOAD_IN_LOG) as usize;
    if rest.len() < len {
        return Err(corrupt("outbox row shorter than its header says"));
    }
    let (meta, payload) = rest.split_at(len);
    let payload = if word & PAYLOAD_IN_LOG != 0 {
        RowPayload::InLog
    } else {
        RowPayload::Inline(payload)
    };
    Ok((decode(meta)?, payload))
}

/// Most sequence numbers between two removed rows of one stretch: the rows
/// still pending between them are read (not changed) by the pass, so a
/// batch that also holds an old retry is removed in two passes rather than
/// one over the whole backlog between them.
const STRETCH_GAP: u64 = 256;

/// `keys` (sorted) cut where the gap between neighbours passes
/// [`STRETCH_GAP`].
fn stretches<'k, 's>(keys: &'s [(u64, &'k str)]) -> impl Iterator<Item = &'s [(u64, &'k str)]> {
    keys.chunk_by(|a, b| b.0 - a.0 <= STRETCH_GAP)
}

/// Log rows taken out of the event log that pending outbox rows may still
/// point at, gathered while the log is pruned; [`PayloadKeeper::keep`]
/// copies each payload into the rows that point at it, a chunk at a time:
/// one outbox range per URL per chunk, not one per pruned row.
pub(crate) struct PayloadKeeper {
    lanes: Vec<Lane>,
    /// The oldest sequence number a pending row points at: log rows below
    /// it are owed to nobody.
    pointed: u64,
    rows: BTreeMap<u64, Vec<u8>>,
}

/// Pruned log rows held at most before their payloads are copied.
const KEEP_CHUNK: usize = 1024;

impl PayloadKeeper {
    /// A keeper for the outbox as `tx` holds it.
    pub(crate) fn new(tx: &WriteTransaction) -> StoreResult<Self> {
        let (lanes, pointed) = pending_lanes(tx)?;
        Ok(Self {
            lanes,
            pointed,
            rows: BTreeMap::new(),
        })
    }

    /// The log row of event `seq`, whose envelope is `json`, is going.
    pub(crate) fn offer(
        &mut self,
        tx: &WriteTransaction,
        seq: u64,
        json: &[u8],
    ) -> StoreResult<()> {
        if seq < self.pointed || self.lanes.is_empty() {
            return Ok(());
        }
        self.rows.insert(seq, json.to_vec());
        if self.rows.len() >= KEEP_CHUNK {
            self.keep(tx)?;
        }
        Ok(())
    }

    /// Copies the payloads gathered so far into the rows pointing at them.
    pub(crate) fn keep(&mut self, tx: &WriteTransaction) -> StoreResult<()> {
        let (Some(&lo), Some(&hi)) = (self.rows.keys().next(), self.rows.keys().next_back()) else {
            return Ok(());
        };
        let mut table = tx.open_table(WEBHOOK_OUTBOX)?;
        for (session, url) in &self.lanes {
            let (session, url) = (session.as_str(), url.as_str());
            let mut rewritten = Vec::new();
            for row in table.range((session, url, lo, "")..=(session, url, hi, END))? {
                let (k, v) = row?;
                let (seq, id) = (k.value().2, k.value().3);
                let Some(json) = self.rows.get(&seq) else {
                    continue;
                };
                if let (d, RowPayload::InLog) = decode_row(v.value())? {
                    rewritten.push((
                        seq,
                        id.to_owned(),
                        encode_row(&d, RowPayload::Inline(json))?,
                    ));
                }
            }
            for (seq, id, value) in rewritten {
                table.insert((session, url, seq, id.as_str()), value.as_slice())?;
            }
        }
        self.rows.clear();
        Ok(())
    }
}

/// The lanes with deliveries pending, and the oldest sequence number any of
/// them points at in the event log (`u64::MAX`: none), so pruning the log
/// below it needs no look-up.
fn pending_lanes(tx: &WriteTransaction) -> StoreResult<(Vec<Lane>, u64)> {
    let depth = tx.open_table(WEBHOOK_OUTBOX_DEPTH)?;
    let rows = tx.open_table(WEBHOOK_OUTBOX)?;
    let mut lanes = Vec::new();
    let mut oldest = u64::MAX;
    for row in depth.iter()? {
        let (key, _) = row?;
        let (session, url) = key.value();
        // Sequence 0 is a DLQ replay, which always holds its payload.
        if let Some(first) = rows
            .range((session, url, 1u64, "")..=(session, url, u64::MAX, END))?
            .next()
        {
            oldest = oldest.min(first?.0.value().2);
        }
        lanes.push((session.to_owned(), url.to_owned()));
    }
    Ok((lanes, oldest))
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(serde_json::Error::io(std::io::Error::other(
        what.to_owned(),
    )))
}

/// The open depth table.
type DepthTable<'t> = redb::Table<'t, (&'static str, &'static str), u64>;

/// Adds `by` (possibly negative) to a lane's depth.
fn add_depth(tx: &WriteTransaction, session: &str, url: &str, by: i64) -> StoreResult<u64> {
    bump_depth(&mut tx.open_table(WEBHOOK_OUTBOX_DEPTH)?, session, url, by)
}

/// Adds `by` (possibly negative) to a lane's depth in the open depth table.
fn bump_depth(t: &mut DepthTable<'_>, session: &str, url: &str, by: i64) -> StoreResult<u64> {
    let next = t
        .get((session, url))?
        .map(|v| v.value())
        .unwrap_or(0)
        .saturating_add_signed(by);
    put_depth(t, session, url, next)?;
    Ok(next)
}

/// Sets a lane's depth; a lane with nothing pending has no row.
fn put_depth(t: &mut DepthTable<'_>, session: &str, url: &str, depth: u64) -> StoreResult<()> {
    if depth == 0 {
        t.remove((session, url))?;
    } else {
        t.insert((session, url), depth)?;
    }
    Ok(())
}

/// The secret a dead-letter entry keeps for its replay, captured now: the
/// row's own (a replay's, or a row written before pending rows referred to
/// their webhook's), else its webhook's as stored now (`None`: unsigned,
/// or the webhook is gone).
fn captured_secret(tx: &WriteTransaction, d: &PendingDelivery) -> StoreResult<Option<String>> {
    if d.secret.is_some() || d.replayed {
        return Ok(d.secret.clone());
    }
    let Some(id) = d.webhook_id.as_deref() else {
        return Ok(None);
    };
    let hooks = tx.open_table(super::tables::WEBHOOKS)?;
    let hook: Option<crate::domain::webhook::Webhook> = hooks
        .get((d.session_id.as_str(), id))?
        .map(|v| decode(v.value()))
        .transpose()?;
    Ok(hook.and_then(|h| h.secret))
}

/// The dead-letter entry of a delivery, with the secret captured for it.
fn dead_letter_entry(
    d: PendingDelivery,
    secret: Option<String>,
    payload: &[u8],
    last_error: String,
    reason: DlqReason,
) -> DlqEntry {
    DlqEntry {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: d.session_id,
        webhook_id: d.webhook_id,
        webhook_url: d.url,
        event: d.event,
        payload: String::from_utf8_lossy(payload).into_owned(),
        last_error,
        attempts: d.attempts,
        failed_at: crate::domain::time::unix_now(),
        secret,
        delivery_id: d.delivery_id,
        reason,
        signature_scheme: d.signature_scheme,
    }
}

/// The table key of a row.
fn row_key(key: &OutboxKey) -> (&str, &str, u64, &str) {
    (
        key.session_id.as_str(),
        key.url.as_str(),
        key.seq,
        key.delivery_id.as_str(),
    )
}

/// Removes one row, if it is there; returns its value.
fn take_row(tx: &WriteTransaction, key: &OutboxKey) -> StoreResult<Option<Vec<u8>>> {
    let removed = tx
        .open_table(WEBHOOK_OUTBOX)?
        .remove(row_key(key))?
        .map(|v| v.value().to_vec());
    if removed.is_some() {
        add_depth(tx, &key.session_id, &key.url, -1)?;
    }
    Ok(removed)
}

impl Store {
    /// Every delivery in the outbox, each URL's in event order.
    pub fn outbox_all(&self) -> StoreResult<Vec<OutboxRow>> {
        Ok(self.outbox_of(|_| true)?.0)
    }

    /// The deliveries whose destination `mine` accepts, each session's
    /// deliveries to a URL in event order, and how many others the outbox holds (those are neither
    /// decoded nor their payloads read: each engine resumes only its own).
    pub fn outbox_of(&self, mine: impl Fn(&str) -> bool) -> StoreResult<(Vec<OutboxRow>, usize)> {
        self.read(|tx| {
            let t = tx.open_table(WEBHOOK_OUTBOX)?;
            let log = tx.open_table(EVENT_LOG)?;
            let mut out = Vec::new();
            let mut others = 0;
            for row in t.iter()? {
                let (k, v) = row?;
                let (session, url, seq, id) = k.value();
                if !mine(url) {
                    others += 1;
                    continue;
                }
                let (delivery, payload) = decode_row(v.value())?;
                let payload = payload.resolve(&log, seq)?;
                out.push(OutboxRow {
                    key: OutboxKey {
                        session_id: session.to_owned(),
                        url: url.to_owned(),
                        seq,
                        delivery_id: id.to_owned(),
                    },
                    delivery,
                    payload,
                });
            }
            Ok((out, others))
        })
    }

    /// How many deliveries each (session, URL) has pending (the depth
    /// table the backlog limit reads; the gateway's metrics count its
    /// lanes).
    #[cfg(test)]
    pub(crate) fn outbox_depths(&self) -> StoreResult<Vec<(Lane, u64)>> {
        self.read(|tx| {
            let t = tx.open_table(WEBHOOK_OUTBOX_DEPTH)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                let (k, v) = row?;
                let (session, url) = k.value();
                out.push(((session.to_owned(), url.to_owned()), v.value()));
            }
            Ok(out)
        })
    }

    /// Marks delivered rows for removal: they go with the next event's
    /// write, or with [`Store::flush_outbox_removals`]. Until then a crash
    /// repeats them (same delivery id), which at-least-once allows.
    pub fn remove_outbox_later(&self, keys: Vec<OutboxKey>) {
        self.removals.push(keys);
    }

    /// Commits the removals no event write has taken yet, if any.
    pub async fn flush_outbox_removals(&self) -> StoreResult<()> {
        let keys = self.removals.take();
        if keys.is_empty() {
            return Ok(());
        }
        let removals = self.removals.clone();
        let kept = keys.clone();
        let result = self.write_grouped(move |tx| remove_rows(tx, &keys)).await;
        if result.is_err() {
            removals.restore(kept);
        }
        result
    }

    /// Records a failed attempt of a delivery that will be tried again;
    /// `false` when the row is gone (delivered, evicted or its session deleted).
    pub async fn outbox_reschedule(
        &self,
        key: OutboxKey,
        attempts: u32,
        next_attempt_at: i64,
        last_error: String,
    ) -> StoreResult<bool> {
        self.write_grouped(move |tx| {
            let mut t = tx.open_table(WEBHOOK_OUTBOX)?;
            let k = row_key(&key);
            let Some(value) = t.get(k)?.map(|v| v.value().to_vec()) else {
                return Ok(false);
            };
            let (mut d, payload) = decode_row(&value)?;
            d.attempts = attempts;
            d.next_attempt_at = next_attempt_at;
            d.last_error = Some(last_error.clone());
            t.insert(k, encode_row(&d, payload)?.as_slice())?;
            Ok(true)
        })
        .await
    }

    /// Moves a delivery from the outbox to its session's dead-letter queue
    /// in one transaction; `false` (and nothing written) when the row is gone.
    pub async fn outbox_dead_letter(
        &self,
        key: OutboxKey,
        attempts: u32,
        last_error: String,
        dlq_capacity: usize,
    ) -> StoreResult<bool> {
        self.write_grouped(move |tx| {
            let Some(value) = take_row(tx, &key)? else {
                return Ok(false);
            };
            let (mut d, payload) = decode_row(&value)?;
            let payload = payload.resolve(&tx.open_table(EVENT_LOG)?, key.seq)?;
            d.attempts = attempts;
            let secret = captured_secret(tx, &d)?;
            let entry =
                dead_letter_entry(d, secret, &payload, last_error.clone(), DlqReason::Failed);
            push_dlq_in(tx, &entry, dlq_capacity)?;
            Ok(true)
        })
        .await
    }

    /// Drops every pending delivery of a deleted webhook of `session`;
    /// returns how many.
    pub fn outbox_forget_webhook(
        &self,
        session: &str,
        url: &str,
        webhook_id: &str,
    ) -> StoreResult<usize> {
        self.write(|tx| {
            let mut gone = 0i64;
            tx.open_table(WEBHOOK_OUTBOX)?.retain_in(
                (session, url, 0u64, "")..=(session, url, u64::MAX, END),
                |_, v| {
                    let mine = decode_row(v).is_ok_and(|(d, _)| {
                        !d.replayed && d.webhook_id.as_deref() == Some(webhook_id)
                    });
                    gone += i64::from(mine);
                    !mine
                },
            )?;
            add_depth(tx, session, url, -gone)?;
            Ok(gone as usize)
        })
    }

    /// Takes a dead-letter entry and records its re-delivery under `seq`,
    /// in one transaction; `None` when there is no such entry.
    pub fn replay_dlq_into_outbox(
        &self,
        session_id: &str,
        entry_id: &str,
        seq: u64,
        delivery: impl FnOnce(&DlqEntry) -> PendingDelivery,
    ) -> StoreResult<Option<OutboxRow>> {
        self.write(|tx| {
            let Some(entry) = super::webhooks::take_dlq_in(tx, session_id, entry_id)? else {
                return Ok(None);
            };
            let d = delivery(&entry);
            let payload = Bytes::from(entry.payload.into_bytes());
            let key = OutboxKey {
                session_id: d.session_id.clone(),
                url: d.url.clone(),
                seq,
                delivery_id: d.delivery_id.clone(),
            };
            tx.open_table(WEBHOOK_OUTBOX)?.insert(
                row_key(&key),
                encode_row(&d, RowPayload::Inline(&payload))?.as_slice(),
            )?;
            add_depth(tx, &key.session_id, &key.url, 1)?;
            Ok(Some(OutboxRow {
                key,
                delivery: d,
                payload,
            }))
        })
    }
}

/// Removes every pending delivery of a deleted session: its key range, and
/// its depths.
pub(crate) fn delete_session_outbox(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    let s = session_id;
    tx.open_table(WEBHOOK_OUTBOX)?
        .retain_in((s, "", 0u64, "")..=(s, END, u64::MAX, END), |_, _| false)?;
    tx.open_table(WEBHOOK_OUTBOX_DEPTH)?
        .retain_in((s, "")..=(s, END), |_, _| false)?;
    Ok(())
}

/// Moves the rows of a store from before per-session backlogs (keyed by
/// URL first) into the outbox as it is keyed now, with their depths, and
/// drops the old tables; a store without them is left as it is. The row
/// values keep their layout: only the key gains the session id, read from
/// each row's delivery.
pub(crate) fn migrate_v1(tx: &WriteTransaction) -> StoreResult<usize> {
    use redb::TableHandle;
    let has_v1 = tx
        .list_tables()?
        .any(|t| t.name() == WEBHOOK_OUTBOX_V1.name());
    if !has_v1 {
        return Ok(0);
    }
    let mut moved = 0usize;
    {
        let old = tx.open_table(WEBHOOK_OUTBOX_V1)?;
        let mut rows = tx.open_table(WEBHOOK_OUTBOX)?;
        let mut depth = tx.open_table(WEBHOOK_OUTBOX_DEPTH)?;
        for row in old.iter()? {
            let (k, v) = row?;
            let (url, seq, id) = k.value();
            let (d, _) = decode_row(v.value())?;
            rows.insert((d.session_id.as_str(), url, seq, id), v.value())?;
            bump_depth(&mut depth, &d.session_id, url, 1)?;
            moved += 1;
        }
    }
    tx.delete_table(WEBHOOK_OUTBOX_V1)?;
    tx.delete_table(WEBHOOK_OUTBOX_DEPTH_V1)?;
    Ok(moved)
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
