//! Recording an event: its message record (if it has one), its row in the
//! event log (`event_log_v1`) and the deliveries it owes (the webhook
//! outbox), all in one group-commit job, so an event is either recorded
//! whole or not at all and costs no fsync of its own.
//!
//! The log keeps every recorded envelope by its gateway-wide sequence
//! number, bounded by count (in the write that crosses the bound, with some
//! slack so pruning is amortised) and by age ([`Store::prune_event_log`],
//! run periodically). A stream client resumes from it.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use redb::{ReadableTable, WriteTransaction};

use super::batch::Slot;
use super::chats::ChatIndex;
use super::outbox::{
    NewDelivery, OutboxKey, OutboxTables, PayloadKeeper, Removals, RowPayload, encode_row,
    evict_oldest,
};
use super::tables::{
    EVENT_COUNT_KEY, EVENT_LOG, EVENT_PRUNED_KEY, EVENT_SEQ_KEY, MESSAGE_SEQ_KEY, MESSAGES, META,
    SESSION_INCARNATIONS, opened,
};
use super::{Store, StoreError, StoreResult};
use crate::domain::chat::BodyFacts;
use crate::domain::json_exact::to_vec_exact;
use crate::domain::message::MessageRecord;

/// Rows the log may hold beyond its count bound before a write prunes it
/// back: one prune per this many events instead of one per event.
const PRUNE_SLACK: u64 = 1024;

/// Everything recorded for one event.
#[derive(Debug, Clone, Default)]
pub struct EventWrite {
    /// Its gateway-wide sequence number.
    pub seq: u64,
    /// Unix seconds of the event (for pruning the log by age).
    pub timestamp: i64,
    /// The message record the event announces, if any.
    pub message: Option<MessageRecord>,
    /// The envelope's JSON for the event log; `None` when the log is off
    /// (or the event is not published, only its record stored).
    pub logged: Option<Bytes>,
    /// Rows the log may hold (older ones are pruned).
    pub log_limit: u64,
    /// The deliveries the event owes.
    pub deliveries: Vec<NewDelivery>,
    /// Deliveries a URL may have pending before its oldest are dead-lettered.
    pub backlog_limit: usize,
    /// Dead-letter entries kept per session.
    pub dlq_capacity: usize,
    /// The session and its incarnation the event was written for, when the
    /// writer knows it (a session's intake): the write is refused, whole,
    /// in its transaction, when that session is no longer the live one.
    pub owner: Option<(String, u64)>,
    /// Set on the write handed back: it was refused (see `owner`), and
    /// nothing of it was written.
    pub refused: bool,
}

/// A logged envelope read back.
#[derive(Debug, Clone)]
pub struct LoggedEvent {
    /// Its sequence number.
    pub seq: u64,
    /// Its JSON as published.
    pub json: Vec<u8>,
}

/// Where the event log stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventLogBounds {
    /// The highest sequence number ever given.
    pub last_seq: u64,
    /// The highest sequence number pruned (0: none): events at or below it
    /// are gone.
    pub pruned_through: u64,
}

fn meta(tx: &WriteTransaction, key: &str) -> StoreResult<u64> {
    Ok(tx
        .open_table(META)?
        .get(key)?
        .map(|v| v.value())
        .unwrap_or(0))
}

fn set_meta(tx: &WriteTransaction, key: &str, value: u64) -> StoreResult<()> {
    tx.open_table(META)?.insert(key, value)?;
    Ok(())
}

impl Store {
    /// Queues the write of one event for the next group commit and calls
    /// `then` on the writer thread once it is durable (or failed), with the
    /// outbox keys the write moved to the dead-letter queue, and `write`
    /// handed back (its message record moved into the write, not copied).
    /// Events queued one after another are committed, and answered, in
    /// that order.
    pub fn record_event(
        &self,
        write: EventWrite,
        then: impl FnOnce(EventWrite, StoreResult<Vec<OutboxKey>>) + Send + 'static,
    ) {
        match self.prepare_event(write) {
            Ok(prepared) => {
                let seq = prepared.write.seq;
                prepared.record(seq, then);
            }
            Err((write, e)) => then(write, Err(e)),
        }
    }

