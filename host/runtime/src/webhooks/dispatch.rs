//! Delivery: one lane and one worker per session and URL, so a slow or dead
//! receiver only slows itself, and one session's failures to a URL suspend
//! only that session's deliveries to it (a tenant that registers another's
//! URL with a bad secret suspends nobody but itself). A lane exists while it
//! has deliveries, and its worker ends when it is empty; a circuit exists
//! for a registered webhook's URL or a pending delivery, and goes with them. Every delivery is in the store's outbox before it gets here
//! (see the event bus); the lanes mirror it in memory: deliveries ready to
//! go (in event order), waiting for a retry, or in flight. Each attempt is
//! signed afresh; a success removes the row (successes are removed in
//! batches), a failure is rescheduled or, once its attempts are used,
//! moved to the dead-letter queue in the same transaction; the URL's
//! circuit decides what is attempted at all. Stopping (or a crash) leaves
//! every pending delivery in the outbox; the next start resumes each with
//! its delivery id and the attempts it has left.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::circuit::{Admit, Circuit, Health, SuspendPolicy, Transition};
use super::client::{DeliveryClient, SendError};
use super::config::WebhookConfig;
use super::model::PendingDelivery;
use super::signing::{DELIVERY_ID_HEADER, EVENT_HEADER, signature_headers};
use super::target::check_literal;
use crate::counters::WebhookCounters;
use crate::domain::time::unix_now_ms;
use crate::store::{OutboxKey, Store};

/// Most delivered rows handed to the store at a time.
const REMOVE_BATCH: usize = 1024;

/// How long delivered rows wait for an event write to take their removal
/// along before they are committed alone: short enough that an idle
/// gateway's outbox empties at once, long enough that under load no
/// success costs a commit of its own.
const REMOVAL_GRACE: std::time::Duration = std::time::Duration::from_millis(20);

/// One event on its way to one URL.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Where it sits in the outbox.
    pub key: OutboxKey,
    /// What is stored of it.
    pub d: PendingDelivery,
    /// The serialized envelope, sent verbatim.
    pub payload: Bytes,
    /// The incarnation of the session the event happened in (`None`: a
    /// session no longer live); a delivery of another incarnation than the
    /// live one belongs to a deleted session and is dropped.
    pub incarnation: Option<u64>,
}

/// One session's deliveries to one URL: (session id, URL).
pub type LaneKey = (String, String);

fn lane_of(key: &OutboxKey) -> LaneKey {
    (key.session_id.clone(), key.url.clone())
}

/// What is live, for telling a delivery still owed from one of a deleted
/// session or webhook: bounded by the sessions and webhooks there are.
#[derive(Default)]
struct Owners {
    /// Live sessions by id, with their incarnation.
    sessions: HashMap<String, u64>,
    /// Registered webhooks by id.
    webhooks: HashSet<String>,
}

/// What a URL has pending, for metrics and diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Backlog {
    /// Deliveries ready, waiting for a retry or in flight.
    pub pending: u64,
    /// Seconds since the oldest of them was recorded.
    pub oldest_seconds: Option<f64>,
}

/// The in-memory mirror of one URL's outbox rows.
#[derive(Default)]
struct Lane {
    /// Ready to go, in event order.
    ready: BTreeMap<(u64, String), Delivery>,
    /// Delivery id → when it was recorded, for those waiting for a retry.
    waiting: HashMap<String, i64>,
    /// Delivery id → when it was recorded, for those in flight.
    in_flight: HashMap<String, i64>,
    /// Wakes the lane's worker.
    notify: Arc<Notify>,
    /// Whether its worker runs.
    worker: bool,
}

/// What a lane's worker does next.
// Returned and matched at once, never stored: boxing the delivery would cost
// an allocation per delivery to save a move.
#[allow(clippy::large_enum_variant)]
enum Next {
    Go(Delivery),
    Wait,
    Retired,
}

