//! Per-plugin counters: calls, outcomes, failures and call times.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

/// How many recent call times the p99 is computed over.
const WINDOW: usize = 1024;

/// Live counters of one plugin (kept across a replace in place). Recording
/// a call takes no lock: it runs on every filtered event.
#[derive(Debug)]
pub struct Stats {
    calls: AtomicU64,
    drops: AtomicU64,
    rejects: AtomicU64,
    traps: AtomicU64,
    timeouts: AtomicU64,
    total_ns: AtomicU64,
    /// Failed calls in a row.
    pub(super) consecutive_failures: AtomicU64,
    /// The last [`WINDOW`] call times, a ring indexed by the call count.
    recent_us: Box<[AtomicU32]>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            calls: AtomicU64::new(0),
            drops: AtomicU64::new(0),
            rejects: AtomicU64::new(0),
            traps: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            total_ns: AtomicU64::new(0),
            consecutive_failures: AtomicU64::new(0),
            recent_us: (0..WINDOW).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

/// What the API shows of [`Stats`].
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatsView {
    /// Calls made.
    pub calls: u64,
    /// Events dropped by filters (fail-closed drops included).
    pub drops: u64,
    /// Sends rejected by transforms (fail-closed rejects included).
    pub rejects: u64,
    /// Traps (out-of-memory included).
    pub traps: u64,
    /// Calls stopped at the deadline.
    pub timeouts: u64,
    /// Mean call time, microseconds.
    pub mean_us: u64,
    /// 99th percentile of the last 1024 calls, microseconds.
    pub p99_us: u64,
}

impl Stats {
    /// Records one call and its duration.
    pub fn record(&self, took: Duration) {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let ns = took.as_nanos().min(u64::MAX as u128) as u64;
        self.total_ns.fetch_add(ns, Ordering::Relaxed);
        let us = (ns / 1000).min(u32::MAX as u64) as u32;
        self.recent_us[(n % WINDOW as u64) as usize].store(us, Ordering::Relaxed);
    }

    /// Counts a drop.
    pub fn drop_one(&self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a reject.
    pub fn reject_one(&self) {
        self.rejects.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a failure; returns how many failures are now in a row.
    pub fn fail(&self, timeout: bool) -> u64 {
        if timeout {
            self.timeouts.fetch_add(1, Ordering::Relaxed);
        } else {
            self.traps.fetch_add(1, Ordering::Relaxed);
        }
        self.consecutive_failures.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A successful call ends a failure streak.
    pub fn succeed(&self) {
        self.consecutive_failures.store(0, Ordering::Relaxed);
    }

    /// A snapshot for the API.
    pub fn view(&self) -> StatsView {
        let calls = self.calls.load(Ordering::Relaxed);
        let filled = calls.min(WINDOW as u64) as usize;
        let mut recent: Vec<u32> = self.recent_us[..filled]
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .collect();
        recent.sort_unstable();
        let p99 = if recent.is_empty() {
            0
        } else {
            recent[((recent.len() * 99).div_ceil(100)).saturating_sub(1)] as u64
        };
        StatsView {
            calls,
            drops: self.drops.load(Ordering::Relaxed),
            rejects: self.rejects.load(Ordering::Relaxed),
            traps: self.traps.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            mean_us: (self.total_ns.load(Ordering::Relaxed) / calls.max(1)) / 1000,
            p99_us: p99,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p99_and_mean_follow_the_recorded_calls() {
        let s = Stats::default();
        for i in 1..=100u64 {
            s.record(Duration::from_micros(i));
        }
        let v = s.view();
        assert_eq!(v.calls, 100);
        assert_eq!(v.p99_us, 99);
        assert_eq!(v.mean_us, 50);
        assert_eq!(s.fail(true), 1);
        assert_eq!(s.fail(false), 2);
        s.succeed();
        assert_eq!(s.fail(false), 1);
        assert_eq!(s.view().timeouts, 1);
    }

    #[test]
    fn the_p99_covers_only_the_last_1024_calls() {
        let s = Stats::default();
        for _ in 0..1000 {
            s.record(Duration::from_millis(1));
        }
        for _ in 0..WINDOW {
            s.record(Duration::from_micros(2));
        }
        let v = s.view();
        assert_eq!(v.calls, 1000 + WINDOW as u64);
        assert_eq!(v.p99_us, 2);
    }
}