    /// Encodes an event's write ahead of its sequence number, so a caller
    /// that numbers events under a lock holds it only to queue them
    /// ([`PreparedEvent::record`]). The message record moves into the
    /// prepared write.
    #[allow(clippy::result_large_err)]
    pub fn prepare_event(
        &self,
        mut write: EventWrite,
    ) -> Result<PreparedEvent, (EventWrite, StoreError)> {
        match prepare(&mut write) {
            Ok(rows) => Ok(PreparedEvent {
                store: self.clone(),
                rows,
                write,
            }),
            Err(e) => Err((write, e)),
        }
    }

    /// Where the event log stands.
    pub fn event_log_bounds(&self) -> StoreResult<EventLogBounds> {
        self.read(|tx| {
            let meta = tx.open_table(META)?;
            let get = |k| -> StoreResult<u64> { Ok(meta.get(k)?.map(|v| v.value()).unwrap_or(0)) };
            Ok(EventLogBounds {
                last_seq: get(EVENT_SEQ_KEY)?,
                pruned_through: get(EVENT_PRUNED_KEY)?,
            })
        })
    }

    /// Up to `limit` logged envelopes after `after`, oldest first.
    pub fn event_log_after(&self, after: u64, limit: usize) -> StoreResult<Vec<LoggedEvent>> {
        self.read(|tx| {
            let t = tx.open_table(EVENT_LOG)?;
            let mut out = Vec::new();
            for row in t.range(after.saturating_add(1)..)?.take(limit) {
                let (k, v) = row?;
                let json = v.value().get(8..).unwrap_or_default().to_vec();
                out.push(LoggedEvent {
                    seq: k.value(),
                    json,
                });
            }
            Ok(out)
        })
    }

    /// Prunes logged envelopes older than `before` (Unix seconds); returns
    /// how many went.
    pub fn prune_event_log(&self, before: i64) -> StoreResult<u64> {
        self.write(|tx| {
            let mut gone = 0u64;
            let mut last = 0u64;
            let mut keeper = PayloadKeeper::new(tx)?;
            {
                let mut t = tx.open_table(EVENT_LOG)?;
                // Rows are in sequence order, which is time order: stop at
                // the first that is young enough.
                loop {
                    let oldest = match t.first()? {
                        Some((k, v)) if logged_at(v.value()) < before => k.value(),
                        _ => break,
                    };
                    if let Some(row) = t.remove(oldest)? {
                        keeper.offer(tx, oldest, row.value().get(8..).unwrap_or_default())?;
                    }
                    last = oldest;
                    gone += 1;
                }
            }
            keeper.keep(tx)?;
            if gone > 0 {
                let count = meta(tx, EVENT_COUNT_KEY)?.saturating_sub(gone);
                set_meta(tx, EVENT_COUNT_KEY, count)?;
                let pruned = meta(tx, EVENT_PRUNED_KEY)?.max(last);
                set_meta(tx, EVENT_PRUNED_KEY, pruned)?;
            }
            Ok(gone)
        })
    }
}

/// The Unix seconds at the head of a log row.
fn logged_at(value: &[u8]) -> i64 {
    value
        .first_chunk::<8>()
        .map_or(i64::MIN, |b| i64::from_le_bytes(*b))
}

/// An event's write, encoded and waiting for its sequence number.
pub struct PreparedEvent {
    store: Store,
    rows: Prepared,
    write: EventWrite,
}

impl PreparedEvent {
    /// Takes the message record's body back out (`Null` left in its
    /// place): once encoded, the write needs only what it read of it, so an
    /// inbound message's body can go on as its event's data instead of
    /// being copied for the record.
    pub fn take_message_body(&mut self) -> Option<serde_json::Value> {
        self.rows
            .message
            .as_mut()
            .map(|(record, _, _)| std::mem::take(&mut record.body))
    }

    /// Queues the write under sequence number `seq` (see
    /// [`Store::record_event`]); `write.seq` is set to it.
    pub fn record(
        self,
        seq: u64,
        then: impl FnOnce(EventWrite, StoreResult<Vec<OutboxKey>>) + Send + 'static,
    ) {
        let PreparedEvent {
            store,
            mut rows,
            mut write,
        } = self;
        rows.seq = seq;
        write.seq = seq;
        let refused = rows.refused.clone();
        let job = EventJob {
            rows,
            removals: store.removals.clone(),
            out: Arc::new(Mutex::new(None)),
        };
        store.write_event_then(job, move |r| {
            write.refused = refused.load(std::sync::atomic::Ordering::Acquire);
            then(write, r)
        });
    }
}

