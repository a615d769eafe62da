//! The event bus: every envelope the gateway emits is published here once,
//! recorded, and fanned out.
//!
//! Publishing an envelope (after the plugin event filters, which may change
//! or drop it):
//! 1. asks each [`Outbox`] (webhook delivery; the broker, when one is
//!    configured) which deliveries it owes;
//! 2. gives it the next gateway-wide sequence number and queues one
//!    group-commit write of everything it needs: its message record (for
//!    an inbound message), its row in the event log (for streams that
//!    resume) and its deliveries. Numbers are given and writes queued under
//!    one lock, so the store commits them in sequence order;
//! 3. once that write is durable, releases it, in sequence order: live
//!    stream receivers, synchronous [`Subscriber`]s, and each outbox's
//!    delivery engine (with the deliveries whose destination it claims).
//!
//! So no delivery is attempted, and no stream client sees an event, before
//! it is on disk; a crash loses nothing a subscriber is owed. A bus built
//! with [`EventBus::new`] has no store (unit tests): it releases at once.

pub mod log;

use std::sync::{Arc, Mutex, RwLock};

use bytes::Bytes;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::counters::EventCounters;
use crate::domain::event::Envelope;
use crate::domain::json_exact::to_vec_exact;
use crate::domain::message::MessageRecord;
use crate::store::{EventWrite, NewDelivery, OutboxKey, Store, StoreError, StoreResult};
pub use log::{EventLogConfig, Resume};

/// How many envelopes a slow stream receiver may lag behind before it loses some.
pub const BUS_CAPACITY: usize = 8192;

/// A synchronous audience of every envelope. `accept` runs on the releasing
/// task: it must not block or await; it hands the envelope to its own queue.
pub trait Subscriber: Send + Sync + 'static {
    /// Takes one envelope.
    fn accept(&self, envelope: &Arc<Envelope>);
}

pub use crate::domain::hooks::EventFilter;

/// Where events owe deliveries: the webhook engine, and the broker when one
/// is configured. Each owns the outbox rows of the destinations it claims.
pub trait Outbox: Send + Sync + 'static {
    /// Whether the outbox row destination `url` is this engine's.
    fn claims(&self, url: &str) -> bool;
    /// The deliveries `envelope` owes; `json` is its serialization (the
    /// payload, unless a filter scoped to one webhook changes it).
    fn plan(&self, envelope: &Arc<Envelope>, json: &Bytes) -> Vec<NewDelivery>;
    /// The bounds the write of the deliveries keeps.
    fn limits(&self) -> OutboxLimits;
    /// The deliveries of event `seq`, once stored (or, if the store refused
    /// them, to be attempted anyway), in sequence order; `evicted` are older
    /// deliveries the write moved to the dead-letter queue.
    fn release(&self, seq: u64, deliveries: Vec<NewDelivery>, evicted: Vec<OutboxKey>);
    /// Drops what it still holds for a session being deleted (the store's
    /// cascade removes the rows), so nothing of it is attempted again.
    fn forget_session(&self, _session_id: &str) {}
}

/// The bounds of the webhook outbox.
#[derive(Debug, Clone, Copy)]
pub struct OutboxLimits {
    /// Deliveries a URL may have pending.
    pub backlog: usize,
    /// Dead-letter entries kept per session.
    pub dlq_capacity: usize,
}

/// The answer of a publish: resolves once the envelope (and the message
/// record published with it) is durable. Dropping it changes nothing.
pub type Recorded = oneshot::Receiver<StoreResult<()>>;

/// A recorded envelope on its way to release.
struct Release {
    envelope: Arc<Envelope>,
    deliveries: Vec<NewDelivery>,
    evicted: Vec<OutboxKey>,
}

struct Durable {
    store: Store,
    log: EventLogConfig,
    released: mpsc::UnboundedSender<Release>,
}