/// Whether a session has a webhook registered for a URL.
pub type Registered = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// The signing secret of a session's webhook, by its id (`None`: unsigned,
/// or no such webhook).
pub type SecretOf = Arc<dyn Fn(&str, &str) -> Option<String> + Send + Sync>;

impl Lane {
    /// Nothing ready, waiting or in flight.
    fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.waiting.is_empty() && self.in_flight.is_empty()
    }

    fn backlog(&self, now_ms: i64) -> Backlog {
        let pending = self.ready.len() + self.waiting.len() + self.in_flight.len();
        let oldest = self
            .ready
            .values()
            .map(|d| d.d.created_at)
            .chain(self.waiting.values().copied())
            .chain(self.in_flight.values().copied())
            .min();
        Backlog {
            pending: pending as u64,
            oldest_seconds: oldest.map(|t| (now_ms - t).max(0) as f64 / 1000.0),
        }
    }
}

struct Shared {
    config: WebhookConfig,
    policy: SuspendPolicy,
    store: Store,
    client: DeliveryClient,
    circuits: Mutex<HashMap<LaneKey, Circuit>>,
    lanes: Mutex<HashMap<LaneKey, Lane>>,
    owners: Mutex<Owners>,
    /// Delivered rows waiting to be removed.
    delivered: mpsc::UnboundedSender<OutboxKey>,
    tasks: TaskTracker,
    cancel: CancellationToken,
    counters: WebhookCounters,
}

/// The delivery engine; cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    shared: Arc<Shared>,
    registered: Arc<std::sync::OnceLock<Registered>>,
    secrets: Arc<std::sync::OnceLock<SecretOf>>,
}

struct Failure {
    message: String,
    retryable: bool,
    /// Refused before connecting: the destination is an internal address.
    blocked: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Dispatcher {
    /// An engine using `client`; its workers run on `tasks` until `cancel`.
    pub fn new(
        config: WebhookConfig,
        store: Store,
        client: DeliveryClient,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        let policy = SuspendPolicy {
            threshold: config.suspend_threshold,
            base: config.suspend_base,
            max: config.suspend_max,
        };
        let (delivered, rx) = mpsc::unbounded_channel();
        let this = Self {
            shared: Arc::new(Shared {
                config,
                policy,
                store,
                client,
                circuits: Mutex::new(HashMap::new()),
                lanes: Mutex::new(HashMap::new()),
                owners: Mutex::new(Owners::default()),
                delivered,
                tasks: tasks.clone(),
                cancel,
                counters: WebhookCounters::default(),
            }),
            registered: Arc::new(std::sync::OnceLock::new()),
            secrets: Arc::new(std::sync::OnceLock::new()),
        };
        let remover = this.shared.store.clone();
        tasks.spawn(remove_delivered(remover, rx, this.shared.cancel.clone()));
        this
    }

    fn circuits(&self) -> MutexGuard<'_, HashMap<LaneKey, Circuit>> {
        lock(&self.shared.circuits)
    }

    /// Records that a session is live under `incarnation` (created, or
    /// found at start).
    pub fn session_live(&self, session_id: &str, incarnation: u64) {
        lock(&self.shared.owners)
            .sessions
            .insert(session_id.to_owned(), incarnation);
    }

    /// Records that a webhook is registered.
    pub fn webhook_live(&self, webhook_id: &str) {
        lock(&self.shared.owners)
            .webhooks
            .insert(webhook_id.to_owned());
    }

    /// The live incarnation of a session, if it is live.
    pub fn incarnation(&self, session_id: &str) -> Option<u64> {
        lock(&self.shared.owners).sessions.get(session_id).copied()
    }

    /// Drops every queued or pending delivery of a deleted session (its
    /// outbox rows went with the session), its webhooks and its circuits.
    pub fn retire_session(&self, session_id: &str, webhooks: &[String]) {
        {
            let mut owners = lock(&self.shared.owners);
            owners.sessions.remove(session_id);
            for id in webhooks {
                owners.webhooks.remove(id);
            }
        }
        self.circuits().retain(|(s, _), _| s != session_id);
        let mut lanes = lock(&self.shared.lanes);
        for ((s, _), lane) in lanes.iter_mut() {
            if s == session_id {
                lane.ready.clear();
                lane.notify.notify_one();
            }
        }
    }

