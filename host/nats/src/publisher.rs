//! Events out: the broker is one more destination of the durable outbox.
//!
//! For every envelope the bus records, [`Outbox::plan`] owes one delivery to
//! the events stream (its row holds no copy of the envelope: it points at
//! the event log's). Once the event is durable the delivery joins the
//! [`Lane`], in sequence order; at start the lane takes over every row the
//! outbox still holds for NATS. The publisher sends up to `publish_window`
//! events at a time, in order, each with `Nats-Msg-Id` set to its delivery
//! id (stable across restarts), and waits for their acknowledgements: an
//! acknowledged event's row is removed; a failed one goes back to the front
//! of the lane and the publisher pauses (doubling up to `retry_max`)
//! before it tries again, so events drain in order once NATS is back.
//!
//! Per-session order holds except in one window: when an event's publish
//! fails while a later one in the same window succeeds (a connection lost
//! between the two), the earlier one lands after the later one on retry.
//! The window is kept narrow: after a failure, and whenever the link is
//! down, the publisher sends one event at a time until NATS acknowledges
//! one, so an outage is met with single probes rather than full windows
//! buffered for the reconnect.
//! A crash repeats at most the window in flight, and JetStream's duplicate
//! window stores each repeat once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesOrdered;
use switchboard_domain::event::Envelope;
use switchboard_domain::time::unix_now_ms;
use switchboard_domain::webhook::PendingDelivery;
use switchboard_runtime::events::{Outbox, OutboxLimits};
use switchboard_runtime::store::{NewDelivery, OutboxKey, StoreResult};

use crate::Nats;
use crate::config::NatsConfig;

/// The outbox destination of every NATS delivery starts with this.
pub const URL_SCHEME: &str = "nats:";

/// How long delivered rows wait for an event write to take their removal
/// along before they are committed alone (as the webhook dispatcher does).
const REMOVAL_GRACE: Duration = Duration::from_millis(20);

/// Header naming the event's gateway-wide sequence number (the event
/// stream's `id:`), so a consumer can line the two up.
pub const SEQ_HEADER: &str = "Switchboard-Seq";
/// Header naming the session.
pub const SESSION_HEADER: &str = "Switchboard-Session";
/// Header naming the event.
pub const EVENT_HEADER: &str = "Switchboard-Event";

/// One event waiting for the stream.
#[derive(Debug, Clone)]
struct Pending {
    key: OutboxKey,
    session_id: String,
    event: String,
    payload: Bytes,
    created_ms: i64,
}

/// The events owed to the stream, in sequence order.
#[derive(Debug, Default)]
pub struct Lane {
    ready: BTreeMap<(u64, String), Pending>,
    /// Delivery id → when it was recorded, for those being published.
    in_flight: HashMap<String, i64>,
    /// Deliveries dead-lettered (backlog full) while being published: if
    /// their publish fails they are not tried again.
    evicted: HashSet<String>,
}

impl Lane {
    fn pending(&self) -> usize {
        self.ready.len() + self.in_flight.len()
    }

    fn oldest_ms(&self) -> Option<i64> {
        self.ready
            .values()
            .map(|p| p.created_ms)
            .chain(self.in_flight.values().copied())
            .min()
    }

    fn push(&mut self, p: Pending) {
        self.ready.insert((p.key.seq, p.key.delivery_id.clone()), p);
    }
}

impl Nats {
    fn destination(&self) -> String {
        format!("{URL_SCHEME}{}", self.inner.config.events_stream)
    }

    /// Takes over the deliveries to NATS that the outbox still holds.
    pub(crate) fn resume(&self) -> StoreResult<()> {
        let (rows, _) = self
            .inner
            .store
            .outbox_of(|url| url.starts_with(URL_SCHEME))?;
        if !rows.is_empty() {
            tracing::info!(
                events = rows.len(),
                "resuming the events the outbox still owes NATS"
            );
        }
        let mut lane = self.lane();
        for row in rows {
            lane.push(Pending {
                session_id: row.delivery.session_id,
                event: row.delivery.event,
                created_ms: row.delivery.created_at,
                payload: row.payload,
                key: row.key,
            });
        }
        self.gauge(&lane);
        Ok(())
    }

