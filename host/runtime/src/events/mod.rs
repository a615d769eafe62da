//! The event bus: every envelope the gateway emits is published here once and
//! fanned out.
//!
//! Two kinds of audience:
//! - [`Subscriber`]s (webhook delivery, later plugin filters) are called
//!   synchronously for every envelope, in publish order, and must only enqueue:
//!   they never miss an event. An [`EventFilter`] (the plugin event filters)
//!   sees each envelope first and may change or drop it.
//! - Stream receivers ([`EventBus::subscribe`], the live event stream) read a
//!   broadcast channel; one that falls more than [`BUS_CAPACITY`] envelopes
//!   behind loses the oldest and is told how many.

use std::sync::{Arc, RwLock};

use tokio::sync::broadcast;

use crate::counters::EventCounters;
use crate::domain::event::Envelope;

/// How many envelopes a slow stream receiver may lag behind before it loses some.
pub const BUS_CAPACITY: usize = 8192;

/// A synchronous audience of every envelope. `accept` runs on the publishing
/// task: it must not block or await; it hands the envelope to its own queue.
pub trait Subscriber: Send + Sync + 'static {
    /// Takes one envelope.
    fn accept(&self, envelope: &Arc<Envelope>);
}

pub use crate::domain::hooks::EventFilter;

/// A cheap-to-clone handle on the event bus.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Arc<Envelope>>,
    subscribers: Arc<RwLock<Vec<Arc<dyn Subscriber>>>>,
    filter: Arc<RwLock<Option<Arc<dyn EventFilter>>>>,
    counters: EventCounters,
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
    /// An empty bus.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(BUS_CAPACITY);
        Self {
            tx,
            subscribers: Arc::new(RwLock::new(Vec::new())),
            filter: Arc::new(RwLock::new(None)),
            counters: EventCounters::default(),
        }
    }

    /// Sets the filter every envelope passes before fan-out.
    pub fn set_filter(&self, filter: Arc<dyn EventFilter>) {
        *self.filter.write().unwrap_or_else(|p| p.into_inner()) = Some(filter);
    }

    /// Adds a synchronous subscriber; it sees every envelope published from now on.
    pub fn add_subscriber(&self, subscriber: Arc<dyn Subscriber>) {
        self.subscribers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(subscriber);
    }

    /// Publishes one envelope to every subscriber and stream receiver.
    pub fn publish(&self, envelope: Envelope) {
        tracing::debug!(session = %envelope.session_id, event = %envelope.event, "event");
        self.counters.received.inc();
        let filter = self
            .filter
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let envelope = match filter {
            Some(f) => match f.filter(envelope) {
                Some(e) => e,
                None => {
                    self.counters.filtered.inc();
                    return;
                }
            },
            None => envelope,
        };
        let envelope = Arc::new(envelope);
        for s in self
            .subscribers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            s.accept(&envelope);
        }
        // No stream receiver is not an error: the event simply has no live audience.
        let _ = self.tx.send(envelope);
    }

    /// The bus's counters (registered by the metrics module).
    pub fn counters(&self) -> &EventCounters {
        &self.counters
    }

    /// A new stream receiver that sees every envelope published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Envelope>> {
        self.tx.subscribe()
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
        bus.publish(Envelope::now(
            "s",
            EventName::Connected,
            serde_json::json!({}),
        ));
        let mut rx = bus.subscribe();
        bus.publish(Envelope::now(
            "s",
            EventName::Disconnected,
            serde_json::json!({}),
        ));
        let got = rx.recv().await.unwrap();
        assert_eq!(got.event, EventName::Disconnected);
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
            bus.publish(Envelope::now("s", ev, serde_json::json!({})));
        }
        let got = rec.0.lock().unwrap();
        assert_eq!(got.len(), BUS_CAPACITY * 2);
        assert_eq!(got[0], EventName::Receipt);
        assert_eq!(got[1], EventName::Presence);
    }
}