    /// Drops every queued or pending delivery of a deleted webhook (replays
    /// excepted; the caller removed its outbox rows); `url_still_used`
    /// says whether another webhook of the session has its URL (else the
    /// circuit goes too, once nothing is pending for it).
    pub fn retire_webhook(&self, session_id: &str, webhook_id: &str, url: Option<&str>) {
        lock(&self.shared.owners).webhooks.remove(webhook_id);
        let mut lanes = lock(&self.shared.lanes);
        for lane in lanes.values_mut() {
            lane.ready
                .retain(|_, d| d.d.replayed || d.d.webhook_id.as_deref() != Some(webhook_id));
        }
        if let Some(url) = url {
            let key = (session_id.to_owned(), url.to_owned());
            let pending = lanes.get(&key).is_some_and(|l| !l.is_empty());
            drop(lanes);
            if !pending {
                self.circuits().remove(&key);
            }
        }
    }

    /// Whether a delivery belongs to a deleted session or webhook.
    fn is_stale(&self, d: &Delivery) -> bool {
        let owners = lock(&self.shared.owners);
        if d.incarnation.is_none() || owners.sessions.get(&d.d.session_id) != d.incarnation.as_ref()
        {
            return true;
        }
        if d.d.replayed {
            return false;
        }
        d.d.webhook_id
            .as_ref()
            .is_some_and(|id| !owners.webhooks.contains(id))
    }

    /// Asks the circuit of a session's deliveries to a URL whether a fresh
    /// event is attempted: `None` when it is suspended (the event is
    /// counted as skipped and owes it nothing, as the spec says), else
    /// whether it goes as the probe.
    pub fn admit(&self, session_id: &str, url: &str) -> Option<bool> {
        match self
            .circuits()
            .entry((session_id.to_owned(), url.to_owned()))
            .or_default()
            .admit(Instant::now())
        {
            Admit::Skip => {
                self.shared.counters.skipped.inc();
                None
            }
            Admit::Probe => Some(true),
            Admit::Deliver => Some(false),
        }
    }

    /// Takes deliveries whose rows are stored: each is attempted when due.
    pub fn take(&self, deliveries: impl IntoIterator<Item = Delivery>) {
        let now = unix_now_ms();
        for delivery in deliveries {
            let due = delivery.d.next_attempt_at;
            if delivery.d.attempts > 0 && due > now {
                let wait = std::time::Duration::from_millis((due - now) as u64);
                {
                    let mut lanes = lock(&self.shared.lanes);
                    let lane = lanes.entry(lane_of(&delivery.key)).or_default();
                    lane.waiting
                        .insert(delivery.key.delivery_id.clone(), delivery.d.created_at);
                }
                self.retry_after(delivery, wait, None);
            } else {
                self.ready(delivery);
            }
        }
    }

    /// Drops deliveries the outbox moved to the dead-letter queue (a URL
    /// over its backlog limit); one in flight finishes, its row is gone.
    pub fn evicted(&self, keys: &[OutboxKey]) {
        self.shared.counters.backlog_full.inc_by(keys.len() as u64);
        let mut lanes = lock(&self.shared.lanes);
        for key in keys {
            if let Some(lane) = lanes.get_mut(&lane_of(key)) {
                lane.ready.remove(&(key.seq, key.delivery_id.clone()));
                lane.waiting.remove(&key.delivery_id);
            }
        }
    }

    /// Puts a delivery in its lane's ready set, starting the lane's worker.
    fn ready(&self, delivery: Delivery) {
        let key = lane_of(&delivery.key);
        let mut lanes = lock(&self.shared.lanes);
        let lane = lanes.entry(key.clone()).or_default();
        lane.ready.insert(
            (delivery.key.seq, delivery.key.delivery_id.clone()),
            delivery,
        );
        lane.notify.notify_one();
        if !lane.worker {
            lane.worker = true;
            let notify = lane.notify.clone();
            drop(lanes);
            self.spawn_worker(key, notify);
        }
    }

