//! [`StoredReceipt`]: how a backend learns that the events it handed over are
//! stored. A network that acknowledges messages to its server (WhatsApp)
//! must not do so before the gateway holds them durably: it sends them as one
//! [`NetworkEvent::Durable`](crate::NetworkEvent::Durable) batch and waits on
//! the receipt, which the session's intake completes once every event of the
//! batch is stored and published, in order, or fails as soon as one cannot be.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::domain::storage_fault::StorageFault;

/// Why a batch was not stored: the storage fault, when it was one (the
/// caller can tell a full disk from anything else by type), and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotStored {
    /// The storage fault that stopped it, if one did.
    pub fault: Option<StorageFault>,
    /// What went wrong.
    pub why: String,
}

impl std::fmt::Display for NotStored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// The answer a batch gets: stored, or why not.
pub type StoredAnswer = Result<(), NotStored>;

/// The intake's half of a batch's receipt. Cloned freely (every event of the
/// batch may hold one); the first `fail` or `stored` answers, later calls do
/// nothing. Dropped unanswered (the intake stopped), the waiter sees a failure.
#[derive(Clone)]
pub struct StoredReceipt(Arc<Mutex<Option<oneshot::Sender<StoredAnswer>>>>);

impl StoredReceipt {
    /// A receipt and the future the backend awaits.
    pub fn new() -> (Self, oneshot::Receiver<StoredAnswer>) {
        let (tx, rx) = oneshot::channel();
        (Self(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Everything of the batch is stored (no-op once answered).
    pub fn stored(&self) {
        self.answer(Ok(()));
    }

    /// Something of the batch could not be stored (no-op once answered).
    pub fn fail(&self, why: impl Into<String>) {
        self.fail_with(None, why);
    }

    /// [`StoredReceipt::fail`], naming the storage fault that stopped it.
    pub fn fail_with(&self, fault: Option<StorageFault>, why: impl Into<String>) {
        self.answer(Err(NotStored {
            fault,
            why: why.into(),
        }));
    }

    /// Whether the batch was answered already (a failure answers early).
    pub fn is_answered(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_none()
    }

    fn answer(&self, answer: StoredAnswer) {
        let sender = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(tx) = sender {
            let _ = tx.send(answer);
        }
    }
}

impl std::fmt::Debug for StoredReceipt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredReceipt")
            .field("answered", &self.is_answered())
            .finish()
    }
}

/// Two receipts are equal when they answer the same batch.
impl PartialEq for StoredReceipt {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