/// One event's write as the store's writer runs it (see
/// [`Store::write_event_then`]).
pub(crate) struct EventJob {
    rows: Prepared,
    removals: Removals,
    /// The outbox keys the write moved to the dead-letter queue.
    out: Slot<Vec<OutboxKey>>,
}

impl EventJob {
    /// Where the job leaves the outbox keys it dead-lettered.
    pub(crate) fn out(&self) -> Slot<Vec<OutboxKey>> {
        self.out.clone()
    }

    /// The job's write failed for good (its commit did, not only its own
    /// rows): the delivered rows it took for removal go back, for the next
    /// write to take.
    pub(crate) fn give_back(&mut self) {
        self.removals
            .restore(self.rows.removals.take().unwrap_or_default());
    }

    /// Writes the event with `tables` (shared with the events written
    /// before and after it in the same transaction).
    pub(crate) fn apply(&mut self, tables: &mut EventTables<'_>) -> StoreResult<()> {
        let evicted = self.rows.apply(tables, &self.removals)?;
        *self.out.lock().unwrap_or_else(|p| p.into_inner()) = Some(evicted);
        Ok(())
    }
}

/// The tables an event's write uses, each opened when first needed and
/// left open for the next event of the same transaction; the chat index
/// keeps the chats it changed, the outbox its URLs' depths and this the
/// meta counters, until [`EventTables::close`] writes each once. Anything
/// that opens one of these tables itself (pruning, eviction, a write that
/// is not an event's) runs only after `close`.
pub(crate) struct EventTables<'t> {
    tx: &'t WriteTransaction,
    meta: Option<redb::Table<'t, &'static str, u64>>,
    /// The counters in `meta` every event bumps (by [`Counter`]): read
    /// once, written by `close`, and whether each changed.
    counters: [Option<(u64, bool)>; 3],
    messages: Option<redb::Table<'t, (&'static str, u64), &'static [u8]>>,
    log: Option<redb::Table<'t, u64, &'static [u8]>>,
    outbox: Option<OutboxTables<'t>>,
    incarnations: Option<redb::Table<'t, &'static str, u64>>,
    chats: ChatIndex<'t>,
}

/// The meta counters an event's write bumps.
#[derive(Debug, Clone, Copy)]
enum Counter {
    /// The last message record's row.
    MessageSeq = 0,
    /// The highest event sequence number given.
    EventSeq = 1,
    /// Rows in the event log.
    EventCount = 2,
}

impl Counter {
    const ALL: [Counter; 3] = [Counter::MessageSeq, Counter::EventSeq, Counter::EventCount];

    fn key(self) -> &'static str {
        match self {
            Counter::MessageSeq => MESSAGE_SEQ_KEY,
            Counter::EventSeq => EVENT_SEQ_KEY,
            Counter::EventCount => EVENT_COUNT_KEY,
        }
    }
}

impl<'t> EventTables<'t> {
    /// Nothing opened yet.
    pub(crate) fn new(tx: &'t WriteTransaction) -> Self {
        EventTables {
            tx,
            meta: None,
            counters: [None; 3],
            messages: None,
            log: None,
            outbox: None,
            incarnations: None,
            chats: ChatIndex::new(tx),
        }
    }

    fn meta(&mut self) -> StoreResult<&mut redb::Table<'t, &'static str, u64>> {
        opened(&mut self.meta, self.tx, META)
    }

    /// A counter's value in this transaction.
    fn counter(&mut self, c: Counter) -> StoreResult<u64> {
        if let Some((v, _)) = self.counters[c as usize] {
            return Ok(v);
        }
        let v = get(self.meta()?, c.key())?;
        self.counters[c as usize] = Some((v, false));
        Ok(v)
    }

    /// Sets a counter (written by `close`).
    fn set_counter(&mut self, c: Counter, v: u64) {
        self.counters[c as usize] = Some((v, true));
    }

