//! Where intake publishes, and what it waits for. The event bus records
//! every envelope (an inbound message's with its record, in one write)
//! through the store's group commit and releases them in order; intake does
//! not wait for each commit: it publishes, parks the answer here, and goes
//! on with the next event, so a burst of messages shares a few fsyncs.
//!
//! The parked answers bound how far intake runs ahead of the store, fail
//! the receipt of a batch the network has not acknowledged yet when a
//! record of it could not be stored, and answer that receipt (a mark
//! behind the batch's envelopes) once everything of the batch is durable.

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::FutureExt;

use super::dedup::MessageKey;
use crate::domain::event::Envelope;
use crate::domain::message::MessageRecord;
use crate::events::{EventBus, Recorded};
use crate::network::StoredReceipt;
use crate::store::{StoreError, StoreResult};

/// Most envelopes parked at once; intake reads no further event until the
/// oldest is recorded, so a store that stalls holds back the network channel
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
    /// The receipts of later batches that delivered the same message again
    /// while this write was pending: their copy was dropped as a duplicate,
    /// so they too were answered by this write, and fail with it.
    pub also: Vec<StoredReceipt>,
}

/// One parked entry: a write and what it owes, or the mark that answers a
/// batch's receipt.
enum Waiting {
    Commit {
        commit: Option<Commit>,
        session_id: String,
        owed: Owed,
    },
    Mark(StoredReceipt),
}

/// Parked writes, oldest first, and the bus they go through.
pub(super) struct PublishQueue {
    bus: EventBus,
    incarnation: u64,
    waiting: VecDeque<Waiting>,
    /// Keys of messages whose records could not be stored, for intake to
    /// forget from its dedup window.
    failed: Vec<MessageKey>,
}

/// A bus answer as a commit future.
fn commit(recorded: Recorded) -> Commit {
    Box::pin(async move {
        recorded.await.unwrap_or_else(|_| {
            Err(StoreError::Stopped(
                "the event bus stopped before the envelope was recorded",
            ))
        })
    })
}

