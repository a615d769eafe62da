//! The broker's counters and gauges, bumped on its data paths and
//! registered with the gateway's metrics registry as `switchboard_nats_*`.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use switchboard_domain::broker::{BrokerCommands, BrokerEvents};

/// A `{outcome="…"}` label set.
type Outcome = [(&'static str, &'static str); 1];

/// Every count the broker keeps.
#[derive(Debug, Clone, Default)]
pub struct NatsCounters {
    /// 1 while connected.
    pub connected: Gauge,
    /// Event publishes (each attempt).
    pub published: Counter,
    /// Event publishes the stream acknowledged.
    pub acked: Counter,
    /// Acknowledged as duplicates.
    pub duplicates: Counter,
    /// Event publishes that failed.
    pub failed: Counter,
    /// Events moved to the dead-letter queue because the outbox's backlog to
    /// the stream was full.
    pub backlog_full: Counter,
    /// Events waiting in the outbox for the stream.
    pub pending: Gauge,
    /// Seconds since the oldest waiting event was recorded.
    pub lag_seconds: Gauge<f64, AtomicU64>,
    /// Send commands delivered to the gateway (each delivery).
    pub command_deliveries: Counter,
    /// Deliveries of a command delivered before.
    pub command_redeliveries: Counter,
    /// Commands by outcome: `ok`, `failed`, `retried`, `already_sent`.
    pub commands: Family<Outcome, Counter>,
    /// Per-session readers of send commands now running (only for
    /// sessions that exist; retired when idle or when the session goes).
    pub command_workers: Gauge,
}

impl NatsCounters {
    /// Counts one command outcome.
    pub fn command(&self, outcome: &'static str) {
        self.commands.get_or_create(&[("outcome", outcome)]).inc();
    }

    fn outcome(&self, outcome: &'static str) -> u64 {
        self.commands.get_or_create(&[("outcome", outcome)]).get()
    }

    /// Registers them with the gateway's metrics registry.
    pub fn register(&self, r: &mut Registry) {
        r.register(
            "switchboard_nats_connected",
            "1 while the gateway is connected to NATS",
            self.connected.clone(),
        );
        r.register(
            "switchboard_nats_events_published",
            "Event publishes to the JetStream events stream (each attempt)",
            self.published.clone(),
        );
        r.register(
            "switchboard_nats_events_acked",
            "Event publishes the events stream acknowledged",
            self.acked.clone(),
        );
        r.register(
            "switchboard_nats_events_duplicates",
            "Event publishes acknowledged as duplicates (already in the stream)",
            self.duplicates.clone(),
        );
        r.register(
            "switchboard_nats_events_failed",
            "Event publishes that failed and wait to be retried in order",
            self.failed.clone(),
        );
        r.register(
            "switchboard_nats_events_backlog_full",
            "Events dead-lettered because the outbox's backlog to NATS was full",
            self.backlog_full.clone(),
        );
        r.register(
            "switchboard_nats_outbox_pending",
            "Events in the outbox waiting for the events stream",
            self.pending.clone(),
        );
        r.register(
            "switchboard_nats_outbox_lag_seconds",
            "Seconds since the oldest event waiting for the events stream was recorded",
            self.lag_seconds.clone(),
        );
        r.register(
            "switchboard_nats_command_deliveries",
            "Send commands delivered to the gateway by the send queue",
            self.command_deliveries.clone(),
        );
        r.register(
            "switchboard_nats_command_redeliveries",
            "Send-command deliveries of a command delivered before",
            self.command_redeliveries.clone(),
        );
        r.register(
            "switchboard_nats_command_workers",
            "Per-session readers of send commands running now (sessions that exist, with recent commands)",
            self.command_workers.clone(),
        );
        r.register(
            "switchboard_nats_commands",
            "Send commands by outcome: ok, failed (answered), retried (put back), already_sent",
            self.commands.clone(),
        );
    }

    /// The events-out part of the status.
    pub fn events(&self) -> BrokerEvents {
        let lag = self.lag_seconds.get();
        BrokerEvents {
            published: self.published.get(),
            acked: self.acked.get(),
            duplicates: self.duplicates.get(),
            failed: self.failed.get(),
            pending: u64::try_from(self.pending.get()).unwrap_or(0),
            lag_seconds: (lag > 0.0).then_some(lag),
        }
    }

    /// The sends-in part of the status.
    pub fn commands(&self) -> BrokerCommands {
        BrokerCommands {
            delivered: self.command_deliveries.get(),
            redelivered: self.command_redeliveries.get(),
            succeeded: self.outcome("ok"),
            failed: self.outcome("failed"),
            retried: self.outcome("retried"),
            already_sent: self.outcome("already_sent"),
        }
    }
}
