//! The event bus: every envelope the gateway emits is published here once and
//! fanned out to subscribers (webhook delivery, the live event stream, plugin
//! filters). Publishing never blocks; a subscriber that falls behind by more
//! than the channel capacity loses the oldest envelopes and is told how many.

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::domain::event::Envelope;

/// How many envelopes a slow subscriber may lag behind before it loses some.
pub const BUS_CAPACITY: usize = 8192;

/// A cheap-to-clone handle on the event bus.
#[derive(Clone, Debug)]
pub struct EventBus {
    tx: broadcast::Sender<Arc<Envelope>>,
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
        Self { tx }
    }

    /// Publishes one envelope to every current subscriber.
    pub fn publish(&self, envelope: Envelope) {
        tracing::debug!(session = %envelope.session_id, event = %envelope.event, "event");
        // No subscriber is not an error: the event simply has no audience.
        let _ = self.tx.send(Arc::new(envelope));
    }

    /// A new subscription that sees every envelope published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Envelope>> {
        self.tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::EventName;

    #[tokio::test]
    async fn a_subscriber_sees_envelopes_published_after_it_subscribed() {
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
}