impl PublishQueue {
    /// An empty queue publishing to `bus` for one incarnation of its
    /// session (the store refuses what is published for it once deleted).
    pub fn new(bus: EventBus, incarnation: u64) -> Self {
        Self {
            bus,
            incarnation,
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

    /// Publishes `envelope` and parks its recording.
    pub fn push(&mut self, envelope: Envelope, owed: Owed) {
        let session_id = envelope.session_id.clone();
        let recorded = self.bus.publish_for(envelope, self.incarnation);
        self.park(commit(recorded), session_id, owed);
    }

    /// Publishes a message's envelope with its record; a failed write
    /// fails `owed`'s receipt and hands its key back through
    /// [`Self::take_failed`].
    pub fn push_message(&mut self, envelope: Envelope, record: MessageRecord, owed: Owed) {
        let session_id = envelope.session_id.clone();
        let recorded = self
            .bus
            .publish_message_for(envelope, record, self.incarnation);
        self.park(commit(recorded), session_id, owed);
    }

    /// Parks a write (tests park their own).
    fn park(&mut self, commit: Commit, session_id: String, owed: Owed) {
        self.waiting.push_back(Waiting::Commit {
            commit: Some(commit),
            session_id,
            owed,
        });
        self.settle_ready();
    }

    /// Makes a pending write of the message `key` answer `receipt` too (a
    /// copy of it delivered again was dropped as a duplicate). Returns
    /// whether such a write was pending; one already settled was stored
    /// (a failed one's key has left the dedup window, so it is not dropped).
    pub fn also_owe(&mut self, key: &MessageKey, receipt: &StoredReceipt) -> bool {
        let pending = self.waiting.iter_mut().find_map(|w| match w {
            Waiting::Commit {
                commit: Some(_),
                owed,
                ..
            } if owed.key.as_ref() == Some(key) => Some(owed),
            _ => None,
        });
        match pending {
            Some(owed) => {
                owed.also.push(receipt.clone());
                true
            }
            None => false,
        }
    }

    /// Answers `receipt` once everything parked before now is recorded.
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

    /// Waits for the oldest parked write, then settles it and every one
    /// behind it that is done too. Cancel-safe: an entry leaves the queue
    /// only in the poll that settles it.
    pub async fn flush(&mut self) {
        let Some(front) = self.waiting.front_mut() else {
            return;
        };
        if let Waiting::Commit {
            commit: commit @ Some(_),
            session_id,
            owed,
        } = front
            && let Some(pending) = commit.as_mut()
        {
            let result = pending.await;
            *commit = None;
            self.failed.extend(settle(session_id, owed, result));
        }
        self.settle_ready();
    }

    /// Settles from the front while writes are done.
    fn settle_ready(&mut self) {
        while let Some(front) = self.waiting.front_mut() {
            if let Waiting::Commit {
                commit: commit @ Some(_),
                session_id,
                owed,
            } = front
                && let Some(pending) = commit.as_mut()
            {
                match pending.now_or_never() {
                    Some(result) => {
                        *commit = None;
                        self.failed.extend(settle(session_id, owed, result));
                    }
                    None => return,
                }
            }
            if let Some(Waiting::Mark(receipt)) = self.waiting.pop_front() {
                receipt.stored();
            }
        }
    }

    /// Waits for everything parked (a stop).
    pub async fn drain(&mut self) {
        while !self.waiting.is_empty() {
            self.flush().await;
        }
    }
}

/// A write that failed is logged and fails its batch's receipt (the
/// network redelivers); its envelope was still released, unrecorded.
/// Returns the key to forget.
fn settle(session_id: &str, owed: &mut Owed, result: StoreResult<()>) -> Option<MessageKey> {
    let e = result.err()?;
    tracing::error!(session = %session_id, error = %e, "could not store an event");
    for receipt in owed.receipt.iter().chain(&owed.also) {
        receipt.fail_with(
            e.fault(),
            format!("could not store an inbound message: {e}"),
        );
    }
    owed.key.take()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::oneshot;

    use super::*;
    use crate::domain::event::EventName;

    fn commit_of(rx: oneshot::Receiver<StoreResult<()>>) -> Commit {
        Box::pin(async move { rx.await.unwrap() })
    }

    fn refused() -> StoreResult<()> {
        Err(StoreError::Corrupt(serde_json::Error::io(
            std::io::Error::other("disk full"),
        )))
    }

    #[tokio::test]
    async fn writes_settle_in_order_and_only_once_done() {
        let mut q = PublishQueue::new(EventBus::new(), 0);
        let (done1, rx1) = oneshot::channel();
        let (done2, rx2) = oneshot::channel();
        q.park(commit_of(rx1), "s".into(), Owed::default());
        q.park(commit_of(rx2), "s".into(), Owed::default());
        done2.send(Ok(())).unwrap();
        let waiting = tokio::time::timeout(Duration::from_millis(20), q.flush()).await;
        assert!(waiting.is_err(), "nothing settles before the oldest write");
        assert!(!q.is_empty());
        done1.send(Ok(())).unwrap();
        q.flush().await;
        assert!(
            q.is_empty(),
            "the ready ones behind it settle in the same flush"
        );
        // An envelope on a bus without a store is recorded at once.
        q.push(
            Envelope::now("s", EventName::Connected, serde_json::json!({})),
            Owed::default(),
        );
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn a_batch_receipt_is_answered_once_its_writes_are_durable() {
        let mut q = PublishQueue::new(EventBus::new(), 0);
        let (receipt, mut answer) = StoredReceipt::new();
        let (done, rx) = oneshot::channel();
        let owed = Owed {
            receipt: Some(receipt.clone()),
            key: None,
            also: Vec::new(),
        };
        q.park(commit_of(rx), "s".into(), owed);
        q.push_mark(receipt);
        assert!(answer.try_recv().is_err(), "not before the commit");
        done.send(Ok(())).unwrap();
        q.flush().await;
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
        let mut q = PublishQueue::new(EventBus::new(), 0);
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
            also: Vec::new(),
        };
        q.park(commit_of(rx), "s".into(), owed);
        q.push_mark(receipt);
        done.send(refused()).unwrap();
        q.drain().await;
        let failed = answer.try_recv().unwrap().unwrap_err();
        assert!(failed.why.contains("could not store"), "{failed}");
        assert_eq!(q.take_failed(), [key]);
        assert!(q.take_failed().is_empty());
    }

    #[tokio::test]
    async fn a_batch_whose_copy_was_dropped_as_a_duplicate_fails_with_the_first_write() {
        let mut q = PublishQueue::new(EventBus::new(), 0);
        let key = MessageKey::of(&crate::network::InboundMessage {
            chat: "c".into(),
            message_id: "m1".into(),
            ..Default::default()
        });
        let (first, mut first_answer) = StoredReceipt::new();
        let (done, rx) = oneshot::channel();
        let owed = Owed {
            receipt: Some(first.clone()),
            key: Some(key.clone()),
            also: Vec::new(),
        };
        q.park(commit_of(rx), "s".into(), owed);
        q.push_mark(first);
        // The server delivers the message again before the write settled:
        // the copy is dropped, and its batch waits on the first write.
        let (again, mut again_answer) = StoredReceipt::new();
        assert!(q.also_owe(&key, &again));
        q.push_mark(again);
        done.send(refused()).unwrap();
        q.drain().await;
        assert!(first_answer.try_recv().unwrap().is_err());
        let failed = again_answer.try_recv().unwrap().unwrap_err();
        assert!(failed.why.contains("could not store"), "{failed}");
        // Nothing pending any more: a later copy is not owed by anything.
        let (late, _) = StoredReceipt::new();
        assert!(!q.also_owe(&key, &late));
    }
}
