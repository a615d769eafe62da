//! Liveness of background workers, for `/readyz`: a worker's future is
//! wrapped in [`Liveness::watch`], which marks it running until the future
//! ends — by returning, by being dropped, or by panicking (the guard drops
//! while unwinding). A worker that is not running makes the gateway unready.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether one background worker is running; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Liveness(Arc<AtomicBool>);

/// Marks its worker stopped when dropped.
struct Running(Arc<AtomicBool>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Liveness {
    /// Wraps a worker's future: the worker counts as running from this call
    /// until the future ends in any way.
    pub fn watch<F: Future>(&self, fut: F) -> impl Future<Output = F::Output> + use<F> {
        self.0.store(true, Ordering::Release);
        let guard = Running(self.0.clone());
        async move {
            let _guard = guard;
            fut.await
        }
    }

    /// Whether the worker is running (false before it was started).
    pub fn is_running(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_worker_counts_as_running_until_its_future_returns() {
        let alive = Liveness::default();
        assert!(!alive.is_running());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(alive.watch(async move {
            let _ = rx.await;
        }));
        assert!(alive.is_running());
        tx.send(()).unwrap();
        task.await.unwrap();
        assert!(!alive.is_running());
    }

    #[tokio::test]
    async fn a_worker_that_panics_no_longer_counts_as_running() {
        let alive = Liveness::default();
        let task = tokio::spawn(alive.watch(async { panic!("worker bug") }));
        assert!(task.await.is_err());
        assert!(!alive.is_running());
    }
}
