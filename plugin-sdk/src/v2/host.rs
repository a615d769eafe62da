//! The host imports of `switchboard:plugin/host@0.2.0` as plain functions:
//! the same ones as 0.1 ([`crate::log`], [`crate::config`], …) plus
//! [`event_data`]. They are separate functions, not the 0.1 ones, because
//! calling an import is what makes a component import it: a 0.2 plugin that
//! used the 0.1 functions would import `host@0.1.0` as well. On `wasm32`
//! they call the gateway; on any other target they use the in-process
//! double of [`crate::testing`].

use std::rc::Rc;

use serde::de::DeserializeOwned;

use crate::types::{Contact, Level};

#[cfg(not(target_arch = "wasm32"))]
use crate::testing::double::v2 as imports;

/// The generated imports, with the SDK's types where they differ (the
/// shape the test double has too).
#[cfg(target_arch = "wasm32")]
mod imports {
    use crate::types::{Contact, Level};
    use crate::v2::bindings::host::switchboard::plugin::host as wit;

    pub(super) use wit::{config, config_id, event_data, kv_delete, kv_get, kv_set, now_ms};

    pub(super) fn log(level: Level, message: &str) {
        wit::log(level.into(), message);
    }

    pub(super) fn contact(session_id: &str, jid: &str) -> Option<Contact> {
        wit::contact(session_id, jid).map(Into::into)
    }
}

/// Writes one line to the gateway's log, tagged with the plugin's name.
/// The macros [`v2::info!`](crate::v2::info), [`v2::warn!`](crate::v2::warn), …
/// format and call this.
pub fn log(level: Level, message: impl AsRef<str>) {
    imports::log(level, message.as_ref());
}

/// The JSON configuration of the binding that invoked the plugin, as text (`{}` when none).
pub fn config_json() -> String {
    imports::config()
}

/// The binding's JSON configuration, deserialized into `T`.
///
/// Use `#[serde(default)]` on fields that may be left out; a binding
/// without configuration hands over `{}`.
pub fn config<T: DeserializeOwned>() -> Result<T, serde_json::Error> {
    serde_json::from_str(&config_json())
}

/// The binding's configuration deserialized into `T`, parsed once per
/// instance and configuration (see [`crate::config_cached`], its 0.1
/// twin). Prefer it to [`config`] in filters and transforms that run on
/// every event or send: a call that finds it parsed asks the host only for
/// the configuration's number (`config-id`), not for its text.
pub fn config_cached<T: DeserializeOwned + 'static>() -> Result<Rc<T>, serde_json::Error> {
    use crate::config_cache::{Key, cached};
    cached(Key::Id(imports::config_id()), config_json)
}

/// The current time, Unix milliseconds (the only clock a plugin has).
pub fn now_ms() -> i64 {
    imports::now_ms()
}

/// What a session's contacts directory knows about `jid` (read-only).
pub fn contact(session_id: &str, jid: &str) -> Option<Contact> {
    imports::contact(session_id, jid)
}

/// The whole `data` of the event being filtered, as JSON text (as an
/// earlier filter in the chain may have replaced it); `{}` outside a filter
/// call.
///
/// The host builds the text only when asked, so a filter that decides on
/// the typed [`Event`](crate::v2::Event) alone never pays for it: call it
/// after the cheap checks, when the decision needs more.
pub fn event_data_json() -> String {
    imports::event_data()
}

/// The whole `data` of the event being filtered, deserialized into `T`
/// (a [`Value`](crate::Value), or a struct naming the fields wanted); see
/// [`event_data_json`] for when the host makes it.
pub fn event_data<T: DeserializeOwned>() -> Result<T, serde_json::Error> {
    serde_json::from_str(&event_data_json())
}

/// The plugin's private, persisted, size-capped key-value store.
pub mod kv {
    use serde::Serialize;
    use serde::de::DeserializeOwned;

    use super::imports;

    /// The value stored under `key`, if any.
    pub fn get(key: &str) -> Option<Vec<u8>> {
        imports::kv_get(key)
    }

    /// Stores `value` under `key`; fails (with the host's reason) when the
    /// store's size cap would be exceeded.
    pub fn set(key: &str, value: &[u8]) -> Result<(), String> {
        imports::kv_set(key, value)
    }

    /// Removes the value under `key` (nothing happens when there is none).
    pub fn delete(key: &str) {
        imports::kv_delete(key)
    }

    /// The JSON value stored under `key`, deserialized; `None` when absent
    /// or not a `T`.
    pub fn get_json<T: DeserializeOwned>(key: &str) -> Option<T> {
        get(key).and_then(|bytes| serde_json::from_slice(&bytes).ok())
    }

    /// Stores `value` as JSON under `key`.
    pub fn set_json<T: Serialize>(key: &str, value: &T) -> Result<(), String> {
        let bytes = serde_json::to_vec(value).map_err(|e| e.to_string())?;
        set(key, &bytes)
    }
}

// The 0.2 logging macros. Exported at the crate root under hidden names
// (where `#[macro_export]` puts every macro) and re-exported from `v2` as
// `v2::info!` and so on, so that a 0.2 plugin's log lines go through the
// 0.2 import; the root `info!` and friends call the 0.1 one.

/// Logs at [`Level::Trace`] through the 0.2 host; use it as `v2::trace!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_trace { ($($arg:tt)*) => { $crate::v2::log($crate::Level::Trace, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Debug`] through the 0.2 host; use it as `v2::debug!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_debug { ($($arg:tt)*) => { $crate::v2::log($crate::Level::Debug, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Info`] through the 0.2 host; use it as `v2::info!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_info { ($($arg:tt)*) => { $crate::v2::log($crate::Level::Info, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Warn`] through the 0.2 host; use it as `v2::warn!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_warn { ($($arg:tt)*) => { $crate::v2::log($crate::Level::Warn, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Error`] through the 0.2 host; use it as `v2::error!`.
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_error { ($($arg:tt)*) => { $crate::v2::log($crate::Level::Error, ::std::format!($($arg)*)) }; }
