//! The one ordered path from a session's crate clients to its intake.
//!
//! Everything the session tells the gateway goes through one lane, in the
//! order it happened: the crate's events as its dispatch reads them, the
//! batches the durability hook committed (so a batch never overtakes a
//! `connected` or a `group_update` read before it), and the gateway's own
//! news (a connect attempt, a requested disconnect or logout). One task per
//! session, the pump ([`super::pump`]), empties it into the intake.
//!
//! Putting an item in never waits. The crate dispatches events on the task
//! that reads the socket, so a handler that waited for room would stop IQ
//! answers and pings with it (the crate's own channel handler is unbounded
//! for the same reason, and it queues message stanzas per chat without
//! bound too). Messages, the bulk of the traffic, reach the lane only
//! through the durability hook, which the crate's per-chat workers await: a
//! chat's next message waits until the intake has stored the last, and what
//! is not acknowledged stays the server's. The other events come at the
//! server's pace. How many items wait, across sessions, is the
//! `switchboard_whatsapp_events_queued` gauge.

use std::sync::Arc;

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::mpsc;
use whatsapp_rust::types::events::Event;

use super::session::Run;
use crate::NetworkEvent;

/// What flows through a session's lane.
pub(super) enum Item {
    /// An event of a run's crate client, with the run it came from.
    Event(Arc<Run>, Arc<Event>),
    /// News of the gateway's own, or a batch the durability hook prepared
    /// (its receipt is answered by the intake), passed on as it is.
    News(NetworkEvent),
    /// A run's crate loop returned (its device state already settled).
    Ended(Arc<Run>),
}

/// The sending side of a session's lane; clones share it.
#[derive(Clone)]
pub(super) struct Lane {
    tx: mpsc::UnboundedSender<Item>,
    queued: Gauge,
}

/// The receiving side, read by the session's pump.
pub(super) struct LaneRx {
    rx: mpsc::UnboundedReceiver<Item>,
    queued: Gauge,
}

impl Lane {
    /// A lane counting what waits in it on `queued` (shared by the backend's sessions).
    pub fn new(queued: Gauge) -> (Self, LaneRx) {
        let (tx, rx) = mpsc::unbounded_channel();
        let rx = LaneRx {
            rx,
            queued: queued.clone(),
        };
        (Self { tx, queued }, rx)
    }

    /// Puts `item` at the end of the lane; dropped when the pump is gone
    /// (the session with it).
    pub fn send(&self, item: Item) {
        // Counted first: the pump may take it out before `send` returns.
        self.queued.inc();
        if self.tx.send(item).is_err() {
            self.queued.dec();
        }
    }

    /// Puts news of the gateway's own (or a committed batch) in the lane.
    pub fn news(&self, event: NetworkEvent) {
        self.send(Item::News(event));
    }
}

impl LaneRx {
    /// The next item, waiting for one; `None` once every sender is gone.
    pub async fn recv(&mut self) -> Option<Item> {
        let item = self.rx.recv().await?;
        self.queued.dec();
        Some(item)
    }
}

impl Drop for LaneRx {
    /// What is left in a lane nobody reads any more no longer waits.
    fn drop(&mut self) {
        self.rx.close();
        while self.rx.try_recv().is_ok() {
            self.queued.dec();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_gauge_counts_what_waits_and_forgets_what_nobody_will_read() {
        let queued = Gauge::default();
        let (lane, mut rx) = Lane::new(queued.clone());
        for _ in 0..3 {
            lane.news(NetworkEvent::Connecting);
        }
        assert_eq!(queued.get(), 3);
        assert!(matches!(
            rx.recv().await,
            Some(Item::News(NetworkEvent::Connecting))
        ));
        assert_eq!(queued.get(), 2);
        drop(rx);
        assert_eq!(queued.get(), 0, "the unread are no longer counted");
        lane.news(NetworkEvent::Connecting);
        assert_eq!(queued.get(), 0, "a lane nobody reads counts nothing");
    }
}