    fn spawn_worker(&self, key: LaneKey, notify: Arc<Notify>) {
        let this = self.clone();
        self.shared.tasks.spawn(async move {
            let permits = Arc::new(Semaphore::new(
                this.shared.config.concurrency_per_url.max(1),
            ));
            let mut retired = false;
            loop {
                let permit = tokio::select! {
                    _ = this.shared.cancel.cancelled() => break,
                    p = permits.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
                };
                let next = loop {
                    match this.next_ready(&key) {
                        Next::Go(d) => break Some(d),
                        // Nothing pending at all: the lane and its worker
                        // go (a later delivery makes them again).
                        Next::Retired => {
                            retired = true;
                            break None;
                        }
                        Next::Wait => {}
                    }
                    tokio::select! {
                        _ = this.shared.cancel.cancelled() => break None,
                        () = notify.notified() => {}
                    }
                };
                let Some(delivery) = next else { break };
                let this2 = this.clone();
                this.shared.tasks.spawn(async move {
                    this2.attempt(delivery).await;
                    drop(permit);
                });
            }
            // A retired lane is gone (one made since has its own worker).
            if !retired && let Some(lane) = lock(&this.shared.lanes).get_mut(&key) {
                lane.worker = false;
            }
            tracing::debug!(session = %key.0, url = %key.1, "webhook worker stopped");
        });
    }

    /// Takes the oldest ready delivery of a lane, marking it in flight; a
    /// lane with nothing ready, waiting or in flight is removed, with the
    /// circuit of a URL no webhook of the session has any more.
    fn next_ready(&self, key: &LaneKey) -> Next {
        let mut lanes = lock(&self.shared.lanes);
        let Some(lane) = lanes.get_mut(key) else {
            return Next::Retired;
        };
        if let Some((_, d)) = lane.ready.pop_first() {
            lane.in_flight
                .insert(d.key.delivery_id.clone(), d.d.created_at);
            return Next::Go(d);
        }
        if !lane.is_empty() {
            return Next::Wait;
        }
        lanes.remove(key);
        drop(lanes);
        let registered = self.registered.get().is_some_and(|r| r(&key.0, &key.1));
        if !registered {
            self.circuits().remove(key);
        }
        Next::Retired
    }

    fn settled(&self, key: &OutboxKey) {
        if let Some(lane) = lock(&self.shared.lanes).get_mut(&lane_of(key)) {
            lane.in_flight.remove(&key.delivery_id);
            if lane.is_empty() {
                lane.notify.notify_one();
            }
        }
    }

    async fn attempt(&self, mut d: Delivery) {
        if self.is_stale(&d) {
            tracing::debug!(session = %d.d.session_id, url = %d.key.url, "delivery dropped: its session or webhook was deleted");
            self.settled(&d.key);
            return;
        }
        d.d.attempts += 1;
        let outcome = tokio::select! {
            // Stopping does not wait for a slow receiver: the delivery stays
            // in the outbox and goes again, with the same id, after a restart.
            _ = self.shared.cancel.cancelled() => return,
            outcome = self.send(&d) => outcome,
        };
        let now = Instant::now();
        match outcome {
            Ok(()) => {
                self.shared.counters.delivered.inc();
                let t = self
                    .circuits()
                    .entry(lane_of(&d.key))
                    .or_default()
                    .on_success();
                if t == Some(Transition::Resumed) {
                    tracing::info!(url = %d.key.url, "webhook_resumed: probe delivered, delivery resumed");
                }
                self.settled(&d.key);
                // The remover ends only with the gateway; then the row
                // stays and the delivery repeats after a restart, same id.
                let _ = self.shared.delivered.send(d.key);
            }
            Err(f) => {
                if f.blocked {
                    self.shared.counters.blocked.inc();
                } else {
                    self.shared.counters.failed.inc();
                }
                let policy = self.shared.policy;
                let t = self
                    .circuits()
                    .entry(lane_of(&d.key))
                    .or_default()
                    .on_failure(&f.message, d.d.probe, now, &policy);
                if let Some(Transition::Suspended(for_)) = t {
                    tracing::warn!(session = %d.d.session_id, url = %d.key.url, suspended_secs = for_.as_secs_f64(), error = %f.message, "webhook_suspended: deliveries to this URL are suspended");
                }
                tracing::debug!(url = %d.key.url, attempt = d.d.attempts, error = %f.message, "webhook delivery failed");
                if d.d.probe || !f.retryable || d.d.attempts >= self.shared.config.max_attempts {
                    self.dead_letter(d, f.message).await;
                } else {
                    self.schedule_retry(d, f.message).await;
                }
            }
        }
    }

