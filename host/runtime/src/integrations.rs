//! Integration plugins' deliveries: one more destination of the durable
//! outbox. Every event an integration binding takes is recorded with the
//! event (one row per binding, destination `plugin:<binding id>`), then
//! handed to the plugin one at a time per binding, on the blocking pool
//! (the plugin may wait on HTTP): first attempts in sequence order, as
//! webhooks get theirs. A success removes the row; a failure is recorded
//! (attempts, next attempt, error) and retried after a doubling pause while
//! the later events go on, and once the attempts run out the row moves to
//! its session's dead-letter queue in the same transaction. A restart
//! resumes every row the outbox still holds. Each binding has its own
//! worker, so a plugin waiting on a hung endpoint holds back only its own
//! events.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::domain::event::Envelope;
use crate::domain::hooks::Integrations;
use crate::domain::time::unix_now_ms;
use crate::domain::webhook::PendingDelivery;
use crate::store::{NewDelivery, OutboxKey, Store, StoreResult};
use bytes::Bytes;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::counters::IntegrationCounters;
use crate::events::{Outbox, OutboxLimits};

/// The outbox destination of every integration delivery starts with this.
pub const URL_SCHEME: &str = "plugin:";

/// How integration deliveries are retried.
#[derive(Debug, Clone)]
pub struct IntegrationConfig {
    /// The pause after the first failed attempt; it doubles after each.
    pub retry_base: Duration,
    /// The longest pause between attempts.
    pub retry_max: Duration,
    /// Attempts before a delivery is dead-lettered.
    pub max_attempts: u32,
    /// Longest the dispatcher waits for one call before counting it as
    /// failed and going on. A plugin's CPU deadline cannot interrupt a wait
    /// inside a host call, so this bound is kept here too.
    pub call_limit: Duration,
}

impl Default for IntegrationConfig {
    fn default() -> Self {
        Self {
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(300),
            max_attempts: 8,
            // The default plugin deadline (30 s) and 15 s of room.
            call_limit: Duration::from_secs(45),
        }
    }
}

impl IntegrationConfig {
    /// The pause after `failures` failed attempts.
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(20));
        self.retry_base.saturating_mul(factor).min(self.retry_max)
    }
}

/// One delivery owed to a binding.
#[derive(Debug, Clone)]
struct Owed {
    key: OutboxKey,
    delivery: PendingDelivery,
    payload: Bytes,
}

/// What a binding's worker does next.
enum Next {
    /// Hand this delivery over.
    Due(Box<Owed>),
    /// Nothing is due before this time (Unix ms).
    At(i64),
}

/// A binding's deliveries, in sequence order, and whether its worker runs.
#[derive(Debug, Default)]
struct Lane {
    owed: BTreeMap<(u64, String), Owed>,
    working: bool,
}

struct Inner {
    hooks: Arc<dyn Integrations>,
    store: Store,
    limits: OutboxLimits,
    config: IntegrationConfig,
    lanes: Mutex<HashMap<String, Lane>>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    counters: IntegrationCounters,
}

/// The integration deliveries; cheap to clone.
#[derive(Clone)]
pub struct IntegrationOutbox {
    inner: Arc<Inner>,
}

