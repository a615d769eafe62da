//! The store's own metric: how long write transactions take, commit
//! included. The store owns the histogram and registers it with the registry
//! the composition root hands it; the registry knows nothing of the store.

use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Store write transactions.
#[derive(Debug, Clone)]
pub struct StoreTimings {
    /// Seconds from beginning a write transaction to its commit returning.
    pub write_seconds: Histogram,
}

impl Default for StoreTimings {
    fn default() -> Self {
        // 50 µs … ~1.6 s, doubling.
        Self {
            write_seconds: Histogram::new(exponential_buckets(0.000_05, 2.0, 16)),
        }
    }
}

impl StoreTimings {
    /// Registers the histogram with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_store_write_seconds",
            "Duration of store write transactions, commit included",
            self.write_seconds.clone(),
        );
    }
}