    /// Records the failed attempt, then waits for the retry (the lane counts
    /// the delivery as waiting).
    async fn schedule_retry(&self, d: Delivery, last_error: String) {
        self.shared.counters.retries.inc();
        let delay = self.shared.config.retry_delay(d.d.attempts + 1);
        let next_at = unix_now_ms() + delay.as_millis() as i64;
        {
            let mut lanes = lock(&self.shared.lanes);
            let lane = lanes.entry(lane_of(&d.key)).or_default();
            lane.in_flight.remove(&d.key.delivery_id);
            lane.waiting
                .insert(d.key.delivery_id.clone(), d.d.created_at);
        }
        let stored = self
            .shared
            .store
            .outbox_reschedule(d.key.clone(), d.d.attempts, next_at, last_error.clone())
            .await;
        match stored {
            Ok(true) => {}
            Ok(false) => {
                // Evicted or its session deleted meanwhile: nothing is owed.
                self.forget_waiting(&d.key);
                return;
            }
            Err(e) => {
                tracing::error!(error = %e, delivery_id = %d.key.delivery_id, "could not record a failed webhook attempt; retried anyway");
            }
        }
        self.retry_after(d, delay, Some(last_error));
    }

    fn forget_waiting(&self, key: &OutboxKey) -> bool {
        let mut lanes = lock(&self.shared.lanes);
        let Some(lane) = lanes.get_mut(&lane_of(key)) else {
            return false;
        };
        let was = lane.waiting.remove(&key.delivery_id).is_some();
        if lane.is_empty() {
            lane.notify.notify_one();
        }
        was
    }

    /// Moves a waiting delivery back to ready after `delay`, unless it was
    /// evicted meanwhile; a URL suspended meanwhile dead-letters it.
    fn retry_after(&self, d: Delivery, delay: std::time::Duration, last_error: Option<String>) {
        let this = self.clone();
        self.shared.tasks.spawn(async move {
            tokio::select! {
                _ = this.shared.cancel.cancelled() => {}
                _ = tokio::time::sleep(delay) => {
                    if !this.forget_waiting(&d.key) {
                        return;
                    }
                    if this.is_open(&d.key.session_id, &d.key.url) {
                        let why = last_error
                            .or_else(|| d.d.last_error.clone())
                            .unwrap_or_else(|| "failed".into());
                        this.dead_letter(d, format!("{why}; not retried while the URL is suspended")).await;
                    } else {
                        this.ready(d);
                    }
                }
            }
        });
    }

