//! What the gateway reports of its message broker (NATS JetStream, when one
//! is configured): the connection, the streams it set up, how far the
//! event outbox has drained into it, and the send queue's commands. The API
//! answers it at `GET /api/v1/nats`; the CLI prints it.

use serde::{Deserialize, Serialize};

/// The broker's state as a whole.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrokerStatus {
    /// Whether a broker is configured (`--nats-url`); all else is empty when not.
    pub configured: bool,
    /// Whether the client is connected now.
    pub connected: bool,
    /// The servers it was given (credentials left out).
    pub servers: Vec<String>,
    /// The last connection or setup problem, if the broker is not usable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The streams the gateway publishes to and consumes from.
    pub streams: Vec<BrokerStream>,
    /// Events out: the outbox's drain into the events stream.
    pub events: BrokerEvents,
    /// Sends in: the send queue's commands.
    pub commands: BrokerCommands,
}

/// One stream the gateway set up at start.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrokerStream {
    /// The stream's name.
    pub name: String,
    /// What the gateway uses it for: `events` or `send`.
    pub role: String,
    /// The subjects it captures.
    pub subjects: Vec<String>,
    /// `created`, `matches`, `updated`, `drifted` (its configuration differs
    /// from the gateway's and was left as it is), or `unavailable`.
    pub setup: String,
    /// The fields that differ, when `drifted` or `updated`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<String>,
}

/// Events out, as counted since the gateway started (pending is now).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrokerEvents {
    /// Events published (each attempt).
    pub published: u64,
    /// Publishes the stream acknowledged.
    pub acked: u64,
    /// Acknowledged as duplicates (a redelivery the stream already had).
    pub duplicates: u64,
    /// Publishes that failed (retried in order).
    pub failed: u64,
    /// Events in the outbox waiting for the stream.
    pub pending: u64,
    /// Seconds since the oldest of them was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_seconds: Option<f64>,
}

/// Sends in, as counted since the gateway started.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrokerCommands {
    /// Commands taken from the send queue (each delivery).
    pub delivered: u64,
    /// Deliveries of a command already delivered before.
    pub redelivered: u64,
    /// Commands answered `ok`.
    pub succeeded: u64,
    /// Commands answered with an error (final).
    pub failed: u64,
    /// Transient failures put back for a later attempt.
    pub retried: u64,
    /// Redelivered commands whose send had already gone out: answered, not sent again.
    pub already_sent: u64,
}
