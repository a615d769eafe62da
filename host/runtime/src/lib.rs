//! The gateway's runtime: everything that happens between the network and
//! the HTTP API.
//!
//! - [`sessions`]: the session registry, lifecycle, intake of network events,
//!   the contacts directory, auto-reconnect
//! - [`events`]: the event bus that fans envelopes out to subscribers
//! - [`messages`]: the one send core every outbound message goes through
//! - [`chats`]: chats and their history, read receipts, actions on earlier
//!   messages, presence and typing, `@lid` lookups
//! - [`scheduler`]: sends stored for a later `send_at` and the task that sends them
//! - [`blast`]: paced bulk sends and the one worker that sends them
//! - [`webhooks`]: signed delivery, retries, dead letters, suspension
//! - [`integrations`]: integration plugins' deliveries from the durable
//!   outbox, retried and dead-lettered like a webhook's
//! - [`media`]: inbound media downloaded and kept, uploads, retention
//! - [`liveness`]: whether each background worker runs (for `/readyz`)
//! - [`storage_events`]: `storage_failed` and `storage_recovered`, once the store recovers
//! - [`counters`]: the counters these parts bump, each registered by its owner
//!
//! Plugins reach the runtime only through the hook traits of
//! `switchboard_domain::hooks`; HTTP does not reach it at all.

pub mod blast;
pub mod chats;
pub mod counters;
pub mod events;
pub mod integrations;
pub mod liveness;
pub mod media;
pub mod messages;
pub mod scheduler;
pub mod sessions;
pub mod storage_events;
pub mod webhooks;

use switchboard_domain as domain;

// The layers the runtime builds on, for its callers (the HTTP API names the
// network's value types and the store's errors through the runtime).
pub use switchboard_media as media_store;
pub use switchboard_network as network;
pub use switchboard_store as store;