    async fn send(&self, d: &Delivery) -> Result<(), Failure> {
        let uri: http::Uri = d.key.url.parse().map_err(|e| Failure {
            message: format!("invalid URL: {e}"),
            retryable: false,
            blocked: false,
        })?;
        // A host name is checked by the client's resolver as it connects.
        check_literal(uri.host(), self.shared.config.allow_private).map_err(|m| Failure {
            message: format!("refused: the URL {m}"),
            retryable: true,
            blocked: true,
        })?;
        // The headers go in a map sized for them all (and the client's own)
        // at once: added one by one, the map grew three times per delivery.
        let mut headers = HeaderMap::with_capacity(16);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            HeaderName::from_static(EVENT_HEADER),
            header_value(&d.d.event)?,
        );
        headers.insert(
            HeaderName::from_static(DELIVERY_ID_HEADER),
            header_value(&d.key.delivery_id)?,
        );
        if let Some(secret) = self.secret_of(d) {
            let ts = crate::domain::time::unix_now();
            for (name, value) in signature_headers(
                d.d.signature_scheme,
                &secret,
                &d.key.delivery_id,
                ts,
                &d.payload,
            ) {
                headers.insert(HeaderName::from_static(name), header_value(&value)?);
            }
        }
        match self
            .shared
            .client
            .post(uri, headers, d.payload.clone())
            .await
        {
            Ok(status) if status.is_success() => Ok(()),
            Ok(status) => {
                let status = status.as_u16();
                let client_error = (400..500).contains(&status);
                let retryable = !client_error
                    || self.shared.config.retry_on_4xx
                    || status == 408
                    || status == 429;
                Err(Failure {
                    message: format!("HTTP {status}"),
                    retryable,
                    blocked: false,
                })
            }
            // Retried like any failure (a refused name may resolve outward
            // again), and counted as blocked when the resolver refused it.
            Err(e) => Err(Failure {
                blocked: matches!(e, SendError::Blocked(_)),
                message: transport_error(&e),
                retryable: true,
            }),
        }
    }

    /// Moves a delivery from the outbox to its session's dead-letter queue.
    async fn dead_letter(&self, d: Delivery, last_error: String) {
        self.settled(&d.key);
        if self.is_stale(&d) {
            return;
        }
        let moved = self
            .shared
            .store
            .outbox_dead_letter(
                d.key.clone(),
                d.d.attempts,
                last_error.clone(),
                self.shared.config.dlq_capacity,
            )
            .await;
        match moved {
            Ok(true) => {
                self.shared.counters.dead_lettered.inc();
                tracing::warn!(session = %d.d.session_id, url = %d.key.url, event = %d.d.event, attempts = d.d.attempts, error = %last_error, "webhook delivery dead-lettered");
            }
            // Evicted (already in the DLQ) or its session deleted.
            Ok(false) => {}
            Err(e) => {
                tracing::error!(error = %e, delivery_id = %d.key.delivery_id, "could not dead-letter a delivery; it stays pending and goes again after a restart");
            }
        }
    }

    /// Whether a session's deliveries to a URL are suspended or probing.
    pub fn is_open(&self, session_id: &str, url: &str) -> bool {
        self.circuits()
            .get(&(session_id.to_owned(), url.to_owned()))
            .is_some_and(Circuit::is_open)
    }

    /// How many (session, URL) pairs are suspended or probing.
    pub fn suspended_urls(&self) -> usize {
        self.circuits().values().filter(|c| c.is_open()).count()
    }

    /// How many URLs have deliveries ready but no worker while the engine
    /// still runs (a worker only stops on shutdown, unless it failed).
    pub fn stopped_workers(&self) -> usize {
        if self.shared.cancel.is_cancelled() {
            return 0;
        }
        lock(&self.shared.lanes)
            .values()
            .filter(|l| !l.worker && !l.ready.is_empty())
            .count()
    }

    /// The delivery counters.
    pub fn counters(&self) -> &WebhookCounters {
        &self.shared.counters
    }

    /// Clears the suspension of a session's deliveries to a URL at once.
    pub fn reset(&self, session_id: &str, url: &str) {
        let key = (session_id.to_owned(), url.to_owned());
        if let Some(c) = self.circuits().get_mut(&key) {
            let was_open = c.is_open();
            c.reset();
            if was_open {
                tracing::info!(session = %session_id, %url, "webhook_resumed: suspension cleared by re-enable");
            }
        }
    }

    /// The delivery health of a session's deliveries to a URL.
    pub fn health(&self, session_id: &str, url: &str) -> Health {
        let now = Instant::now();
        self.circuits()
            .get(&(session_id.to_owned(), url.to_owned()))
            .map_or_else(|| Circuit::default().health(now), |c| c.health(now))
    }

    /// What a session has pending for a URL.
    pub fn backlog(&self, session_id: &str, url: &str) -> Backlog {
        lock(&self.shared.lanes)
            .get(&(session_id.to_owned(), url.to_owned()))
            .map(|l| l.backlog(unix_now_ms()))
            .unwrap_or_default()
    }

    /// What every URL with deliveries pending has, by URL (every session's
    /// together: the gateway's metrics are the operator's, by URL).
    pub fn backlogs(&self) -> Vec<(String, Backlog)> {
        let now = unix_now_ms();
        let mut by_url: HashMap<String, Backlog> = HashMap::new();
        for ((_, url), lane) in lock(&self.shared.lanes).iter() {
            let b = lane.backlog(now);
            if b.pending == 0 {
                continue;
            }
            let sum = by_url.entry(url.clone()).or_default();
            sum.pending += b.pending;
            sum.oldest_seconds = match (sum.oldest_seconds, b.oldest_seconds) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        by_url.into_iter().collect()
    }

    /// How many lanes and circuits are held (each exists only while its
    /// webhook is registered or its deliveries are pending).
    pub fn held(&self) -> (usize, usize) {
        (lock(&self.shared.lanes).len(), self.circuits().len())
    }

    /// Sets what says whether a session has a webhook registered for a URL
    /// (the registry's cache), read when an empty lane goes.
    pub fn set_registered(&self, registered: Registered) {
        let _ = self.registered.set(registered);
    }

    /// Sets where a delivery's secret is found: pending rows hold none of
    /// their own (but a replay's, and rows written before this was so).
    pub fn set_secrets(&self, secrets: SecretOf) {
        let _ = self.secrets.set(secrets);
    }

    /// The secret a delivery signs with: its own when it holds one, else
    /// its webhook's as registered now.
    fn secret_of(&self, d: &Delivery) -> Option<String> {
        // A replay keeps what its dead-letter entry captured, even none.
        if d.d.secret.is_some() || d.d.replayed {
            return d.d.secret.clone();
        }
        let webhook = d.d.webhook_id.as_deref()?;
        self.secrets.get().and_then(|f| f(&d.d.session_id, webhook))
    }
}

