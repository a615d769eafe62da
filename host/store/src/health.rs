//! The store's health as the operator sees it: whether the store is failing
//! and why (a full disk or another I/O fault), the faults counted by kind,
//! the free space of the data directory, and the floor of free space under
//! which new bulk work (uploads, blasts) is refused before the disk is full.
//!
//! The store changes the state (on a fault, on a reopen that worked); the
//! runtime watches it ([`Store::watch_health`](crate::Store::watch_health))
//! to tell webhooks, and `/readyz` reads it.

use std::path::{Path, PathBuf};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::sync::watch;

use crate::domain::storage_fault::StorageFault;

/// Whether the store takes writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreStatus {
    /// Writes are taken.
    Ok,
    /// A storage fault stopped the store; it is being reopened.
    Failing(StorageFault),
}

/// The labels of a counted fault.
type FaultLabels = [(&'static str, &'static str); 1];

/// The shared state behind [`StoreStatus`], its counters and the free-space
/// floor.
#[derive(Debug)]
pub(crate) struct StoreHealth {
    data_dir: PathBuf,
    min_free_bytes: u64,
    status: watch::Sender<StoreStatus>,
    /// The last fault's cause, for the log and the recovery line.
    cause: std::sync::Mutex<String>,
    /// Store operations refused for a storage fault, by kind.
    pub(crate) faults: Family<FaultLabels, Counter>,
}

impl StoreHealth {
    pub(crate) fn new(data_dir: &Path, min_free_bytes: u64) -> StoreHealth {
        StoreHealth {
            data_dir: data_dir.to_owned(),
            min_free_bytes,
            status: watch::Sender::new(StoreStatus::Ok),
            cause: std::sync::Mutex::new(String::new()),
            faults: Family::default(),
        }
    }

    /// The current status.
    pub(crate) fn status(&self) -> StoreStatus {
        *self.status.borrow()
    }

    /// A receiver that sees every change of the status.
    pub(crate) fn watch(&self) -> watch::Receiver<StoreStatus> {
        self.status.subscribe()
    }

    /// Counts one operation refused for `fault`; the first of a run of
    /// faults turns the status to failing and says so in the log.
    pub(crate) fn fault(&self, fault: StorageFault, cause: &dyn std::fmt::Display) {
        self.count(fault);
        let changed = self.status.send_if_modified(|s| {
            let next = StoreStatus::Failing(fault);
            let changed = *s != next;
            *s = next;
            changed
        });
        if changed {
            let cause = cause.to_string();
            tracing::error!(
                kind = fault.as_str(),
                error = %cause,
                free_bytes = ?self.free_bytes(),
                "the store failed: writes are refused until it is reopened"
            );
            *self.cause.lock().unwrap_or_else(|p| p.into_inner()) = cause;
        }
    }

    /// Counts one operation refused for `fault`, the status unchanged.
    pub(crate) fn count(&self, fault: StorageFault) {
        self.faults.get_or_create(&[("kind", fault.as_str())]).inc();
    }

    /// The store was reopened and takes writes again.
    pub(crate) fn recovered(&self) {
        let was = self.status.send_replace(StoreStatus::Ok);
        if let StoreStatus::Failing(fault) = was {
            let cause = std::mem::take(&mut *self.cause.lock().unwrap_or_else(|p| p.into_inner()));
            tracing::info!(
                kind = fault.as_str(),
                after = %cause,
                free_bytes = ?self.free_bytes(),
                "the store recovered: writes are taken again"
            );
        }
    }

    /// The kind of the fault the store is failing with, if it is.
    pub(crate) fn failing(&self) -> Option<StorageFault> {
        match self.status() {
            StoreStatus::Ok => None,
            StoreStatus::Failing(f) => Some(f),
        }
    }

    /// Bytes an unprivileged writer can still use in the data directory.
    pub(crate) fn free_bytes(&self) -> Option<u64> {
        free_bytes(&self.data_dir)
    }

    /// The floor of free space, in bytes.
    pub(crate) fn min_free_bytes(&self) -> u64 {
        self.min_free_bytes
    }
}

/// Bytes an unprivileged writer can still use on the filesystem of `dir`
/// (`statvfs`'s available blocks); `None` when it cannot be asked.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}
