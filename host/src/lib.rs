//! Switchboard: a self-hosted HTTP gateway to sessions on a messaging network.
//!
//! This crate is the binary's library: configuration ([`config`], with the
//! paths it names made absolute by [`paths`]), the one composition root
//! ([`compose`]: every part assembled from a [`Config`] and wired), serving
//! ([`server`]; each connection bounded by [`http_server`]), the metrics registry every part registers into
//! ([`metrics`]), the API token ([`token`]) and logging ([`telemetry`]).
//! Tests and the benchmark start the gateway through [`start`] or assemble
//! it through [`compose::assemble`], so they run the production wiring.
//!
//! The layers are crates of their own, each depending only on those below
//! it (`.ci/layers.py` checks the edges), and are re-exported here:
//! - [`domain`] (`switchboard-domain`): pure types and records, the plugin hook traits
//! - [`store`] (`switchboard-store`): the redb database, one file per aggregate
//! - [`network`] (`switchboard-network`): the [`network::Network`] seam, the sim and the `whatsapp` backend
//! - [`plugins`] (`switchboard-plugins`): sandboxed WebAssembly plugins, implementing the hook traits
//! - `switchboard-runtime`: [`sessions`], [`events`], [`messages`] (the send core),
//!   [`scheduler`], [`blast`], [`webhooks`], [`liveness`]
//! - [`api`] (`switchboard-api`): axum routers, the OpenAPI document, authentication, the console
//! - [`cli`] (`switchboard-cli`): the command-line client (`switchboard sessions list`, …)

pub mod compose;
pub mod config;
pub mod http_server;
pub mod media_args;
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
/// The runtime, for paths that name it whole.
pub use switchboard_runtime as runtime;
pub use switchboard_runtime::media_store;
pub use switchboard_runtime::{
    blast, events, liveness, media as runtime_media, messages, scheduler, sessions, webhooks,
};
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