struct Inner {
    tx: broadcast::Sender<Arc<Envelope>>,
    subscribers: RwLock<Vec<Arc<dyn Subscriber>>>,
    filter: RwLock<Option<Arc<dyn EventFilter>>>,
    /// Replaced whole when one is added, so a publish reads it with one
    /// reference count instead of copying the list.
    outboxes: RwLock<Arc<[Arc<dyn Outbox>]>>,
    counters: EventCounters,
    /// The next sequence number; held while a write is queued, so numbers
    /// reach the store in order.
    next_seq: Mutex<u64>,
    durable: Option<Durable>,
}

/// A cheap-to-clone handle on the event bus.
#[derive(Clone)]
pub struct EventBus {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus").finish_non_exhaustive()
    }
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    /// A bus without a store: envelopes are released as they are published.
    pub fn new() -> Self {
        Self::build(None, 1)
    }

    /// A bus that records every envelope in `store` before releasing it;
    /// numbering goes on above the highest number the store has seen. Its
    /// release task and the log's pruning run on `tasks` until `cancel`.
    pub fn durable(
        store: Store,
        log: EventLogConfig,
        cancel: CancellationToken,
        tasks: &TaskTracker,
    ) -> StoreResult<Self> {
        let next = store.event_log_bounds()?.last_seq + 1;
        let (released, rx) = mpsc::unbounded_channel();
        let bus = Self::build(
            Some(Durable {
                store: store.clone(),
                log: log.clone(),
                released,
            }),
            next,
        );
        if log.enabled() {
            tasks.spawn(log::prune_loop(store, log, cancel.clone()));
        }
        let releaser = bus.clone();
        tasks.spawn(async move { releaser.release_loop(rx, cancel).await });
        Ok(bus)
    }

    fn build(durable: Option<Durable>, next_seq: u64) -> Self {
        let (tx, _) = broadcast::channel(BUS_CAPACITY);
        Self {
            inner: Arc::new(Inner {
                tx,
                subscribers: RwLock::new(Vec::new()),
                filter: RwLock::new(None),
                outboxes: RwLock::new(Arc::from(Vec::new())),
                counters: EventCounters::default(),
                next_seq: Mutex::new(next_seq),
                durable,
            }),
        }
    }

    /// Sets the filter every envelope passes before fan-out.
    pub fn set_filter(&self, filter: Arc<dyn EventFilter>) {
        *self.inner.filter.write().unwrap_or_else(|p| p.into_inner()) = Some(filter);
    }

    /// Adds a place where envelopes owe deliveries (the webhook engine, a
    /// broker); set up before the first publish.
    pub fn add_outbox(&self, outbox: Arc<dyn Outbox>) {
        let mut list = self
            .inner
            .outboxes
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let mut next = list.to_vec();
        next.push(outbox);
        *list = Arc::from(next);
    }

    /// Has every outbox drop what it still holds for a session being
    /// deleted.
    pub fn forget_session(&self, session_id: &str) {
        for outbox in self.outboxes().iter() {
            outbox.forget_session(session_id);
        }
    }

    fn outboxes(&self) -> Arc<[Arc<dyn Outbox>]> {
        self.inner
            .outboxes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Adds a synchronous subscriber; it sees every envelope released from now on.
    pub fn add_subscriber(&self, subscriber: Arc<dyn Subscriber>) {
        self.inner
            .subscribers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(subscriber);
    }

    /// Publishes one envelope: recorded, then released to every audience.
    pub fn publish(&self, envelope: Envelope) -> Recorded {
        self.record(envelope, None, None)
    }

    /// [`EventBus::publish`] for one incarnation of the envelope's session
    /// (its intake's): the store refuses the write, in its transaction,
    /// when that session was deleted meanwhile, and nothing is released.
    pub fn publish_for(&self, envelope: Envelope, incarnation: u64) -> Recorded {
        self.record(envelope, None, Some(incarnation))
    }

    /// [`EventBus::publish_message`] for one incarnation of the session
    /// (see [`EventBus::publish_for`]).
    pub fn publish_message_for(
        &self,
        envelope: Envelope,
        record: MessageRecord,
        incarnation: u64,
    ) -> Recorded {
        self.record(envelope, Some(record), Some(incarnation))
    }

    /// Publishes the envelope of an inbound message with its record: both
    /// are written in one transaction (the record even if a filter drops
    /// the envelope). The record's body is the envelope's data as received
    /// (whatever `record.body` holds is replaced): it is copied only when a
    /// filter could change the data; otherwise the record is encoded from
    /// the envelope's own, one value for both.
    pub fn publish_message(&self, envelope: Envelope, record: MessageRecord) -> Recorded {
        self.record(envelope, Some(record), None)
    }

    fn record(
        &self,
        envelope: Envelope,
        mut message: Option<MessageRecord>,
        incarnation: Option<u64>,
    ) -> Recorded {
        let owner = incarnation.map(|i| (envelope.session_id.clone(), i));
        tracing::debug!(session = %envelope.session_id, event = %envelope.event, "event");
        let inner = &self.inner;
        inner.counters.received.inc();
        let (done, recorded) = oneshot::channel();
        // No filter bound for the session: nothing to call, and nothing can
        // change the data the record shares.
        let filter = inner
            .filter
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .filter(|f| f.may_change(&envelope.session_id));
        let shares_data = match (&filter, &mut message) {
            (Some(_), Some(record)) => {
                record.body = envelope.data.clone();
                false
            }
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let envelope = match filter {
            Some(f) => f.filter(envelope),
            None => Some(envelope),
        };
        let Some(envelope) = envelope else {
            inner.counters.filtered.inc();
            match (&inner.durable, message) {
                (Some(durable), Some(record)) => {
                    let write = EventWrite {
                        message: Some(record),
                        owner,
                        ..Default::default()
                    };
                    durable.store.record_event(write, move |_, r| {
                        let _ = done.send(r.map(drop));
                    });
                }
                _ => {
                    let _ = done.send(Ok(()));
                }
            }
            return recorded;
        };
        let mut envelope = Arc::new(envelope);
        // Through the thread's scratch buffer: growing a fresh one copies a
        // 1 KB message four times over (see `json_exact`).
        let json = match to_vec_exact(envelope.as_ref()) {
            Ok(v) => Bytes::from(v),
            Err(e) => {
                tracing::error!(error = %e, "could not serialize an envelope");
                let _ = done.send(Err(StoreError::Corrupt(e)));
                return recorded;
            }
        };
        let outboxes = self.outboxes();
        let deliveries: Vec<NewDelivery> = outboxes
            .iter()
            .flat_map(|o| o.plan(&envelope, &json))
            .collect();
        let Some(durable) = &inner.durable else {
            self.release_numbered(envelope, deliveries);
            let _ = done.send(Ok(()));
            return recorded;
        };
        // One write keeps one set of bounds: the smallest backlog any
        // outbox asks, and the largest dead-letter capacity.
        let limits = outboxes
            .iter()
            .map(|o| o.limits())
            .reduce(|a, b| OutboxLimits {
                backlog: a.backlog.min(b.backlog),
                dlq_capacity: a.dlq_capacity.max(b.dlq_capacity),
            })
            .unwrap_or(OutboxLimits {
                backlog: usize::MAX,
                dlq_capacity: 0,
            });
        let logged = durable.log.enabled().then(|| json.clone());
        let released = durable.released.clone();
        let mut write = EventWrite {
            seq: 0,
            timestamp: envelope.timestamp,
            message,
            logged,
            log_limit: durable.log.max_count,
            deliveries,
            backlog_limit: limits.backlog,
            dlq_capacity: limits.dlq_capacity,
            owner,
            refused: false,
        };
        // Encoded before the lock: under it, only numbering and queueing.
        // A record sharing the envelope's data borrows it for its encoding
        // (and what its chat reads of it), then hands it back.
        let lent =
            shares_data && lend_data(&mut envelope, write.message.as_mut().map(|r| &mut r.body));
        let prepared = match durable.store.prepare_event(write) {
            Ok(mut p) => {
                if lent {
                    give_back(&mut envelope, p.take_message_body());
                }
                p
            }
            Err((mut write, e)) => {
                if lent {
                    give_back(
                        &mut envelope,
                        write.message.as_mut().map(|r| std::mem::take(&mut r.body)),
                    );
                }
                tracing::error!(error = %e, "could not encode an event; it is released unrecorded");
                self.release_numbered(envelope, write.deliveries);
                let _ = done.send(Err(e));
                return recorded;
            }
        };
        let mut next = inner.next_seq.lock().unwrap_or_else(|p| p.into_inner());
        let seq = *next;
        *next += 1;
        set_seq(&mut envelope, seq);
        prepared.record(seq, move |write, result| {
            if write.refused {
                // Its session was deleted: nothing was written, and
                // nothing is released to anyone.
                tracing::debug!(seq, "an event of a deleted session was refused");
                let _ = done.send(Ok(()));
                return;
            }
            let evicted = match &result {
                Ok(evicted) => evicted.clone(),
                Err(e) => {
                    tracing::error!(seq, error = %e, "could not record an event; it is released unrecorded");
                    Vec::new()
                }
            };
            // The release task ends only with the gateway; then a commit
            // has no audience left, and its deliveries resume on restart.
            let _ = released.send(Release {
                envelope,
                deliveries: write.deliveries,
                evicted,
            });
            let _ = done.send(result.map(drop));
        });
        drop(next);
        recorded
    }

    /// Numbers and releases an envelope that is not recorded (a bus
    /// without a store, or an envelope that could not be encoded).
    fn release_numbered(&self, mut envelope: Arc<Envelope>, deliveries: Vec<NewDelivery>) {
        let seq = {
            let mut next = self
                .inner
                .next_seq
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            *next += 1;
            *next - 1
        };
        set_seq(&mut envelope, seq);
        self.release(Release {
            envelope,
            deliveries,
            evicted: Vec::new(),
        });
    }

    /// Hands recorded envelopes to their audiences, in sequence order, until
    /// the gateway stops (what was already recorded goes out first).
    async fn release_loop(
        self,
        mut rx: mpsc::UnboundedReceiver<Release>,
        cancel: CancellationToken,
    ) {
        loop {
            let next = tokio::select! {
                biased;
                r = rx.recv() => r,
                _ = cancel.cancelled() => None,
            };
            match next {
                Some(r) => self.release(r),
                None => break,
            }
        }
    }

    fn release(&self, r: Release) {
        let inner = &self.inner;
        if !r.deliveries.is_empty() || !r.evicted.is_empty() {
            let outboxes = self.outboxes();
            let (mut deliveries, mut evicted) = (r.deliveries, r.evicted);
            for outbox in outboxes.iter() {
                let (mine, rest): (Vec<_>, Vec<_>) = deliveries
                    .into_iter()
                    .partition(|d| outbox.claims(&d.delivery.url));
                let (gone, kept): (Vec<_>, Vec<_>) =
                    evicted.into_iter().partition(|k| outbox.claims(&k.url));
                (deliveries, evicted) = (rest, kept);
                if !mine.is_empty() || !gone.is_empty() {
                    outbox.release(r.envelope.seq, mine, gone);
                }
            }
        }
        for s in inner
            .subscribers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            s.accept(&r.envelope);
        }
        // No stream receiver is not an error: the event simply has no live audience.
        let _ = inner.tx.send(r.envelope);
    }

    /// The bus's counters (registered by the metrics module).
    pub fn counters(&self) -> &EventCounters {
        &self.inner.counters
    }

    /// A new stream receiver that sees every envelope released from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Envelope>> {
        self.inner.tx.subscribe()
    }

    /// The highest sequence number given so far (0: none).
    pub fn last_seq(&self) -> u64 {
        *self
            .inner
            .next_seq
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            - 1
    }

    /// Where a stream client that last saw `after` resumes: subscribes it
    /// first, so nothing released from now on is missed, then says which
    /// recorded envelopes it missed (read with [`Resume::next_page`]).
    pub fn resume(&self, after: u64) -> Resume {
        let live = self.subscribe();
        let store = self.inner.durable.as_ref().filter(|d| d.log.enabled());
        log::resume(store.map(|d| d.store.clone()), after, self.last_seq(), live)
    }
}