    fn lane(&self) -> std::sync::MutexGuard<'_, Lane> {
        self.inner.lane.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn gauge(&self, lane: &Lane) {
        let c = &self.inner.counters;
        c.pending.set(lane.pending() as i64);
        let lag = lane
            .oldest_ms()
            .map_or(0.0, |t| (unix_now_ms() - t).max(0) as f64 / 1000.0);
        c.lag_seconds.set(lag);
    }

    /// Publishes what the lane holds, in order, until the gateway stops.
    pub(crate) async fn publish_loop(self) {
        let cancel = self.inner.cancel.clone();
        let config = &self.inner.config;
        let mut failures = 0u32;
        loop {
            if cancel.is_cancelled() {
                // What was acknowledged leaves the outbox now, not with a
                // republish after the restart.
                if let Err(e) = self.inner.store.flush_outbox_removals().await {
                    tracing::warn!(error = %e, "could not remove published events from the outbox");
                }
                break;
            }
            if !self.inner.events_ready.load(Ordering::SeqCst) {
                if self.connected() {
                    self.setup().await;
                }
                if !self.inner.events_ready.load(Ordering::SeqCst) {
                    self.pause(Duration::from_millis(250)).await;
                    continue;
                }
            }
            // After a failure, or while the link is down, one event goes
            // alone until NATS acknowledges it: a full window sent into a
            // link that is failing is where a later event can land before
            // an earlier one (see the module comment).
            let window = if failures > 0 || !self.connected() {
                1
            } else {
                config.publish_window.max(1)
            };
            let batch = self.take(window);
            if batch.is_empty() {
                // Idle: let the removals go with an event write, or alone.
                tokio::select! {
                    _ = self.inner.wake.notified() => {}
                    _ = tokio::time::sleep(REMOVAL_GRACE) => {
                        if let Err(e) = self.inner.store.flush_outbox_removals().await {
                            tracing::warn!(error = %e, "could not remove published events from the outbox");
                        }
                        tokio::select! {
                            _ = self.inner.wake.notified() => {}
                            _ = cancel.cancelled() => {}
                        }
                    }
                    _ = cancel.cancelled() => {}
                }
                continue;
            }
            if self.publish(batch).await {
                failures = 0;
            } else {
                failures += 1;
                self.pause(NatsConfig::backoff(
                    config.retry_base,
                    config.retry_max,
                    failures,
                ))
                .await;
            }
        }
    }

    /// The next `n` events, moved in flight.
    fn take(&self, n: usize) -> Vec<Pending> {
        let mut lane = self.lane();
        let mut out = Vec::with_capacity(n.min(lane.ready.len()));
        while out.len() < n {
            let Some((_, p)) = lane.ready.pop_first() else {
                break;
            };
            lane.in_flight
                .insert(p.key.delivery_id.clone(), p.created_ms);
            out.push(p);
        }
        out
    }

