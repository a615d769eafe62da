//! The `whatsapp` backend's counters: crate events that gave the gateway
//! nothing, by kind (`switchboard_whatsapp_events_unmapped_total{kind}`,
//! the kinds of `map/kinds.rs`), and what waits in the sessions' lanes for
//! their intakes (`switchboard_whatsapp_events_queued`, see `lane.rs`). One handle set per backend, cloned into
//! each session; the composition root registers it with the metrics
//! registry. A bump is an atomic add after a read-locked lookup of the
//! kind's counter (created on its first bump).
//!
//! Built whatever the features, so the composition root registers it
//! without feature switches; only the backend bumps it.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A `{kind="…"}` label set.
type Kind = [(&'static str, &'static str); 1];

/// The backend's counters.
#[derive(Debug, Clone, Default)]
pub struct WhatsAppCounters {
    unmapped: Family<Kind, Counter>,
    queued: Gauge,
}

impl WhatsAppCounters {
    /// Counts one crate event of `kind` that no mapping forwarded.
    pub fn unmapped(&self, kind: &'static str) {
        self.unmapped.get_or_create(&[("kind", kind)]).inc();
    }

    /// The gauge of items waiting in the sessions' lanes (one for all).
    #[cfg(feature = "whatsapp")]
    pub(super) fn queued(&self) -> Gauge {
        self.queued.clone()
    }

    /// Registers these counters with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_whatsapp_events_unmapped",
            "WhatsApp crate events that gave the gateway no event, by the crate's event kind",
            self.unmapped.clone(),
        );
        r.register(
            "switchboard_whatsapp_events_queued",
            "WhatsApp events and committed message batches read from the network and not yet handed to their session's intake, all sessions",
            self.queued.clone(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmapped_events_are_counted_per_kind_in_the_registered_family() {
        let c = WhatsAppCounters::default();
        let session = c.clone();
        session.unmapped("server_ack");
        session.unmapped("server_ack");
        c.unmapped("incoming_call");
        let mut r = Registry::default();
        c.register(&mut r);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &r).unwrap();
        assert!(
            text.contains("switchboard_whatsapp_events_unmapped_total{kind=\"server_ack\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("switchboard_whatsapp_events_unmapped_total{kind=\"incoming_call\"} 1")
        );
    }
}
