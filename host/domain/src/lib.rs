//! Pure domain types: no I/O, no HTTP, no storage.

#[cfg(feature = "openapi")]
pub mod address_schema;
pub mod blast;
pub mod broker;
pub mod chat;
pub mod contact;
pub mod data_dir;
pub mod event;
pub mod event_data;
pub mod group;
mod group_settings;
pub mod hooks;
pub mod ip_scope;
pub mod jid;
pub mod json_exact;
pub mod media;
pub mod message;
pub mod plugin;
pub mod proxy;
pub mod scheduled;
pub mod send;
mod send_basic;
mod send_check;
mod send_interactive;
mod send_kind;
mod send_media;
mod send_text;
pub mod session;
pub mod sim;
pub mod storage_fault;
pub mod time;
pub mod token;
pub mod webhook;