impl IntegrationOutbox {
    /// The dispatcher; what the outbox still holds is handed over once
    /// [`IntegrationOutbox::resume`] is called (after everything a plugin
    /// may call is wired in).
    pub fn start(
        hooks: Arc<dyn Integrations>,
        store: Store,
        limits: OutboxLimits,
        config: IntegrationConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> StoreResult<Self> {
        let this = Self {
            inner: Arc::new(Inner {
                hooks,
                store,
                limits,
                config,
                lanes: Mutex::new(HashMap::new()),
                cancel,
                tasks,
                counters: IntegrationCounters::default(),
            }),
        };
        Ok(this)
    }

    /// The delivery counters, for the metrics registry.
    pub fn counters(&self) -> &IntegrationCounters {
        &self.inner.counters
    }

    /// Hands over the deliveries the outbox still holds.
    pub fn resume(&self) -> StoreResult<()> {
        let (rows, _) = self
            .inner
            .store
            .outbox_of(|url| url.starts_with(URL_SCHEME))?;
        if !rows.is_empty() {
            tracing::info!(deliveries = rows.len(), "resuming integration deliveries");
            self.inner.counters.resumed.inc_by(rows.len() as u64);
        }
        for row in rows {
            self.owe(Owed {
                key: row.key,
                delivery: row.delivery,
                payload: row.payload,
            });
        }
        Ok(())
    }

    fn lanes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lane>> {
        self.inner.lanes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a delivery and starts its binding's worker if it is idle.
    fn owe(&self, owed: Owed) {
        let binding = owed.key.url[URL_SCHEME.len()..].to_owned();
        let start = {
            let mut lanes = self.lanes();
            let lane = lanes.entry(binding.clone()).or_default();
            lane.owed
                .insert((owed.key.seq, owed.key.delivery_id.clone()), owed);
            !std::mem::replace(&mut lane.working, true)
        };
        if start {
            let this = self.clone();
            self.inner
                .tasks
                .spawn(async move { this.work(binding).await });
        }
    }

    /// The first delivery of `binding` that is due, or when the earliest
    /// one will be; `None` when nothing is owed (and the worker stops).
    fn next(&self, binding: &str) -> Option<Next> {
        let mut lanes = self.lanes();
        let lane = lanes.get_mut(binding)?;
        if lane.owed.is_empty() {
            lanes.remove(binding);
            return None;
        }
        let now = unix_now_ms();
        if let Some(due) = lane
            .owed
            .values()
            .find(|o| o.delivery.next_attempt_at <= now)
        {
            return Some(Next::Due(Box::new(due.clone())));
        }
        let at = lane
            .owed
            .values()
            .map(|o| o.delivery.next_attempt_at)
            .min()
            .unwrap_or(now);
        Some(Next::At(at))
    }

    fn done(&self, binding: &str, key: &OutboxKey) {
        if let Some(lane) = self.lanes().get_mut(binding) {
            lane.owed.remove(&(key.seq, key.delivery_id.clone()));
        }
    }

    /// Hands `binding` its deliveries one at a time until none is left.
    async fn work(self, binding: String) {
        self.drain(&binding).await;
        // Idle: what was handled leaves the outbox now, not with the next
        // event write (a crash before it would hand those events again).
        if let Err(e) = self.inner.store.flush_outbox_removals().await {
            tracing::warn!(error = %e, "could not remove handled integration deliveries from the outbox");
        }
    }

    /// Hands over what `binding` is owed until nothing is left.
    async fn drain(&self, binding: &str) {
        let binding = binding.to_owned();
        while let Some(next) = self.next(&binding) {
            if self.inner.cancel.is_cancelled() {
                return;
            }
            let mut owed = match next {
                Next::Due(owed) => *owed,
                Next::At(at) => {
                    // Nothing due yet: wait for the earliest retry, or for
                    // a new event (released into the lane meanwhile).
                    let wait = (at - unix_now_ms()).clamp(1, 250);
                    if !self.pause(Duration::from_millis(wait as u64)).await {
                        return;
                    }
                    continue;
                }
            };
            // A stop does not wait on a plugin waiting on HTTP: the
            // delivery stays in the outbox and is handed over again after
            // the restart (at least once).
            let outcome = tokio::select! {
                outcome = self.attempt(&binding, &owed) => outcome,
                _ = self.inner.cancel.cancelled() => return,
            };
            match outcome {
                Ok(()) => {
                    self.inner.counters.handled.inc();
                    self.inner.store.remove_outbox_later(vec![owed.key.clone()]);
                    self.done(&binding, &owed.key);
                }
                Err(why) => {
                    self.inner.counters.failed.inc();
                    owed.delivery.attempts += 1;
                    let attempts = owed.delivery.attempts;
                    tracing::warn!(binding = %binding, delivery = %owed.key.delivery_id, attempts, error = %why, "an integration plugin failed an event");
                    if attempts >= self.inner.config.max_attempts {
                        let dead = self
                            .inner
                            .store
                            .outbox_dead_letter(
                                owed.key.clone(),
                                attempts,
                                why,
                                self.inner.limits.dlq_capacity,
                            )
                            .await;
                        match dead {
                            Ok(_) => {
                                self.inner.counters.dead_lettered.inc();
                            }
                            Err(e) => {
                                tracing::error!(error = %e, "could not dead-letter an integration delivery");
                            }
                        }
                        self.done(&binding, &owed.key);
                        continue;
                    }
                    let pause = self.inner.config.backoff(attempts);
                    let next_at = unix_now_ms() + pause.as_millis() as i64;
                    let kept = self
                        .inner
                        .store
                        .outbox_reschedule(owed.key.clone(), attempts, next_at, why.clone())
                        .await;
                    match kept {
                        // Gone: its session was deleted meanwhile.
                        Ok(false) => self.done(&binding, &owed.key),
                        Ok(true) | Err(_) => {
                            if let Some(lane) = self.lanes().get_mut(&binding)
                                && let Some(o) = lane
                                    .owed
                                    .get_mut(&(owed.key.seq, owed.key.delivery_id.clone()))
                            {
                                o.delivery.attempts = attempts;
                                o.delivery.next_attempt_at = next_at;
                                o.delivery.last_error = Some(why);
                            }
                        }
                    }
                }
            }
        }
    }

    /// One attempt, on a thread of its own: not the blocking pool, whose
    /// threads the runtime waits for when it stops, because a plugin that
    /// waits forever inside a host call cannot be interrupted. Past
    /// `call_limit` the attempt counts as failed and the worker goes on.
    async fn attempt(&self, binding: &str, owed: &Owed) -> Result<(), String> {
        let envelope: Envelope = serde_json::from_slice(&owed.payload)
            .map_err(|e| format!("the recorded event is not readable: {e}"))?;
        let (hooks, binding, delivery) = (
            self.inner.hooks.clone(),
            binding.to_owned(),
            owed.key.delivery_id.clone(),
        );
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("integration-call".into())
            .spawn(move || {
                let _ = tx.send(hooks.handle(&binding, &delivery, &envelope));
            })
            .map_err(|e| format!("could not start the call: {e}"))?;
        let limit = self.inner.config.call_limit;
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err("the call panicked".into()),
            Err(_) => Err(format!(
                "the plugin did not finish within {} ms (it waits inside a host call)",
                limit.as_millis()
            )),
        }
    }

    /// Sleeps `d`; `false` when the gateway stops first.
    async fn pause(&self, d: Duration) -> bool {
        tokio::select! {
            _ = tokio::time::sleep(d) => true,
            _ = self.inner.cancel.cancelled() => false,
        }
    }

    /// Deliveries still owed, over every binding.
    pub fn pending(&self) -> usize {
        self.lanes().values().map(|l| l.owed.len()).sum()
    }
}

impl Outbox for IntegrationOutbox {
    fn claims(&self, url: &str) -> bool {
        url.starts_with(URL_SCHEME)
    }

