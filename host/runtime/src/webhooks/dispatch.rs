//! Delivery: one bounded queue and one worker per URL, so a slow or dead
//! receiver only slows itself. Each attempt is signed afresh; failures are
//! retried on a timer (never blocking the queue), then dead-lettered; the URL's
//! circuit decides what is attempted at all. On shutdown, whatever is queued or
//! waiting for a retry is dead-lettered rather than lost.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use reqwest::header::CONTENT_TYPE;
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::circuit::{Admit, Circuit, Health, SuspendPolicy, Transition};
use super::config::WebhookConfig;
use super::model::DlqEntry;
use super::signing::{
    DELIVERY_ID_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, VERSION_HEADER, sign_v2,
};
use super::target::check_destination;
use crate::counters::WebhookCounters;
use crate::domain::time::unix_now;
use crate::store::Store;

/// One event on its way to one URL.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Stable across retries and replays.
    pub delivery_id: String,
    /// The event's session.
    pub session_id: String,
    /// The webhook, when the delivery came from one (replays may outlive it).
    pub webhook_id: Option<String>,
    /// The destination.
    pub url: String,
    /// The signing secret, if any.
    pub secret: Option<String>,
    /// The event name.
    pub event: String,
    /// The serialized envelope, sent verbatim.
    pub payload: Bytes,
    /// Attempts made so far.
    pub attempts: u32,
    /// This delivery is the single probe of a suspended URL.
    pub probe: bool,
    /// The session's generation when the event happened; a delivery of an
    /// older generation belongs to a deleted session and is dropped.
    pub generation: u64,
    /// Replayed from the DLQ: it goes to its stored URL even if the webhook is gone.
    pub replayed: bool,
}

struct Shared {
    config: WebhookConfig,
    policy: SuspendPolicy,
    store: Store,
    client: reqwest::Client,
    circuits: Mutex<HashMap<String, Circuit>>,
    queues: Mutex<HashMap<String, mpsc::Sender<Delivery>>>,
    generations: Mutex<HashMap<String, u64>>,
    retired_webhooks: Mutex<HashSet<String>>,
    tasks: TaskTracker,
    cancel: CancellationToken,
    counters: WebhookCounters,
}

/// The delivery engine; cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    shared: Arc<Shared>,
}

struct Failure {
    message: String,
    retryable: bool,
}

