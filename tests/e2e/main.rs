//! End-to-end tests: each starts a real gateway on 127.0.0.1:0 with a
//! temporary data directory and talks to it over HTTP.

mod auth;
mod blasts;
mod blasts_delivery;
mod blasts_restart;
mod blasts_support;
mod errors;
mod group_members;
mod group_messages;
mod group_support;
mod groups;
mod intake;
mod message_types;
mod messaging;
mod persistence;
mod scheduled;
mod scheduled_restart;
mod scheduled_waiting;
mod send_kinds;
mod sessions;
mod sim_events;
mod stream;
mod webhook_delivery;
mod webhook_dlq;
mod webhook_signature;
mod webhook_suspension;
mod webhooks;
