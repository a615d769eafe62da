//! Switchboard: a self-hosted HTTP gateway to sessions on a messaging network.
//!
//! The crate is a library with a thin binary (`main.rs`). [`server::start`] builds
//! every part — the store, the networks, the session registry, the event bus and
//! the HTTP API — and serves it; tests use the same entry point on `127.0.0.1:0`.
//!
//! Module map (only `api` knows HTTP, only `store` knows redb, only `network`
//! knows a network backend):
//! - [`domain`]: pure types (JIDs, send kinds, records, the event envelope)
//! - [`api`]: axum routers, DTOs, the error type and authentication
//! - [`store`]: the redb database, one file per aggregate
//! - [`network`]: the [`network::Network`] seam and its backends
//! - [`sessions`]: the session registry, lifecycle and intake of network events
//! - [`messages`]: the one send core every outbound message goes through
//! - [`scheduler`]: sends stored for a later `send_at` and the task that sends them
//! - [`events`]: the event bus that fans envelopes out to subscribers
//! - [`blast`]: paced bulk sends (blasts) and the one worker that sends them
//! - [`plugins`]: sandboxed WebAssembly plugins (filters, transforms, blast endpoints)
//! - [`metrics`]: Prometheus metrics; [`liveness`]: whether background workers run (`/readyz`)
//! - [`cli`]: the command-line client (`switchboard sessions list`, …)

pub mod config;
pub mod metrics;
pub mod paths;
pub mod server;
pub mod telemetry;
pub mod token;

pub use switchboard_api as api;
pub use switchboard_cli as cli;
pub use switchboard_domain as domain;
pub use switchboard_network as network;
pub use switchboard_plugins as plugins;
pub use switchboard_runtime::{blast, events, liveness, messages, scheduler, sessions, webhooks};
pub use switchboard_store as store;

pub use config::Config;
pub use server::{Running, start};

/// Makes rustls's `ring` backend the process's crypto provider, which every
/// HTTPS client of the gateway (webhook delivery, the command-line client,
/// the `whatsapp` backend's media transfers) needs. Idempotent: a provider
/// already installed stays.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