/// Moves the envelope's data into `body` when the envelope is not shared
/// yet (whether it did); a shared envelope's data is copied, and stays.
fn lend_data(envelope: &mut Arc<Envelope>, body: Option<&mut serde_json::Value>) -> bool {
    let Some(body) = body else {
        return false;
    };
    match Arc::get_mut(envelope) {
        Some(e) => {
            *body = std::mem::take(&mut e.data);
            true
        }
        None => {
            *body = envelope.data.clone();
            false
        }
    }
}

/// Puts data lent by [`lend_data`] back into the envelope.
fn give_back(envelope: &mut Arc<Envelope>, data: Option<serde_json::Value>) {
    if let (Some(e), Some(data)) = (Arc::get_mut(envelope), data) {
        e.data = data;
    }
}

/// Sets the sequence number of an envelope nobody else holds yet.
fn set_seq(envelope: &mut Arc<Envelope>, seq: u64) {
    match Arc::get_mut(envelope) {
        Some(e) => e.seq = seq,
        None => {
            let mut e = envelope.as_ref().clone();
            e.seq = seq;
            *envelope = Arc::new(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::domain::event::EventName;

    #[tokio::test]
    async fn a_stream_receiver_sees_envelopes_published_after_it_subscribed() {
        let bus = EventBus::new();
        drop(bus.publish(Envelope::now(
            "s",
            EventName::Connected,
            serde_json::json!({}),
        )));
        let mut rx = bus.subscribe();
        drop(bus.publish(Envelope::now(
            "s",
            EventName::Disconnected,
            serde_json::json!({}),
        )));
        let got = rx.recv().await.unwrap();
        assert_eq!(got.event, EventName::Disconnected);
        assert_eq!(got.seq, 2, "every envelope is numbered, in publish order");
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<EventName>>);

    impl Subscriber for Recorder {
        fn accept(&self, envelope: &Arc<Envelope>) {
            self.0.lock().unwrap().push(envelope.event);
        }
    }

    #[test]
    fn a_subscriber_sees_every_envelope_in_order_even_far_beyond_the_stream_capacity() {
        let bus = EventBus::new();
        let rec = Arc::new(Recorder::default());
        bus.add_subscriber(rec.clone());
        for i in 0..(BUS_CAPACITY * 2) {
            let ev = if i % 2 == 0 {
                EventName::Receipt
            } else {
                EventName::Presence
            };
            drop(bus.publish(Envelope::now("s", ev, serde_json::json!({}))));
        }
        let got = rec.0.lock().unwrap();
        assert_eq!(got.len(), BUS_CAPACITY * 2);
        assert_eq!(got[0], EventName::Receipt);
        assert_eq!(got[1], EventName::Presence);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_durable_bus_releases_in_sequence_order_and_numbers_on_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let tasks = TaskTracker::new();
        let log = EventLogConfig::default();
        {
            let store = Store::open(dir.path()).unwrap();
            let bus = EventBus::durable(store, log.clone(), cancel.clone(), &tasks).unwrap();
            let mut rx = bus.subscribe();
            let recorded: Vec<_> = (0..50)
                .map(|n| {
                    bus.publish(Envelope::now(
                        "s",
                        EventName::Receipt,
                        serde_json::json!({ "n": n }),
                    ))
                })
                .collect();
            for r in recorded {
                r.await.unwrap().unwrap();
            }
            for n in 0..50u64 {
                let e = rx.recv().await.unwrap();
                assert_eq!((e.seq, e.data["n"].as_u64()), (n + 1, Some(n)));
            }
            cancel.cancel();
            tasks.close();
            tasks.wait().await;
        }
        let store = Store::open(dir.path()).unwrap();
        let tasks = TaskTracker::new();
        let bus = EventBus::durable(store, log, CancellationToken::new(), &tasks).unwrap();
        assert_eq!(bus.last_seq(), 50);
    }
}
