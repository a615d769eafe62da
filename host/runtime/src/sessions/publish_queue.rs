//! The order in which a session's envelopes leave intake. A message event
//! is published only once its record is durable, but intake does not wait
//! for that commit: it queues the record for the store's group commit,
//! parks the envelope here, and goes on with the next event, so a burst of
//! messages shares a few fsyncs instead of paying one each. Envelopes leave
//! in the order intake handled their events, whatever their kind: one that
//! needs no commit waits behind the messages before it.
//!
//! A batch the network has not acknowledged yet ends in a receipt mark: when
//! the mark reaches the front, everything of the batch is stored and
//! published, and the receipt is answered (failed early when a record of the
//! batch could not be stored).

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::FutureExt;

use super::dedup::MessageKey;
use crate::domain::event::Envelope;
use crate::events::EventBus;
use crate::network::StoredReceipt;
use crate::store::StoreResult;

/// Most envelopes parked at once; intake reads no further event until the
/// oldest leaves, so a store that stalls holds back the network channel
/// (which pushes back on the network) instead of growing memory.
pub(super) const MAX_WAITING: usize = 1024;

/// A pending durable write.
pub(super) type Commit = Pin<Box<dyn Future<Output = StoreResult<()>> + Send>>;

/// What a parked message's commit is for, beyond its envelope.
#[derive(Default)]
pub(super) struct Owed {
    /// The receipt of the unacknowledged batch it belongs to.
    pub receipt: Option<StoredReceipt>,
    /// Its dedup key, forgotten if the commit fails.
    pub key: Option<MessageKey>,
}

/// One parked entry: an envelope and the write it waits for, or the mark
/// that answers a batch's receipt.
enum Waiting {
    Envelope {
        commit: Option<Commit>,
        envelope: Envelope,
        owed: Owed,
    },
    Mark(StoredReceipt),
}

/// Parked envelopes, oldest first, and the bus they go to.
pub(super) struct PublishQueue {
    bus: EventBus,
    waiting: VecDeque<Waiting>,
    /// Keys of messages whose records could not be stored, for intake to
    /// forget from its dedup window.
    failed: Vec<MessageKey>,
}

impl PublishQueue {
    /// An empty queue publishing to `bus`.
    pub fn new(bus: EventBus) -> Self {
        Self {
            bus,
            waiting: VecDeque::new(),
            failed: Vec::new(),
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
        self.push_owed(envelope, commit, Owed::default());
    }

    /// [`Self::push`] for a message record: a failed commit fails `owed`'s
    /// receipt and hands its key back through [`Self::take_failed`].
    pub fn push_owed(&mut self, envelope: Envelope, commit: Option<Commit>, owed: Owed) {
        if commit.is_none() && self.waiting.is_empty() {
            self.bus.publish(envelope);
        } else {
            self.waiting.push_back(Waiting::Envelope {
                commit,
                envelope,
                owed,
            });
        }
    }

    /// Answers `receipt` once everything queued before now has left.
    pub fn push_mark(&mut self, receipt: StoredReceipt) {
        if self.waiting.is_empty() {
            receipt.stored();
        } else {
            self.waiting.push_back(Waiting::Mark(receipt));
        }
    }

    /// The dedup keys of messages whose records could not be stored since
    /// the last call.
    pub fn take_failed(&mut self) -> Vec<MessageKey> {
        std::mem::take(&mut self.failed)
    }

    /// Waits for the oldest parked envelope's commit, then publishes it and
    /// every envelope behind it that is ready too. Cancel-safe: an envelope
    /// leaves the queue only in the poll that publishes it.
    pub async fn flush(&mut self) {
        let Some(front) = self.waiting.front_mut() else {
            return;
        };
        if let Waiting::Envelope {
            commit: commit @ Some(_),
            envelope,
            owed,
        } = front
            && let Some(pending) = commit.as_mut()
        {
            let result = pending.await;
            *commit = None;
            self.failed.extend(settle(envelope, owed, result));
        }
        self.publish_ready();
    }

    /// Publishes from the front while commits are done (or absent).
    fn publish_ready(&mut self) {
        while let Some(front) = self.waiting.front_mut() {
            if let Waiting::Envelope {
                commit: commit @ Some(_),
                envelope,
                owed,
            } = front
                && let Some(pending) = commit.as_mut()
            {
                match pending.now_or_never() {
                    Some(result) => {
                        *commit = None;
                        self.failed.extend(settle(envelope, owed, result));
                    }
                    None => return,
                }
            }
            match self.waiting.pop_front() {
                Some(Waiting::Envelope { envelope, .. }) => self.bus.publish(envelope),
                Some(Waiting::Mark(receipt)) => receipt.stored(),
                None => {}
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

/// A record that could not be stored is logged and fails its batch's
/// receipt; its event is still published (intake has always done so: the
/// webhook is the consumer's copy). Returns the key to forget.
fn settle(envelope: &Envelope, owed: &mut Owed, result: StoreResult<()>) -> Option<MessageKey> {
    let e = result.err()?;
    tracing::error!(session = %envelope.session_id, error = %e, "could not store an inbound message");
    if let Some(receipt) = &owed.receipt {
        receipt.fail(format!("could not store an inbound message: {e}"));
    }
    owed.key.take()
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

    #[tokio::test]
    async fn a_batch_receipt_is_answered_once_its_envelopes_are_published() {
        let bus = EventBus::new();
        let mut seen = bus.subscribe();
        let mut q = PublishQueue::new(bus);
        let (receipt, mut answer) = StoredReceipt::new();
        let (done, rx) = oneshot::channel();
        let owed = Owed {
            receipt: Some(receipt.clone()),
            key: None,
        };
        q.push_owed(env(1), commit(rx), owed);
        q.push(env(2), None);
        q.push_mark(receipt);
        assert!(answer.try_recv().is_err(), "not before the commit");
        done.send(Ok(())).unwrap();
        q.flush().await;
        assert_eq!(published(&mut seen), [1, 2]);
        assert_eq!(answer.try_recv().unwrap(), Ok(()));
        assert!(q.is_empty());

        let (receipt, mut answer) = StoredReceipt::new();
        q.push_mark(receipt);
        assert_eq!(
            answer.try_recv().unwrap(),
            Ok(()),
            "an empty queue answers at once"
        );
    }

    #[tokio::test]
    async fn a_record_that_cannot_be_stored_fails_its_batch_and_is_forgotten() {
        let bus = EventBus::new();
        let mut q = PublishQueue::new(bus);
        let (receipt, mut answer) = StoredReceipt::new();
        let (done, rx) = oneshot::channel();
        let key = MessageKey::of(&crate::network::InboundMessage {
            chat: "c".into(),
            message_id: "m1".into(),
            ..Default::default()
        });
        let owed = Owed {
            receipt: Some(receipt.clone()),
            key: Some(key.clone()),
        };
        q.push_owed(env(1), commit(rx), owed);
        q.push_mark(receipt);
        let refused = std::io::Error::other("disk full");
        done.send(Err(StoreError::Corrupt(serde_json::Error::io(refused))))
            .unwrap();
        q.drain().await;
        let failed = answer.try_recv().unwrap().unwrap_err();
        assert!(failed.contains("could not store"), "{failed}");
        assert_eq!(q.take_failed(), [key]);
        assert!(q.take_failed().is_empty());
    }
}
