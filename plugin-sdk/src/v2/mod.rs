//! Plugins for contract 0.2 (`switchboard:plugin@0.2.0`, `wit/0.2.0` in the
//! repository).
//!
//! A 0.2 plugin targets one world, one hook: it implements one of the
//! traits [`EventFilter`], [`MessageTransform`] or [`BlastEndpoint`] and
//! registers it with the matching form of
//! [`register_plugin!`](crate::register_plugin):
//!
//! ```text
//! register_plugin!(v2 event_filter: MyFilter);          // world event-filter-plugin
//! register_plugin!(v2 message_transform: MyTransform);  // world message-transform-plugin
//! register_plugin!(v2 blast_endpoint: MyEndpoint);      // world blast-endpoint-plugin
//! ```
//!
//! Unlike 0.1 there are no hook flags: which hook a plugin serves follows
//! from the world the component exports.
//!
//! An event filter gets the event as a typed [`Event`]; for a message event
//! its [`Message`] carries the text, caption, sender, chat and the other
//! fields filters most often decide on, with no JSON to parse. The event's
//! whole data is one host call away, made only when asked:
//! [`event_data`] (or [`event_data_json`] for the text).
//!
//! The host imports are the functions of this module: [`log`] (and the
//! macros [`v2::info!`](crate::v2::info), [`v2::warn!`](crate::v2::warn), …),
//! [`config`], [`config_cached`], [`now_ms`], [`kv`], [`contact`] and
//! [`event_data`]. Use these, not their 0.1 namesakes at the crate root:
//! those call the 0.1 host interface, which would then be imported too.
//!
//! ```
//! use switchboard_plugin_sdk::v2::{self, Event, EventFilter, FilterDecision};
//!
//! /// Keeps only the messages of group chats, tagged with the chat.
//! pub struct GroupsOnly;
//!
//! impl EventFilter for GroupsOnly {
//!     const NAME: &'static str = "groups-only";
//!     const VERSION: &'static str = env!("CARGO_PKG_VERSION");
//!
//!     fn filter(event: Event) -> FilterDecision {
//!         match event.message {
//!             None => FilterDecision::Keep,
//!             Some(m) if !m.is_group => FilterDecision::Drop,
//!             Some(m) => {
//!                 // The full data only for the events that are kept.
//!                 let Ok(mut data) = v2::event_data::<v2::Value>() else {
//!                     v2::warn!("event data is not JSON; kept unchanged");
//!                     return FilterDecision::Keep;
//!                 };
//!                 data["group"] = m.chat.into();
//!                 FilterDecision::Replace(data)
//!             }
//!         }
//!     }
//! }
//!
//! switchboard_plugin_sdk::register_plugin!(v2 event_filter: GroupsOnly);
//! # fn main() {}
//! ```
//!
//! Unit tests run natively against the double of [`crate::testing`], which
//! the functions of this module share with 0.1; it adds
//! [`testing::set_event_data`](crate::testing::set_event_data) for the data
//! [`event_data`] returns.

#[doc(hidden)]
pub mod adapter;
#[doc(hidden)]
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod bindings;
mod host;
mod types;

pub use host::{
    config, config_cached, config_json, contact, event_data, event_data_json, kv, log, now_ms,
};
pub use types::{Event, Message};

// The types 0.2 shares with 0.1, so that a 0.2 plugin imports from one place.
pub use crate::types::{
    Contact, FilterDecision, Level, Outbound, Recipient, Send, TransformDecision,
};
pub use serde_json::{self, Value, json};

// The logging macros that call the 0.2 import (see `host.rs`).
#[doc(inline)]
pub use crate::{
    __v2_debug as debug, __v2_error as error, __v2_info as info, __v2_trace as trace,
    __v2_warn as warn,
};

/// An event filter (world `event-filter-plugin`): decides about each event
/// before fan-out to webhooks and streams. Register it with
/// `register_plugin!(v2 event_filter: T)`.
///
/// The methods are associated functions (no `self`): instances are pooled
/// by the host, so there is no per-plugin object to keep; persistent state
/// goes into [`kv`].
pub trait EventFilter {
    /// A short name, shown in the admin API and prefixed to log lines.
    const NAME: &'static str;
    /// The plugin's own version (`env!("CARGO_PKG_VERSION")` is a good choice).
    const VERSION: &'static str;

    /// Decides about one event. A [`FilterDecision::Replace`] carries the
    /// event's new data, a JSON object; start from [`event_data`] to change
    /// a field or two of it.
    fn filter(event: Event) -> FilterDecision;
}

/// A message transform (world `message-transform-plugin`): decides about
/// each outbound send before the network. Register it with
/// `register_plugin!(v2 message_transform: T)`.
pub trait MessageTransform {
    /// A short name, shown in the admin API and prefixed to log lines.
    const NAME: &'static str;
    /// The plugin's own version.
    const VERSION: &'static str;

    /// Decides about one send. A send whose body is not JSON never gets
    /// here: it is left unchanged, with a warning.
    fn transform(send: Outbound) -> TransformDecision;
}

/// A blast endpoint (world `blast-endpoint-plugin`): serves endpoint keys
/// usable as `endpoint` in `POST …/blast`. Register it with
/// `register_plugin!(v2 blast_endpoint: T)`.
pub trait BlastEndpoint {
    /// A short name, shown in the admin API and prefixed to log lines.
    const NAME: &'static str;
    /// The plugin's own version.
    const VERSION: &'static str;

    /// The endpoint keys served.
    fn endpoints() -> Vec<String>;

    /// Expands one recipient and the job body into concrete sends of
    /// built-in kinds (the host sets `to`). An `Err` fails that recipient
    /// with the message as its reason.
    fn expand(endpoint: &str, recipient: Recipient, body: Value) -> Result<Vec<Send>, String>;
}