impl Dispatcher {
    /// An engine using `client`; its workers run on `tasks` until `cancel`.
    pub fn new(
        config: WebhookConfig,
        store: Store,
        client: reqwest::Client,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> Self {
        let policy = SuspendPolicy {
            threshold: config.suspend_threshold,
            base: config.suspend_base,
            max: config.suspend_max,
        };
        Self {
            shared: Arc::new(Shared {
                config,
                policy,
                store,
                client,
                circuits: Mutex::new(HashMap::new()),
                queues: Mutex::new(HashMap::new()),
                generations: Mutex::new(HashMap::new()),
                retired_webhooks: Mutex::new(HashSet::new()),
                tasks,
                cancel,
                counters: WebhookCounters::default(),
            }),
        }
    }

    fn circuits(&self) -> MutexGuard<'_, HashMap<String, Circuit>> {
        self.shared
            .circuits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The current generation of a session (bumped when it is deleted).
    pub fn generation(&self, session_id: &str) -> u64 {
        let map = self
            .shared
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.get(session_id).copied().unwrap_or(0)
    }

    /// Drops every queued or pending delivery of a deleted session.
    pub fn retire_session(&self, session_id: &str) {
        let mut map = self
            .shared
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *map.entry(session_id.to_owned()).or_insert(0) += 1;
    }

    /// Drops every queued or pending delivery of a deleted webhook (replays excepted).
    pub fn retire_webhook(&self, webhook_id: &str) {
        let mut set = self
            .shared
            .retired_webhooks
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        set.insert(webhook_id.to_owned());
    }

    /// Whether a delivery belongs to a deleted session or webhook.
    fn is_stale(&self, d: &Delivery) -> bool {
        if d.generation != self.generation(&d.session_id) {
            return true;
        }
        if d.replayed {
            return false;
        }
        let set = self
            .shared
            .retired_webhooks
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        d.webhook_id.as_ref().is_some_and(|id| set.contains(id))
    }

    /// Hands a fresh event to its URL, unless the URL is suspended (then it is
    /// counted as skipped and dropped, as the spec says).
    pub fn submit(&self, mut delivery: Delivery) {
        match self
            .circuits()
            .entry(delivery.url.clone())
            .or_default()
            .admit(Instant::now())
        {
            Admit::Skip => {
                self.shared.counters.skipped.inc();
                return;
            }
            Admit::Probe => delivery.probe = true,
            Admit::Deliver => {}
        }
        self.enqueue(delivery);
    }

    /// Hands a delivery to its URL's queue without asking the circuit (replays
    /// and retries, which were admitted before).
    pub fn enqueue(&self, delivery: Delivery) {
        let sender = {
            let mut queues = self.shared.queues.lock().unwrap_or_else(|p| p.into_inner());
            queues
                .entry(delivery.url.clone())
                .or_insert_with(|| self.spawn_worker(&delivery.url))
                .clone()
        };
        if let Err(e) = sender.try_send(delivery) {
            let (reason, d) = match e {
                mpsc::error::TrySendError::Full(d) => ("the delivery queue of this URL is full", d),
                mpsc::error::TrySendError::Closed(d) => ("the gateway is stopping", d),
            };
            self.dead_letter(d, reason.to_owned());
        }
    }

    fn spawn_worker(&self, url: &str) -> mpsc::Sender<Delivery> {
        let (tx, mut rx) = mpsc::channel::<Delivery>(self.shared.config.queue_capacity.max(1));
        let this = self.clone();
        let url = url.to_owned();
        self.shared.tasks.spawn(async move {
            let permits = Arc::new(Semaphore::new(this.shared.config.concurrency_per_url.max(1)));
            loop {
                let delivery = tokio::select! {
                    _ = this.shared.cancel.cancelled() => break,
                    d = rx.recv() => match d { Some(d) => d, None => break },
                };
                let permit = tokio::select! {
                    _ = this.shared.cancel.cancelled() => { this.dead_letter(delivery, "the gateway stopped before delivery".into()); break; }
                    p = permits.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
                };
                let this2 = this.clone();
                this.shared.tasks.spawn(async move {
                    this2.attempt(delivery).await;
                    drop(permit);
                });
            }
            rx.close();
            while let Some(d) = rx.recv().await {
                this.dead_letter(d, "the gateway stopped before delivery".into());
            }
            tracing::debug!(%url, "webhook worker stopped");
        });
        tx
    }

    async fn attempt(&self, mut d: Delivery) {
        if self.is_stale(&d) {
            tracing::debug!(session = %d.session_id, url = %d.url, "delivery dropped: its session or webhook was deleted");
            return;
        }
        d.attempts += 1;
        let outcome = tokio::select! {
            // Stopping must not wait for a slow receiver: the delivery goes to
            // the DLQ (receivers deduplicate on the delivery id if it did arrive).
            _ = self.shared.cancel.cancelled() => {
                self.dead_letter(d, "the gateway stopped during the delivery attempt".into());
                return;
            }
            outcome = self.send(&d) => outcome,
        };
        let now = Instant::now();
        match outcome {
            Ok(()) => {
                self.shared.counters.delivered.inc();
                let t = self
                    .circuits()
                    .entry(d.url.clone())
                    .or_default()
                    .on_success();
                if t == Some(Transition::Resumed) {
                    tracing::info!(url = %d.url, "webhook_resumed: probe delivered, delivery resumed");
                }
            }
            Err(f) => {
                self.shared.counters.failed.inc();
                let policy = self.shared.policy;
                let t = self
                    .circuits()
                    .entry(d.url.clone())
                    .or_default()
                    .on_failure(&f.message, d.probe, now, &policy);
                if let Some(Transition::Suspended(for_)) = t {
                    tracing::warn!(url = %d.url, suspended_secs = for_.as_secs_f64(), error = %f.message, "webhook_suspended: deliveries to this URL are suspended");
                }
                tracing::debug!(url = %d.url, attempt = d.attempts, error = %f.message, "webhook delivery failed");
                if d.probe || !f.retryable || d.attempts >= self.shared.config.max_attempts {
                    self.dead_letter(d, f.message);
                } else {
                    self.schedule_retry(d, f.message);
                }
            }
        }
    }

    fn schedule_retry(&self, d: Delivery, last_error: String) {
        self.shared.counters.retries.inc();
        let delay = self.shared.config.retry_delay(d.attempts + 1);
        let this = self.clone();
        self.shared.tasks.spawn(async move {
            tokio::select! {
                _ = this.shared.cancel.cancelled() => {
                    this.dead_letter(d, format!("{last_error}; the gateway stopped before the retry"));
                }
                _ = tokio::time::sleep(delay) => {
                    if this.is_open(&d.url) {
                        this.dead_letter(d, format!("{last_error}; not retried while the URL is suspended"));
                    } else {
                        this.enqueue(d);
                    }
                }
            }
        });
    }

    async fn send(&self, d: &Delivery) -> Result<(), Failure> {
        let url = reqwest::Url::parse(&d.url).map_err(|e| Failure {
            message: format!("invalid URL: {e}"),
            retryable: false,
        })?;
        check_destination(&url, self.shared.config.allow_private)
            .await
            .map_err(|m| Failure {
                message: format!("refused: the URL {m}"),
                retryable: true,
            })?;
        let mut req = self
            .shared
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(EVENT_HEADER, &d.event)
            .header(DELIVERY_ID_HEADER, &d.delivery_id);
        if let Some(secret) = &d.secret {
            let ts = unix_now();
            req = req
                .header(TIMESTAMP_HEADER, ts.to_string())
                .header(SIGNATURE_HEADER, sign_v2(secret.as_bytes(), ts, &d.payload))
                .header(VERSION_HEADER, "v2");
        }
        match req.body(d.payload.clone()).send().await {
            Ok(resp) if resp.status().is_success() => Ok(()),
            Ok(resp) => {
                let status = resp.status().as_u16();
                let client_error = (400..500).contains(&status);
                let retryable = !client_error
                    || self.shared.config.retry_on_4xx
                    || status == 408
                    || status == 429;
                Err(Failure {
                    message: format!("HTTP {status}"),
                    retryable,
                })
            }
            Err(e) => Err(Failure {
                message: transport_error(&e, self.shared.config.timeout),
                retryable: true,
            }),
        }
    }

    /// Moves a delivery to the session's dead-letter queue.
    pub fn dead_letter(&self, d: Delivery, last_error: String) {
        if self.is_stale(&d) {
            return;
        }
        let entry = DlqEntry {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: d.session_id,
            webhook_id: d.webhook_id,
            webhook_url: d.url,
            event: d.event,
            payload: String::from_utf8_lossy(&d.payload).into_owned(),
            last_error,
            attempts: d.attempts,
            failed_at: unix_now(),
            secret: d.secret,
            delivery_id: d.delivery_id,
        };
        self.shared.counters.dead_lettered.inc();
        tracing::warn!(session = %entry.session_id, url = %entry.webhook_url, event = %entry.event, attempts = entry.attempts, error = %entry.last_error, "webhook delivery dead-lettered");
        if let Err(e) = self
            .shared
            .store
            .push_dlq(&entry, self.shared.config.dlq_capacity)
        {
            tracing::error!(error = %e, delivery_id = %entry.delivery_id, "could not store a dead-lettered delivery");
        }
    }

    /// Whether a URL is suspended or probing.
    pub fn is_open(&self, url: &str) -> bool {
        self.circuits().get(url).is_some_and(Circuit::is_open)
    }

    /// How many URLs are suspended or probing.
    pub fn suspended_urls(&self) -> usize {
        self.circuits().values().filter(|c| c.is_open()).count()
    }

    /// How many per-URL workers have stopped while the engine still runs
    /// (a worker only stops on shutdown, unless it failed).
    pub fn stopped_workers(&self) -> usize {
        if self.shared.cancel.is_cancelled() {
            return 0;
        }
        let queues = self.shared.queues.lock().unwrap_or_else(|p| p.into_inner());
        queues.values().filter(|q| q.is_closed()).count()
    }

    /// The delivery counters.
    pub fn counters(&self) -> &WebhookCounters {
        &self.shared.counters
    }

    /// Clears a URL's suspension at once.
    pub fn reset(&self, url: &str) {
        if let Some(c) = self.circuits().get_mut(url) {
            let was_open = c.is_open();
            c.reset();
            if was_open {
                tracing::info!(%url, "webhook_resumed: suspension cleared by re-enable");
            }
        }
    }

    /// The delivery health of a URL.
    pub fn health(&self, url: &str) -> Health {
        let now = Instant::now();
        self.circuits()
            .get(url)
            .map_or_else(|| Circuit::default().health(now), |c| c.health(now))
    }
}

/// The innermost cause of a transport error, worded for an operator.
fn transport_error(e: &reqwest::Error, timeout: std::time::Duration) -> String {
    if e.is_timeout() {
        return format!("timed out after {:.3}s", timeout.as_secs_f64());
    }
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    if e.is_connect() {
        format!("connection failed: {cause}")
    } else {
        format!("request failed: {cause}")
    }
}
