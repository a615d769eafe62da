//! The counters the data paths bump. Each part of the gateway owns one of
//! these handle sets (created with it, so it never waits on the metrics
//! module); the composition root hands the metrics registry to each, and it registers
//! the same handles there. A bump
//! is one relaxed atomic add: no lock, no allocation, no lookup.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A `{outcome="…"}` label set.
type Outcome = [(&'static str, &'static str); 1];

fn outcome(family: &Family<Outcome, Counter>, value: &'static str) -> Counter {
    family.get_or_create_owned(&[("outcome", value)])
}

/// Envelopes through the event bus.
#[derive(Debug, Clone, Default)]
pub struct EventCounters {
    /// Envelopes published (before any filter).
    pub received: Counter,
    /// Envelopes an event-filter plugin dropped.
    pub filtered: Counter,
    /// Envelopes live event streams lost because they fell behind.
    pub stream_dropped: Counter,
    /// Streams opened with a `Last-Event-ID` to resume from.
    pub stream_resumes: Counter,
    /// Recorded envelopes replayed to resuming streams.
    pub stream_replayed: Counter,
    /// Resuming streams told `reset` (their id was too old or unknown).
    pub stream_resets: Counter,
}

impl EventCounters {
    /// Registers these counters with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_events_received",
            "Events published on the event bus, before filters",
            self.received.clone(),
        );
        r.register(
            "switchboard_events_filtered",
            "Events dropped by event-filter plugins",
            self.filtered.clone(),
        );
        r.register(
            "switchboard_events_stream_dropped",
            "Events lost by live event streams that fell behind",
            self.stream_dropped.clone(),
        );
        r.register(
            "switchboard_events_stream_resumes",
            "Event streams opened with a Last-Event-ID to resume from",
            self.stream_resumes.clone(),
        );
        r.register(
            "switchboard_events_stream_replayed",
            "Recorded events replayed to resuming event streams",
            self.stream_replayed.clone(),
        );
        r.register(
            "switchboard_events_stream_resets",
            "Resuming event streams whose id was too old or unknown (sent `reset`)",
            self.stream_resets.clone(),
        );
    }
}

/// Webhook delivery outcomes.
#[derive(Debug, Clone)]
pub struct WebhookCounters {
    family: Family<Outcome, Counter>,
    /// Attempts the receiver answered with a 2xx.
    pub delivered: Counter,
    /// Attempts that failed (an error status, a timeout, a connection
    /// error); blocked attempts are counted apart.
    pub failed: Counter,
    /// Attempts refused before connecting because the URL is, or its host
    /// resolved at delivery only to, an internal address.
    pub blocked: Counter,
    /// Deliveries moved to the dead-letter queue.
    pub dead_lettered: Counter,
    /// Events not delivered because their URL was suspended.
    pub skipped: Counter,
    /// Retries scheduled after a failed attempt.
    pub retries: Counter,
    /// Deliveries moved to the dead-letter queue because their URL's
    /// backlog was full (an outcome of its own, not counted as
    /// `dead_lettered`, which is for failed attempts).
    pub backlog_full: Counter,
    /// Deliveries found pending in the outbox at start and resumed.
    pub resumed: Counter,
}

impl Default for WebhookCounters {
    fn default() -> Self {
        let family = Family::default();
        Self {
            delivered: outcome(&family, "delivered"),
            failed: outcome(&family, "failed"),
            blocked: outcome(&family, "blocked"),
            dead_lettered: outcome(&family, "dead_lettered"),
            skipped: outcome(&family, "skipped"),
            backlog_full: outcome(&family, "backlog_full"),
            family,
            retries: Counter::default(),
            resumed: Counter::default(),
        }
    }
}

impl WebhookCounters {
    /// Registers these counters with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_webhook_deliveries",
            "Webhook delivery attempts and their fate, by outcome",
            self.family.clone(),
        );
        r.register(
            "switchboard_webhook_retries",
            "Webhook retries scheduled after a failed attempt",
            self.retries.clone(),
        );
        r.register(
            "switchboard_webhook_outbox_resumed",
            "Webhook deliveries found pending in the outbox at start and resumed",
            self.resumed.clone(),
        );
    }
}