    fn messages(
        &mut self,
    ) -> StoreResult<&mut redb::Table<'t, (&'static str, u64), &'static [u8]>> {
        opened(&mut self.messages, self.tx, MESSAGES)
    }

    fn incarnations(&mut self) -> StoreResult<&mut redb::Table<'t, &'static str, u64>> {
        opened(&mut self.incarnations, self.tx, SESSION_INCARNATIONS)
    }

    fn log(&mut self) -> StoreResult<&mut redb::Table<'t, u64, &'static [u8]>> {
        opened(&mut self.log, self.tx, EVENT_LOG)
    }

    fn outbox(&mut self) -> StoreResult<&mut OutboxTables<'t>> {
        let outbox = match self.outbox.take() {
            Some(o) => o,
            None => OutboxTables::open(self.tx)?,
        };
        Ok(self.outbox.insert(outbox))
    }

    /// Writes the chats, depths and counters changed and closes every
    /// table.
    pub(crate) fn close(&mut self) -> StoreResult<()> {
        self.chats.close()?;
        self.close_outbox()?;
        for c in Counter::ALL {
            if let Some((v, true)) = self.counters[c as usize].take() {
                self.meta()?.insert(c.key(), v)?;
            }
        }
        self.meta = None;
        self.messages = None;
        self.log = None;
        self.incarnations = None;
        Ok(())
    }

    /// Writes the outbox's changed depths and closes its tables.
    fn close_outbox(&mut self) -> StoreResult<()> {
        match self.outbox.take() {
            Some(o) => o.close(),
            None => Ok(()),
        }
    }
}

/// An [`EventWrite`] with everything encoded, ready for the writer.
struct Prepared {
    /// Delivered outbox rows this write removes too.
    removals: Option<Vec<OutboxKey>>,
    seq: u64,
    /// The message record, encoded, and what its chat takes from its body
    /// (read when it was encoded, so the body may leave the record then).
    message: Option<(MessageRecord, Vec<u8>, BodyFacts)>,
    logged: Option<Vec<u8>>,
    log_limit: u64,
    deliveries: Vec<(String, String, String, Vec<u8>)>,
    backlog_limit: usize,
    dlq_capacity: usize,
    owner: Option<(String, u64)>,
    /// Whether the last run refused the write (its owner not live).
    refused: Arc<std::sync::atomic::AtomicBool>,
}

fn prepare(w: &mut EventWrite) -> StoreResult<Prepared> {
    let message = match w.message.take() {
        // Through the thread's scratch buffer (see `json_exact`): a 1 KB
        // record grown from nothing is copied four times over.
        Some(m) => match to_vec_exact(&m).map_err(StoreError::from) {
            Ok(bytes) => {
                let facts = BodyFacts::of(&m.body);
                Some((m, bytes, facts))
            }
            Err(e) => {
                w.message = Some(m);
                return Err(e);
            }
        },
        None => None,
    };
    let logged = w.logged.as_ref().map(|json| {
        let mut row = Vec::with_capacity(8 + json.len());
        row.extend_from_slice(&w.timestamp.to_le_bytes());
        row.extend_from_slice(json);
        row
    });
    let deliveries = w
        .deliveries
        .iter()
        .map(|d| {
            // The log holds the envelope already: the row points at it.
            let payload = if w.logged.as_deref() == Some(d.payload.as_ref()) {
                RowPayload::InLog
            } else {
                RowPayload::Inline(&d.payload)
            };
            Ok((
                d.delivery.session_id.clone(),
                d.delivery.url.clone(),
                d.delivery.delivery_id.clone(),
                encode_row(&d.delivery, payload)?,
            ))
        })
        .collect::<StoreResult<_>>()?;
    Ok(Prepared {
        removals: None,
        seq: w.seq,
        message,
        logged,
        log_limit: w.log_limit,
        deliveries,
        backlog_limit: w.backlog_limit,
        dlq_capacity: w.dlq_capacity,
        owner: w.owner.clone(),
        refused: Arc::default(),
    })
}

impl Prepared {
    /// Writes the event, and the delivered rows waiting for removal (taken
    /// on the first run; a run again after a failed batch reuses them, and a
    /// write that fails for good gives them back).
    fn apply(
        &mut self,
        tables: &mut EventTables<'_>,
        removals: &Removals,
    ) -> StoreResult<Vec<OutboxKey>> {
        if self.removals.is_none() {
            self.removals = Some(removals.take());
        }
        let result = self.apply_event(tables);
        if result.is_err() {
            // This transaction is dropped; if the job runs again (its batch
            // failed) it takes them from the shared list once more.
            removals.restore(self.removals.take().unwrap_or_default());
        }
        result
    }

