//! Prometheus metrics, served as OpenMetrics text at `/metrics`.
//!
//! Two kinds of source:
//! - counters the data paths bump ([`counters`]): each part of the gateway
//!   owns its handle set (an atomic per counter, created once with the part);
//!   [`Metrics::new`] registers the same handles. HTTP requests are observed
//!   by the API's middleware into [`http::HttpMetrics`].
//! - values computed at scrape time (`collect`): sessions by status, the
//!   webhook DLQ and suspended URLs, the blast queue, plugin counters.
//!
//! Every metric is named `switchboard_*`; the list is in the README.

mod collect;
pub mod http;

use std::sync::Arc;

use prometheus_client::registry::Registry;

pub use crate::store::StoreTimings;
pub use http::HttpMetrics;
pub use switchboard_runtime::counters::{BlastCounters, EventCounters, WebhookCounters};

use crate::blast::Blasts;
use crate::events::EventBus;
use crate::plugins::Plugins;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::webhooks::Webhooks;

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The parts whose metrics are exposed.
pub struct Sources {
    /// Write-transaction timings and scrape-time counts.
    pub store: Store,
    /// Sessions by status.
    pub sessions: Sessions,
    /// Event counters.
    pub events: EventBus,
    /// Delivery counters and suspended URLs.
    pub webhooks: Webhooks,
    /// Send counters and the worker.
    pub blasts: Blasts,
    /// Per-plugin counters.
    pub plugins: Plugins,
}

/// The gateway's metrics registry; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    http: HttpMetrics,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Registers every source's counters and the scrape-time collector.
    pub fn new(sources: Sources) -> Self {
        let mut registry = Registry::default();
        let http = HttpMetrics::default();
        http.register(&mut registry);
        sources.events.counters().register(&mut registry);
        sources.webhooks.counters().register(&mut registry);
        sources.blasts.counters().register(&mut registry);
        sources.store.timings().register(&mut registry);
        registry.register_collector(Box::new(collect::Scrape {
            sessions: sources.sessions,
            store: sources.store,
            webhooks: sources.webhooks,
            blasts: sources.blasts,
            plugins: sources.plugins,
        }));
        Self {
            registry: Arc::new(registry),
            http,
        }
    }

    /// The HTTP request metrics (the API middleware records into them).
    pub fn http(&self) -> &HttpMetrics {
        &self.http
    }

    /// The exposition text, ending in `# EOF`.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        // Writing into a String cannot fail; an encoder error would be a bug
        // in a collector, and the text up to it is still worth serving.
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "could not encode the metrics");
        }
        out
    }
}