    fn plan(&self, envelope: &Arc<Envelope>, json: &Bytes) -> Vec<NewDelivery> {
        self.inner
            .hooks
            .takers(&envelope.session_id, envelope.event.as_str())
            .into_iter()
            .map(|binding| NewDelivery {
                delivery: PendingDelivery::to_destination(
                    uuid::Uuid::new_v4().to_string(),
                    &envelope.session_id,
                    format!("{URL_SCHEME}{binding}"),
                    envelope.event.as_str(),
                    unix_now_ms(),
                ),
                payload: json.clone(),
            })
            .collect()
    }

    fn limits(&self) -> OutboxLimits {
        self.inner.limits
    }

    fn forget_session(&self, session_id: &str) {
        // An attempt already under way ends as it ends; nothing of the
        // session is attempted after it.
        for lane in self.lanes().values_mut() {
            lane.owed.retain(|_, o| o.delivery.session_id != session_id);
        }
    }

    fn release(&self, seq: u64, deliveries: Vec<NewDelivery>, evicted: Vec<OutboxKey>) {
        if !evicted.is_empty() {
            tracing::warn!(
                deliveries = evicted.len(),
                "an integration's backlog is full: its oldest deliveries were dead-lettered (backlog_full)"
            );
            self.inner
                .counters
                .backlog_full
                .inc_by(evicted.len() as u64);
            let mut lanes = self.lanes();
            for key in &evicted {
                if let Some(lane) = lanes.get_mut(&key.url[URL_SCHEME.len()..]) {
                    lane.owed.remove(&(key.seq, key.delivery_id.clone()));
                }
            }
        }
        for d in deliveries {
            self.owe(Owed {
                key: OutboxKey {
                    session_id: d.delivery.session_id.clone(),
                    url: d.delivery.url.clone(),
                    seq,
                    delivery_id: d.delivery.delivery_id.clone(),
                },
                delivery: d.delivery,
                payload: d.payload,
            });
        }
    }
}
