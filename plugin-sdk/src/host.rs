//! The host imports as plain functions: logging, the binding's
//! configuration, the clock, the private key-value store and the contact
//! lookup. On `wasm32` they call the gateway; on any other target (unit
//! tests of a plugin) they use the in-process double of [`crate::testing`].

use serde::de::DeserializeOwned;

use crate::types::{Contact, Level};

#[cfg(target_arch = "wasm32")]
use crate::bindings::switchboard::plugin::host as imports;
#[cfg(not(target_arch = "wasm32"))]
use crate::testing::double as imports;

/// Writes one line to the gateway's log, tagged with the plugin's name.
/// The macros [`info!`](crate::info), [`warn!`](crate::warn), … format and call this.
pub fn log(level: Level, message: impl AsRef<str>) {
    imports::log(level.into(), message.as_ref());
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

/// The current time, Unix milliseconds (the only clock a plugin has).
pub fn now_ms() -> i64 {
    imports::now_ms()
}

/// What a session's contacts directory knows about `jid` (read-only).
pub fn contact(session_id: &str, jid: &str) -> Option<Contact> {
    imports::contact(session_id, jid).map(Into::into)
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

/// Logs at [`Level::Trace`] with `format!` arguments.
#[macro_export]
macro_rules! trace { ($($arg:tt)*) => { $crate::log($crate::Level::Trace, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Debug`] with `format!` arguments.
#[macro_export]
macro_rules! debug { ($($arg:tt)*) => { $crate::log($crate::Level::Debug, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Info`] with `format!` arguments.
#[macro_export]
macro_rules! info { ($($arg:tt)*) => { $crate::log($crate::Level::Info, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Warn`] with `format!` arguments.
#[macro_export]
macro_rules! warn { ($($arg:tt)*) => { $crate::log($crate::Level::Warn, ::std::format!($($arg)*)) }; }
/// Logs at [`Level::Error`] with `format!` arguments.
#[macro_export]
macro_rules! error { ($($arg:tt)*) => { $crate::log($crate::Level::Error, ::std::format!($($arg)*)) }; }