/// Integration plugin deliveries by outcome.
#[derive(Debug, Clone)]
pub struct IntegrationCounters {
    family: Family<Outcome, Counter>,
    /// Attempts the plugin's `handle` answered with success.
    pub handled: Counter,
    /// Attempts that failed: an error answered, a trap, a timeout, or the
    /// call limit passed.
    pub failed: Counter,
    /// Deliveries moved to the dead-letter queue after their last attempt.
    pub dead_lettered: Counter,
    /// Deliveries moved to the dead-letter queue because their binding's
    /// backlog was full.
    pub backlog_full: Counter,
    /// Deliveries found pending in the outbox at start and resumed.
    pub resumed: Counter,
}

impl Default for IntegrationCounters {
    fn default() -> Self {
        let family = Family::default();
        Self {
            handled: outcome(&family, "handled"),
            failed: outcome(&family, "failed"),
            dead_lettered: outcome(&family, "dead_lettered"),
            backlog_full: outcome(&family, "backlog_full"),
            family,
            resumed: Counter::default(),
        }
    }
}

impl IntegrationCounters {
    /// Registers these counters with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_integration_deliveries",
            "Integration plugin delivery attempts and their fate, by outcome",
            self.family.clone(),
        );
        r.register(
            "switchboard_integration_outbox_resumed",
            "Integration deliveries found pending in the outbox at start and resumed",
            self.resumed.clone(),
        );
    }
}

/// Blast sends by outcome.
#[derive(Debug, Clone)]
pub struct BlastCounters {
    family: Family<Outcome, Counter>,
    /// Recipients sent.
    pub sent: Counter,
    /// Send attempts that failed (the recipient may be retried).
    pub failed: Counter,
}

impl Default for BlastCounters {
    fn default() -> Self {
        let family = Family::default();
        Self {
            sent: outcome(&family, "sent"),
            failed: outcome(&family, "failed"),
            family,
        }
    }
}

impl BlastCounters {
    /// Registers these counters with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_blast_sends",
            "Blast send attempts, by outcome",
            self.family.clone(),
        );
    }
}

/// Media downloads, uploads and retention sweeps, and the bytes stored.
#[derive(Debug, Clone)]
pub struct MediaCounters {
    downloads: Family<Outcome, Counter>,
    uploads: Family<Outcome, Counter>,
    /// Inbound media downloaded and stored.
    pub downloads_stored: Counter,
    /// Downloads that failed (the media is in the failed state).
    pub downloads_failed: Counter,
    /// Uploads stored.
    pub uploads_stored: Counter,
    /// Uploads refused or broken off.
    pub uploads_failed: Counter,
    /// Retention sweeps run.
    pub sweeps: Counter,
    /// Media the sweeps removed.
    pub swept: Counter,
    /// Bytes of media in the media store.
    pub stored_bytes: Gauge,
}

impl Default for MediaCounters {
    fn default() -> Self {
        let downloads = Family::default();
        let uploads = Family::default();
        Self {
            downloads_stored: outcome(&downloads, "stored"),
            downloads_failed: outcome(&downloads, "failed"),
            uploads_stored: outcome(&uploads, "stored"),
            uploads_failed: outcome(&uploads, "failed"),
            downloads,
            uploads,
            sweeps: Counter::default(),
            swept: Counter::default(),
            stored_bytes: Gauge::default(),
        }
    }
}

impl MediaCounters {
    /// Registers these counters with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_media_downloads",
            "Inbound media downloads, by outcome",
            self.downloads.clone(),
        );
        r.register(
            "switchboard_media_uploads",
            "Media uploads, by outcome",
            self.uploads.clone(),
        );
        r.register(
            "switchboard_media_sweeps",
            "Media retention sweeps run",
            self.sweeps.clone(),
        );
        r.register(
            "switchboard_media_swept",
            "Media removed by retention sweeps",
            self.swept.clone(),
        );
        r.register(
            "switchboard_media_stored_bytes",
            "Bytes of media in the media store",
            self.stored_bytes.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_handles_bump_the_registered_family() {
        let c = WebhookCounters::default();
        c.delivered.inc();
        c.dead_lettered.inc_by(2);
        let mut r = Registry::default();
        c.register(&mut r);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &r).unwrap();
        assert!(text.contains("switchboard_webhook_deliveries_total{outcome=\"delivered\"} 1"));
        assert!(text.contains("switchboard_webhook_deliveries_total{outcome=\"dead_lettered\"} 2"));
        assert!(text.contains("switchboard_webhook_deliveries_total{outcome=\"skipped\"} 0"));
        assert!(text.contains("switchboard_webhook_deliveries_total{outcome=\"blocked\"} 0"));
    }
}
