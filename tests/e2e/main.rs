//! End-to-end tests: each starts a real gateway on 127.0.0.1:0 with a
//! temporary data directory and talks to it over HTTP.

mod appstate;
mod auth;
mod blasts;
mod blasts_delivery;
mod blasts_listing;
mod blasts_restart;
mod blasts_sessions;
mod blasts_support;
mod blocking;
mod chat_actions;
mod chats;
mod cli;
mod contacts_directory;
mod contacts_lookup;
mod contacts_query;
mod contacts_support;
mod crash_blast_cancel;
mod crash_blasts;
mod crash_intake;
mod crash_integration;
mod crash_scheduled;
mod crash_sends;
mod egress_media_url;
mod errors;
mod fairness_sends;
mod group_access;
mod group_members;
mod group_messages;
mod group_support;
mod groups;
mod identity;
mod intake;
mod intake_order;
mod media;
mod media_memory;
mod media_s3;
mod media_upload;
mod message_types;
mod messaging;
mod metrics;
mod metrics_labels;
mod nats_commands;
mod nats_crash;
mod nats_events;
mod nats_example;
mod nats_reply;
mod observability;
mod openapi;
mod pause;
mod persistence;
mod plugins;
mod plugins_address_space;
mod plugins_admin;
mod plugins_blast;
mod plugins_directory;
mod plugins_examples;
mod plugins_hostile;
mod plugins_integration;
mod plugins_scoped;
mod plugins_support;
mod plugins_swap;
mod plugins_v2;
mod presence;
mod profile;
mod quotas_media;
mod readme;
mod reconnect;
mod scheduled;
mod scheduled_restart;
mod scheduled_waiting;
mod send_kinds;
mod send_pacing;
mod server_limits;
mod session_ops;
mod session_proxy;
mod sessions;
mod sim_events;
mod storage_faults;
mod storage_faults_crash;
mod stream;
mod stream_resume;
mod tenancy_sessions;
mod tenancy_streams;
mod tenancy_webhooks;
mod timelock;
mod tokens;
mod tokens_limits;
mod tokens_matrix;
mod waxum_aliases;
mod webhook_crash;
mod webhook_crash_support;
mod webhook_delivery;
mod webhook_dlq;
mod webhook_outbox;
mod webhook_signature;
mod webhook_ssrf;
mod webhook_standard;
mod webhook_suspension;
mod webhook_tls;
mod webhooks;
#[cfg(feature = "whatsapp")]
mod whatsapp;
#[cfg(feature = "whatsapp")]
mod whatsapp_inbound;
#[cfg(feature = "whatsapp")]
mod wire_appstate;
#[cfg(feature = "whatsapp")]
mod wire_blocking;
#[cfg(feature = "whatsapp")]
mod wire_chain;
#[cfg(feature = "whatsapp")]
mod wire_crash;
#[cfg(feature = "whatsapp")]
mod wire_failures;
#[cfg(feature = "whatsapp")]
mod wire_groups;
#[cfg(feature = "whatsapp")]
mod wire_media_memory;
#[cfg(feature = "whatsapp")]
mod wire_messages;
#[cfg(feature = "whatsapp")]
mod wire_pairing;
#[cfg(feature = "whatsapp")]
mod wire_proxy;
#[cfg(feature = "whatsapp")]
mod wire_receipts;
#[cfg(feature = "whatsapp")]
mod wire_sends;
#[cfg(feature = "whatsapp")]
mod wire_walkthrough;

/// The binary built from the host's `main.rs` (see tests/Cargo.toml).
pub(crate) const BINARY: &str = env!("CARGO_BIN_EXE_switchboard-e2e");
