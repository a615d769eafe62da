//! Prometheus metrics, served as OpenMetrics text at `/metrics`.
//!
//! Two kinds of source:
//! - counters the data paths bump (`switchboard_runtime::counters`, the store's
//!   `StoreTimings`, the `whatsapp` backend's `WhatsAppCounters`): each part of the gateway
//!   owns its handle set (an atomic per counter, created once with the part);
//!   [`build`] has each register the same handles. HTTP requests are observed
//!   by the API's middleware into [`HttpMetrics`].
//! - values computed at scrape time (`collect`): sessions by status, the
//!   webhook DLQ and suspended URLs, the blast queue, plugin counters, the
//!   store's health and the free space of the data and media directories.
//!
//! Every metric is named `switchboard_*`; the list is in the README.

mod collect;

pub use crate::network::whatsapp::WhatsAppCounters;
pub use crate::store::StoreTimings;
pub use switchboard_api::http_metrics::HttpMetrics;
pub use switchboard_api::metrics::{CONTENT_TYPE, Metrics};
pub use switchboard_runtime::counters::{
    BlastCounters, EventCounters, IntegrationCounters, WebhookCounters,
};

use crate::blast::Blasts;
use crate::events::EventBus;
use crate::plugins::Plugins;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::webhooks::Webhooks;

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
    /// The `whatsapp` backend's counters, when the build has the backend.
    pub whatsapp: Option<WhatsAppCounters>,
    /// The NATS broker's counters, when one is configured.
    pub nats: Option<switchboard_nats::NatsCounters>,
    /// Media downloads, uploads, sweeps and the bytes stored.
    pub media: crate::runtime::counters::MediaCounters,
    /// The media store, for the free space of a local media directory.
    pub media_store: crate::media_store::MediaStore,
    /// Integration plugin deliveries.
    pub integrations: IntegrationCounters,
}

/// The gateway's metrics: the API's HTTP metrics, every part's own
/// counters, and the scrape-time collector.
pub fn build(sources: Sources) -> Metrics {
    Metrics::new(|registry| {
        sources.events.counters().register(registry);
        sources.webhooks.counters().register(registry);
        sources.blasts.counters().register(registry);
        sources.store.register_metrics(registry);
        sources.media.register(registry);
        sources.integrations.register(registry);
        if let Some(whatsapp) = &sources.whatsapp {
            whatsapp.register(registry);
        }
        if let Some(nats) = &sources.nats {
            nats.register(registry);
        }
        registry.register_collector(Box::new(collect::Scrape {
            sessions: sources.sessions,
            store: sources.store,
            media_store: sources.media_store,
            webhooks: sources.webhooks,
            blasts: sources.blasts,
            plugins: sources.plugins,
        }));
    })
}