/// Removes delivered rows: hands them to the store to go with the next
/// event's write (no commit of their own while events flow), then, after
/// [`REMOVAL_GRACE`], commits whatever no event write took.
async fn remove_delivered(
    store: Store,
    mut rx: mpsc::UnboundedReceiver<OutboxKey>,
    cancel: CancellationToken,
) {
    loop {
        let first = tokio::select! {
            biased;
            k = rx.recv() => k,
            // Stopping: what was delivered so far is removed once more.
            _ = cancel.cancelled() => rx.try_recv().ok(),
        };
        let Some(first) = first else { break };
        let mut keys = vec![first];
        while keys.len() < REMOVE_BATCH
            && let Ok(k) = rx.try_recv()
        {
            keys.push(k);
        }
        store.remove_outbox_later(keys);
        if !cancel.is_cancelled() {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = tokio::time::sleep(REMOVAL_GRACE) => {}
            }
        }
        if let Err(e) = store.flush_outbox_removals().await {
            tracing::error!(error = %e, "could not remove delivered webhook deliveries; they repeat after a restart");
        }
    }
}

/// A transport error worded for an operator (its innermost cause).
fn transport_error(e: &SendError) -> String {
    match e {
        SendError::Timeout(after) => format!("timed out after {:.3}s", after.as_secs_f64()),
        SendError::Connect(cause) => format!("connection failed: {cause}"),
        SendError::Request(cause) => format!("request failed: {cause}"),
        SendError::Blocked(blocked) => format!("refused: the {blocked}"),
    }
}

/// `text` as a header value; a delivery whose event name or id could not
/// be one fails for good rather than being retried.
fn header_value(text: &str) -> Result<HeaderValue, Failure> {
    HeaderValue::from_str(text).map_err(|_| Failure {
        message: format!("`{text}` cannot be sent as a header value"),
        retryable: false,
        blocked: false,
    })
}
