//! The order in which a session's envelopes leave intake. A message event
//! is published only once its record is durable, but intake does not wait
//! for that commit: it queues the record for the store's group commit,
//! parks the envelope here, and goes on with the next event, so a burst of
//! messages shares a few fsyncs instead of paying one each. Envelopes leave
//! in the order intake handled their events, whatever their kind: one that
//! needs no commit waits behind the messages before it.

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::FutureExt;

use crate::domain::event::Envelope;
use crate::events::EventBus;
use crate::store::StoreResult;

/// Most envelopes parked at once; intake reads no further event until the
/// oldest leaves, so a store that stalls holds back the network channel
/// (which pushes back on the network) instead of growing memory.
pub(super) const MAX_WAITING: usize = 1024;

/// A pending durable write.
pub(super) type Commit = Pin<Box<dyn Future<Output = StoreResult<()>> + Send>>;

/// One parked envelope and the write it waits for.
struct Waiting {
    commit: Option<Commit>,
    envelope: Envelope,
}

/// Parked envelopes, oldest first, and the bus they go to.
pub(super) struct PublishQueue {
    bus: EventBus,
    waiting: VecDeque<Waiting>,
}

impl PublishQueue {
    /// An empty queue publishing to `bus`.
    pub fn new(bus: EventBus) -> Self {
        Self {
            bus,
            waiting: VecDeque::new(),
        }
    }

    /// Whether nothing is parked.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Whether intake may handle another event.
    pub fn has_room(&self) -> bool {
        self.waiting.len() < MAX_WAITING
    }

    /// Publishes `envelope` once `commit` (if any) is durable and everything
    /// queued before it has left; at once when both hold already.
    pub fn push(&mut self, envelope: Envelope, commit: Option<Commit>) {
        if commit.is_none() && self.waiting.is_empty() {
            self.bus.publish(envelope);
        } else {
            self.waiting.push_back(Waiting { commit, envelope });
        }
    }

    /// Waits for the oldest parked envelope's commit, then publishes it and
    /// every envelope behind it that is ready too. Cancel-safe: an envelope
    /// leaves the queue only in the poll that publishes it.
    pub async fn flush(&mut self) {
        let Some(front) = self.waiting.front_mut() else {
            return;
        };
        if let Some(commit) = front.commit.as_mut() {
            let result = commit.await;
            front.commit = None;
            log_failure(&front.envelope, result);
        }
        self.publish_ready();
    }

    /// Publishes from the front while commits are done (or absent).
    fn publish_ready(&mut self) {
        while let Some(front) = self.waiting.front_mut() {
            if let Some(commit) = front.commit.as_mut() {
                match commit.now_or_never() {
                    Some(result) => log_failure(&front.envelope, result),
                    None => return,
                }
            }
            if let Some(w) = self.waiting.pop_front() {
                self.bus.publish(w.envelope);
            }
        }
    }

    /// Publishes everything parked, waiting for each commit in turn (a stop).
    pub async fn drain(&mut self) {
        while !self.waiting.is_empty() {
            self.flush().await;
        }
    }
}

/// A record that could not be stored is logged; its event is still published
/// (intake has always done so: the webhook is the consumer's copy).
fn log_failure(envelope: &Envelope, result: StoreResult<()>) {
    if let Err(e) = result {
        tracing::error!(session = %envelope.session_id, error = %e, "could not store an inbound message");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::oneshot;

    use super::*;
    use crate::domain::event::EventName;
    use crate::store::StoreError;

    fn env(n: i64) -> Envelope {
        Envelope::now("s", EventName::Message, serde_json::json!({ "n": n }))
    }

    fn commit(rx: oneshot::Receiver<StoreResult<()>>) -> Option<Commit> {
        Some(Box::pin(async move { rx.await.unwrap() }))
    }

    fn published(rx: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<Envelope>>) -> Vec<i64> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.data["n"].as_i64().unwrap())
            .collect()
    }

    #[tokio::test]
    async fn envelopes_leave_in_order_and_only_once_their_commit_is_done() {
        let bus = EventBus::new();
        let mut seen = bus.subscribe();
        let mut q = PublishQueue::new(bus);
        let (done1, rx1) = oneshot::channel();
        let (done3, rx3) = oneshot::channel();
        q.push(env(1), commit(rx1));
        q.push(env(2), None);
        q.push(env(3), commit(rx3));
        done3.send(Ok(())).unwrap();
        let waiting = tokio::time::timeout(Duration::from_millis(20), q.flush()).await;
        assert!(waiting.is_err(), "nothing leaves before the oldest commit");
        assert_eq!(published(&mut seen), Vec::<i64>::new());
        // A failed commit is logged; its event still goes out, and the
        // ready ones behind it follow in the same flush.
        let refused = std::io::Error::other("disk full");
        done1
            .send(Err(StoreError::Corrupt(serde_json::Error::io(refused))))
            .unwrap();
        q.flush().await;
        assert_eq!(published(&mut seen), [1, 2, 3]);
        assert!(q.is_empty());
        q.push(env(4), None);
        assert_eq!(
            published(&mut seen),
            [4],
            "an empty queue publishes at once"
        );
    }

    #[tokio::test]
    async fn drain_waits_for_every_commit() {
        let bus = EventBus::new();
        let mut seen = bus.subscribe();
        let mut q = PublishQueue::new(bus);
        let mut senders = Vec::new();
        for n in 0..5 {
            let (tx, rx) = oneshot::channel();
            q.push(env(n), commit(rx));
            senders.push(tx);
        }
        assert!(q.has_room());
        let answer = tokio::spawn(async move {
            for tx in senders {
                tokio::time::sleep(Duration::from_millis(2)).await;
                tx.send(Ok(())).unwrap();
            }
        });
        q.drain().await;
        answer.await.unwrap();
        assert_eq!(published(&mut seen), [0, 1, 2, 3, 4]);
    }
}
