//! The broker's configuration: where NATS is and how to sign in, the
//! streams and their subjects, and the timings of publishing and of the
//! send queue. Every field has a `serve` flag and an environment variable
//! (docs/operations.md); without servers nothing NATS-related starts.

use std::path::PathBuf;
use std::time::Duration;

/// How the streams store their messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Storage {
    /// On disk (JetStream's file store): survives a restart of NATS.
    #[default]
    File,
    /// In memory: lost when NATS restarts.
    Memory,
}

/// Everything the broker needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NatsConfig {
    /// Server URLs (`nats://host:4222`, `tls://…`); empty: no broker.
    pub servers: Vec<String>,
    /// A credentials file (JWT and NKey seed), as `nsc` writes it.
    pub creds_file: Option<PathBuf>,
    /// A token to authenticate with.
    pub token: Option<String>,
    /// A user name (with `password`).
    pub user: Option<String>,
    /// The user's password.
    pub password: Option<String>,
    /// Refuse to talk to a server without TLS.
    pub tls_required: bool,
    /// A PEM file of the CA certificates to trust instead of the system's.
    pub tls_ca: Option<PathBuf>,
    /// A PEM client certificate (with `tls_key`), for servers that verify clients.
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's PEM private key.
    pub tls_key: Option<PathBuf>,
    /// The first token of every subject the gateway uses.
    pub prefix: String,
    /// The stream of events (and of send results).
    pub events_stream: String,
    /// Oldest event the events stream keeps (zero: no limit).
    pub events_max_age: Duration,
    /// Most bytes the events stream keeps (zero: no limit).
    pub events_max_bytes: i64,
    /// How both streams store messages.
    pub storage: Storage,
    /// Replicas of each stream (1 on a single server; 3 on a 3-node cluster).
    pub replicas: usize,
    /// JetStream's duplicate window: a message id seen within it is stored once.
    pub duplicate_window: Duration,
    /// The work-queue stream of send commands.
    pub send_stream: String,
    /// The durable pull consumer the gateway reads send commands with.
    pub send_consumer: String,
    /// Most event publishes waiting for their acknowledgement at once.
    pub publish_window: usize,
    /// How long a publish waits for its acknowledgement.
    pub ack_timeout: Duration,
    /// First pause after a failed publish; it doubles up to `retry_max`.
    pub retry_base: Duration,
    /// Longest pause between publish attempts.
    pub retry_max: Duration,
    /// Deliveries of a send command that failed for a passing reason before
    /// it is answered as failed.
    pub command_attempts: u32,
    /// First pause before a command is delivered again; it doubles up to
    /// `command_retry_max`.
    pub command_retry_base: Duration,
    /// Longest pause before a command is delivered again.
    pub command_retry_max: Duration,
    /// How long a delivered command may go unanswered before NATS delivers it
    /// again (a gateway that died while sending it).
    pub command_ack_wait: Duration,
    /// How long a session's reader of send commands is kept with nothing to
    /// do before it is retired (the next command starts it again).
    pub command_worker_idle: Duration,
}

impl Default for NatsConfig {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            creds_file: None,
            token: None,
            user: None,
            password: None,
            tls_required: false,
            tls_ca: None,
            tls_cert: None,
            tls_key: None,
            prefix: "switchboard".into(),
            events_stream: "SWITCHBOARD_EVENTS".into(),
            events_max_age: Duration::from_secs(7 * 24 * 3600),
            events_max_bytes: 0,
            storage: Storage::File,
            replicas: 1,
            duplicate_window: Duration::from_secs(120),
            send_stream: "SWITCHBOARD_SEND".into(),
            send_consumer: "switchboard-send".into(),
            publish_window: 256,
            ack_timeout: Duration::from_secs(5),
            retry_base: Duration::from_millis(250),
            retry_max: Duration::from_secs(5),
            command_attempts: 5,
            command_retry_base: Duration::from_secs(1),
            command_retry_max: Duration::from_secs(60),
            command_ack_wait: Duration::from_secs(30),
            command_worker_idle: Duration::from_secs(60),
        }
    }
}

impl NatsConfig {
    /// Whether a broker is configured at all.
    pub fn enabled(&self) -> bool {
        !self.servers.is_empty()
    }

    /// The pause before attempt `n + 1` (`n` ≥ 1 failed so far), doubling from
    /// `base` up to `max`.
    pub fn backoff(base: Duration, max: Duration, n: u32) -> Duration {
        let factor = 1u32
            .checked_shl(n.saturating_sub(1).min(30))
            .unwrap_or(u32::MAX);
        base.saturating_mul(factor).min(max)
    }
}