    /// Publishes `batch` in order and waits for every acknowledgement;
    /// `false` when any failed (those are back in the lane).
    async fn publish(&self, batch: Vec<Pending>) -> bool {
        let js = &self.inner.js;
        let counters = &self.inner.counters;
        let mut acks = FuturesOrdered::new();
        let mut unsent = Vec::new();
        let mut batch = batch.into_iter();
        for p in batch.by_ref() {
            let mut headers = HeaderMap::new();
            headers.insert(SEQ_HEADER, p.key.seq.to_string().as_str());
            headers.insert(SESSION_HEADER, p.session_id.as_str());
            headers.insert(EVENT_HEADER, p.event.as_str());
            let message = PublishMessage::build()
                .payload(p.payload.clone())
                .headers(headers)
                .message_id(&p.key.delivery_id);
            let subject = self.inner.subjects.event(&p.session_id, &p.event);
            counters.published.inc();
            match js.send_publish(subject, message).await {
                Ok(ack) => acks.push_back(async move { (p, ack.await) }),
                Err(e) => {
                    // Not even queued: the rest of the window waits behind
                    // it, so it cannot land before it.
                    counters.failed.inc();
                    tracing::warn!(error = %e, session = %p.session_id, seq = p.key.seq, "publishing an event to NATS failed; retrying in order");
                    self.inner
                        .link
                        .set_error(format!("publishing an event failed: {e}"));
                    unsent.push(p);
                    unsent.extend(batch.by_ref());
                    break;
                }
            }
        }
        let mut delivered = Vec::new();
        let mut failed = Vec::new();
        let mut refused = Vec::new();
        let mut stream_gone = false;
        while let Some((p, result)) = acks.next().await {
            match result {
                // Larger than the server takes: no retry can succeed, and
                // retrying would hold every later event back.
                Err(e) if e.kind() == PublishErrorKind::MaxPayloadExceeded => {
                    counters.failed.inc();
                    tracing::error!(session = %p.session_id, seq = p.key.seq, "an event is larger than NATS accepts; it is dead-lettered");
                    refused.push((p, e.to_string()));
                }
                Ok(ack) => {
                    counters.acked.inc();
                    if ack.duplicate {
                        counters.duplicates.inc();
                    }
                    delivered.push(p);
                }
                Err(e) => {
                    counters.failed.inc();
                    stream_gone |= e.kind() == PublishErrorKind::StreamNotFound;
                    if failed.is_empty() {
                        tracing::warn!(error = %e, session = %p.session_id, seq = p.key.seq, "publishing an event to NATS failed; retrying in order");
                        self.inner
                            .link
                            .set_error(format!("publishing an event failed: {e}"));
                    }
                    failed.push(p);
                }
            }
        }
        if stream_gone {
            // The stream was deleted (or NATS lost a memory stream): set it up again.
            self.inner.events_ready.store(false, Ordering::SeqCst);
        }
        failed.extend(unsent);
        let ok = failed.is_empty();
        if ok && !delivered.is_empty() {
            self.inner.link.clear_error();
        }
        for (p, error) in &refused {
            let dead = self
                .inner
                .store
                .outbox_dead_letter(
                    p.key.clone(),
                    1,
                    format!("NATS refused the event: {error}"),
                    self.inner.limits.dlq_capacity,
                )
                .await;
            if let Err(e) = dead {
                tracing::error!(error = %e, "could not dead-letter an event NATS refused");
            }
        }
        let keys: Vec<OutboxKey> = {
            let mut lane = self.lane();
            for p in delivered.iter().chain(failed.iter()) {
                lane.in_flight.remove(&p.key.delivery_id);
            }
            for (p, _) in &refused {
                lane.in_flight.remove(&p.key.delivery_id);
            }
            for p in &delivered {
                lane.evicted.remove(&p.key.delivery_id);
            }
            for p in failed {
                // Dead-lettered meanwhile: owed nothing more.
                if !lane.evicted.remove(&p.key.delivery_id) {
                    lane.push(p);
                }
            }
            self.gauge(&lane);
            delivered.into_iter().map(|p| p.key).collect()
        };
        self.inner.store.remove_outbox_later(keys);
        ok
    }
}

impl Outbox for Nats {
    fn claims(&self, url: &str) -> bool {
        url.starts_with(URL_SCHEME)
    }

    fn plan(&self, envelope: &Arc<Envelope>, json: &Bytes) -> Vec<NewDelivery> {
        vec![NewDelivery {
            delivery: PendingDelivery::to_destination(
                uuid::Uuid::new_v4().to_string(),
                &envelope.session_id,
                self.destination(),
                envelope.event.as_str(),
                unix_now_ms(),
            ),
            payload: json.clone(),
        }]
    }

    fn limits(&self) -> OutboxLimits {
        self.inner.limits
    }

    fn release(&self, seq: u64, deliveries: Vec<NewDelivery>, evicted: Vec<OutboxKey>) {
        let mut lane = self.lane();
        if !evicted.is_empty() {
            tracing::warn!(
                events = evicted.len(),
                "the outbox's backlog to NATS is full: the oldest events were dead-lettered (backlog_full)"
            );
            self.inner
                .counters
                .backlog_full
                .inc_by(evicted.len() as u64);
            for key in &evicted {
                lane.ready.remove(&(key.seq, key.delivery_id.clone()));
                if lane.in_flight.contains_key(&key.delivery_id) {
                    lane.evicted.insert(key.delivery_id.clone());
                }
            }
        }
        for d in deliveries {
            lane.push(Pending {
                key: OutboxKey {
                    session_id: d.delivery.session_id.clone(),
                    url: d.delivery.url.clone(),
                    seq,
                    delivery_id: d.delivery.delivery_id.clone(),
                },
                session_id: d.delivery.session_id,
                event: d.delivery.event,
                payload: d.payload,
                created_ms: d.delivery.created_at,
            });
        }
        self.gauge(&lane);
        drop(lane);
        self.inner.wake.notify_one();
    }
}
