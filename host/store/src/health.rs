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

/// One run of failure, from the fault that closed the store to the reopen
/// that worked: what the runtime tells subscribers once the store can
/// record events again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageEpisode {
    /// The fault that began it.
    pub fault: StorageFault,
    /// Unix seconds when the store failed.
    pub failed_at: i64,
    /// Unix seconds when it took writes again.
    pub recovered_at: i64,
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
    /// When the current run of failure began, and its fault.
    failed_at: std::sync::Mutex<Option<(StorageFault, i64)>>,
    /// Runs of failure that ended, not yet told.
    episodes: std::sync::Mutex<Vec<StorageEpisode>>,
    /// The kind of the last fault met, kept past a recovery: an operation
    /// begun on a database that fault closed may still report it after the
    /// reopen, as redb's bare "previous I/O error".
    last: std::sync::Mutex<Option<StorageFault>>,
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
            failed_at: std::sync::Mutex::new(None),
            episodes: std::sync::Mutex::new(Vec::new()),
            last: std::sync::Mutex::new(None),
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
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(fault);
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
            self.failed_at
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert((fault, crate::domain::time::unix_now()));
        }
    }

    /// Counts one operation refused for `fault`, the status unchanged.
    pub(crate) fn count(&self, fault: StorageFault) {
        self.faults.get_or_create(&[("kind", fault.as_str())]).inc();
    }

    /// The store was reopened and takes writes again. The run of failure
    /// is kept for the runtime before the status changes, so whoever is
    /// woken by the change finds it.
    pub(crate) fn recovered(&self) {
        let StoreStatus::Failing(fault) = self.status() else {
            return;
        };
        let now = crate::domain::time::unix_now();
        let began = self
            .failed_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let (fault, failed_at) = began.unwrap_or((fault, now));
        self.episodes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(StorageEpisode {
                fault,
                failed_at,
                recovered_at: now,
            });
        self.status.send_replace(StoreStatus::Ok);
        let cause = std::mem::take(&mut *self.cause.lock().unwrap_or_else(|p| p.into_inner()));
        tracing::info!(
            kind = fault.as_str(),
            after = %cause,
            free_bytes = ?self.free_bytes(),
            "the store recovered: writes are taken again"
        );
    }

    /// The runs of failure that ended since the last call.
    pub(crate) fn take_episodes(&self) -> Vec<StorageEpisode> {
        std::mem::take(&mut *self.episodes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The kind of the fault the store is failing with, if it is.
    pub(crate) fn failing(&self) -> Option<StorageFault> {
        match self.status() {
            StoreStatus::Ok => None,
            StoreStatus::Failing(f) => Some(f),
        }
    }

    /// The fault the store is failing with or, once it recovered, the last
    /// one it met: what a fault that names no kind of its own repeats.
    pub(crate) fn recent(&self) -> Option<StorageFault> {
        self.failing()
            .or(*self.last.lock().unwrap_or_else(|p| p.into_inner()))
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