    /// The hot path of the whole gateway: every table it touches stays
    /// open for the next event (see [`EventTables`]).
    fn apply_event(&mut self, t: &mut EventTables<'_>) -> StoreResult<Vec<OutboxKey>> {
        let owned = match &self.owner {
            None => true,
            Some((session, incarnation)) => {
                crate::sessions::incarnation_in(&*t.incarnations()?, session)? == Some(*incarnation)
            }
        };
        self.refused
            .store(!owned, std::sync::atomic::Ordering::Release);
        if !owned {
            // Written for a deleted session (or one deleted and created
            // again): nothing of it, but its number is kept, as it was given.
            if self.seq > 0 && t.counter(Counter::EventSeq)? < self.seq {
                t.set_counter(Counter::EventSeq, self.seq);
            }
            let taken = self.removals.as_deref().unwrap_or_default();
            if !taken.is_empty() {
                t.outbox()?.remove(taken)?;
            }
            return Ok(Vec::new());
        }
        if let Some((record, bytes, facts)) = &self.message {
            let seq = t.counter(Counter::MessageSeq)? + 1;
            t.set_counter(Counter::MessageSeq, seq);
            t.messages()?
                .insert((record.session_id.as_str(), seq), bytes.as_slice())?;
            t.chats.index_with(record, facts, seq)?;
        }
        let taken = self.removals.as_deref().unwrap_or_default();
        // Every number given is kept, logged or not (the log off, no
        // delivery owed): numbering resumes above it after a restart, so an
        // event id is never given twice. A record-only write has none.
        if self.seq > 0 && t.counter(Counter::EventSeq)? < self.seq {
            t.set_counter(Counter::EventSeq, self.seq);
        }
        if self.logged.is_none() && self.deliveries.is_empty() {
            if !taken.is_empty() {
                t.outbox()?.remove(taken)?;
            }
            return Ok(Vec::new());
        }
        if let Some(row) = &self.logged {
            t.log()?.insert(self.seq, row.as_slice())?;
            let count = t.counter(Counter::EventCount)? + 1;
            if count > self.log_limit + PRUNE_SLACK {
                self.prune_to_limit(t, count)?;
            } else {
                t.set_counter(Counter::EventCount, count);
            }
        }
        let over = t
            .outbox()?
            .add(self.seq, &self.deliveries, self.backlog_limit)?;
        let mut evicted = Vec::new();
        if !over.is_empty() {
            // Eviction opens the outbox, the log, the dead-letter queue and
            // the meta table itself.
            t.close()?;
            for ((session, url), n) in over {
                evicted.extend(evict_oldest(
                    t.tx,
                    (&session, &url),
                    n,
                    self.backlog_limit,
                    self.dlq_capacity,
                )?);
            }
        }
        t.outbox()?.remove(taken)?;
        Ok(evicted)
    }

    /// Drops the oldest rows down to the log's limit (a pending delivery
    /// that points at one gets its payload copied in first).
    fn prune_to_limit(&self, t: &mut EventTables<'_>, count: u64) -> StoreResult<()> {
        let excess = count - self.log_limit;
        // The keeper reads and rewrites the outbox itself.
        t.close_outbox()?;
        let tx = t.tx;
        let mut keeper = PayloadKeeper::new(tx)?;
        let mut last = 0u64;
        let mut gone = 0u64;
        // Read the rows going first, then remove them in one ordered pass:
        // a pop per row descended from the root and rebalanced the leaf
        // each time, and was a twelfth of the store writer's time.
        for row in t
            .log()?
            .range::<u64>(..)?
            .take(usize::try_from(excess).unwrap_or(usize::MAX))
        {
            let (k, v) = row?;
            last = k.value();
            keeper.offer(tx, last, v.value().get(8..).unwrap_or_default())?;
            gone += 1;
        }
        if gone > 0 {
            t.log()?.retain_in(..=last, |_, _| false)?;
        }
        keeper.keep(tx)?;
        t.set_counter(Counter::EventCount, count - gone);
        let meta = t.meta()?;
        let pruned = get(meta, EVENT_PRUNED_KEY)?.max(last);
        meta.insert(EVENT_PRUNED_KEY, pruned)?;
        Ok(())
    }
}

/// A counter in the open meta table (0 when unset).
fn get(meta: &redb::Table<'_, &'static str, u64>, key: &str) -> StoreResult<u64> {
    Ok(meta.get(key)?.map(|v| v.value()).unwrap_or(0))
}

#[cfg(test)]
#[path = "event_log_tests.rs"]
mod tests;
