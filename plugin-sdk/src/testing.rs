//! An in-process stand-in for the gateway, for unit tests of a plugin on the
//! build machine (any target but `wasm32`). The host functions of the SDK
//! read and write this thread-local state, so a plugin's
//! [`Plugin`](crate::Plugin) methods run natively under `cargo test`:
//!
//! ```
//! use switchboard_plugin_sdk::{testing, config, now_ms};
//!
//! testing::reset();
//! testing::set_config(serde_json::json!({ "footer": "-- sent by Switchboard" }));
//! testing::set_now_ms(1_700_000_000_000);
//! let cfg: serde_json::Value = config().unwrap();
//! assert_eq!(cfg["footer"], "-- sent by Switchboard");
//! assert_eq!(now_ms(), 1_700_000_000_000);
//! ```
//!
//! The 0.2 host functions of [`crate::v2`] share this state, and
//! [`set_event_data`] stands in for the data of the event being filtered,
//! so a 0.2 filter is tested by calling its `filter` with an
//! [`Event`](crate::v2::Event):
//!
//! ```
//! use switchboard_plugin_sdk::{testing, v2};
//!
//! testing::reset();
//! testing::set_event_data(serde_json::json!({ "text": "hi", "id": "ABC" }));
//! let data: serde_json::Value = v2::event_data().unwrap();
//! assert_eq!(data["id"], "ABC");
//! assert_eq!(testing::event_data_calls(), 1);
//! ```

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use crate::types::{Contact, Level};

#[derive(Default)]
struct State {
    config: Option<String>,
    /// The number `config-id` answers: 0 for `{}`, a new one per [`set_config`].
    config_id: u64,
    now_ms: Option<i64>,
    kv: HashMap<String, Vec<u8>>,
    kv_cap: Option<usize>,
    contacts: HashMap<(String, String), Contact>,
    logs: Vec<(Level, String)>,
    event_data: Option<String>,
    event_data_calls: usize,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Forgets everything set on this thread: configuration, clock, store,
/// contacts, logs, event data and its call count.
pub fn reset() {
    STATE.with(|s| *s.borrow_mut() = State::default());
}

/// The configuration [`config`](crate::config) returns from now on.
///
/// Each call gives it a new number for the 0.2 `config-id`, never one an
/// earlier call on any thread had, so a configuration parsed and cached
/// before a [`reset`] is not mistaken for this one.
pub fn set_config(config: Value) {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.config = Some(config.to_string());
        s.config_id = id;
    });
}

/// Fixes the clock [`now_ms`](crate::now_ms) reads (it follows the system clock until set).
pub fn set_now_ms(ms: i64) {
    STATE.with(|s| s.borrow_mut().now_ms = Some(ms));
}

/// Caps the key-value store at this many bytes (keys plus values), like the host does.
pub fn set_kv_cap(bytes: usize) {
    STATE.with(|s| s.borrow_mut().kv_cap = Some(bytes));
}

/// Puts a contact into `session_id`'s directory for [`contact`](crate::contact).
pub fn add_contact(session_id: &str, contact: Contact) {
    STATE.with(|s| {
        s.borrow_mut()
            .contacts
            .insert((session_id.to_owned(), contact.jid.clone()), contact)
    });
}

/// The event data [`v2::event_data`](crate::v2::event_data) returns from
/// now on (`{}`, as outside a filter call, until set).
pub fn set_event_data(data: Value) {
    STATE.with(|s| s.borrow_mut().event_data = Some(data.to_string()));
}

/// How often the event data was asked for since the last [`reset`]: the
/// host makes it only on request, so a test can check that a filter
/// leaves it alone when it need not read it.
pub fn event_data_calls() -> usize {
    STATE.with(|s| s.borrow().event_data_calls)
}

/// Every line logged on this thread since the last [`reset`].
pub fn logs() -> Vec<(Level, String)> {
    STATE.with(|s| s.borrow().logs.clone())
}

/// The host functions' native implementation, shaped like the generated imports.
pub(crate) mod double {
    use super::STATE;
    use crate::bindings::switchboard::plugin::types as wit;
    use crate::types::Level;

    pub(crate) fn log(level: wit::LogLevel, message: &str) {
        push_log(level.into(), message);
    }

    fn push_log(level: Level, message: &str) {
        STATE.with(|s| s.borrow_mut().logs.push((level, message.to_owned())));
    }

    pub(crate) fn config() -> String {
        STATE.with(|s| s.borrow().config.clone().unwrap_or_else(|| "{}".into()))
    }

    pub(crate) fn now_ms() -> i64 {
        STATE.with(|s| s.borrow().now_ms).unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or_default()
        })
    }

    pub(crate) fn kv_get(key: &str) -> Option<Vec<u8>> {
        STATE.with(|s| s.borrow().kv.get(key).cloned())
    }

    pub(crate) fn kv_set(key: &str, value: &[u8]) -> Result<(), String> {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(cap) = s.kv_cap {
                let others: usize =
                    s.kv.iter()
                        .filter(|(k, _)| k.as_str() != key)
                        .map(|(k, v)| k.len() + v.len())
                        .sum();
                if others + key.len() + value.len() > cap {
                    return Err(format!("the store's cap of {cap} bytes would be exceeded"));
                }
            }
            s.kv.insert(key.to_owned(), value.to_vec());
            Ok(())
        })
    }

    pub(crate) fn kv_delete(key: &str) {
        STATE.with(|s| s.borrow_mut().kv.remove(key));
    }

    pub(crate) fn contact(session_id: &str, jid: &str) -> Option<wit::Contact> {
        find_contact(session_id, jid).map(Into::into)
    }

    fn find_contact(session_id: &str, jid: &str) -> Option<crate::Contact> {
        STATE.with(|s| {
            s.borrow()
                .contacts
                .get(&(session_id.to_owned(), jid.to_owned()))
                .cloned()
        })
    }

    /// The 0.2 host functions, shaped like the wrapper of `crate::v2`'s
    /// imports (which takes and returns the SDK's types, as the 0.2 WIT
    /// types are other Rust types than the 0.1 ones).
    pub(crate) mod v2 {
        use super::{STATE, find_contact, push_log};
        pub(crate) use super::{config, kv_delete, kv_get, kv_set, now_ms};
        use crate::types::{Contact, Level};

        pub(crate) fn log(level: Level, message: &str) {
            push_log(level, message);
        }

        pub(crate) fn contact(session_id: &str, jid: &str) -> Option<Contact> {
            find_contact(session_id, jid)
        }

        pub(crate) fn config_id() -> u64 {
            STATE.with(|s| s.borrow().config_id)
        }

        pub(crate) fn event_data() -> String {
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                s.event_data_calls += 1;
                s.event_data.clone().unwrap_or_else(|| "{}".into())
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{kv, log};

    #[test]
    fn the_double_keeps_logs_config_and_a_capped_store() {
        reset();
        assert_eq!(crate::config_json(), "{}");
        log(Level::Warn, "careful");
        assert_eq!(logs(), vec![(Level::Warn, "careful".to_owned())]);
        set_kv_cap(10);
        assert_eq!(kv::set("k", b"12345"), Ok(()));
        assert!(kv::set("k2", b"123456").is_err());
        assert_eq!(kv::get("k").as_deref(), Some(&b"12345"[..]));
        kv::delete("k");
        assert_eq!(kv::get("k"), None);
        add_contact(
            "s",
            Contact {
                jid: "1@s.whatsapp.net".into(),
                first_name: Some("Ann".into()),
                ..Contact::default()
            },
        );
        assert_eq!(
            crate::contact("s", "1@s.whatsapp.net")
                .unwrap()
                .first_name
                .as_deref(),
            Some("Ann")
        );
        assert_eq!(crate::contact("other", "1@s.whatsapp.net"), None);
    }

    #[test]
    fn the_0_2_host_functions_share_the_double_with_0_1() {
        reset();
        set_config(serde_json::json!({ "n": 1 }));
        assert_eq!(crate::v2::config_json(), crate::config_json());
        crate::v2::log(Level::Info, "from 0.2");
        crate::v2::warn!("and {}", "a macro");
        assert_eq!(
            logs(),
            vec![
                (Level::Info, "from 0.2".to_owned()),
                (Level::Warn, "and a macro".to_owned())
            ]
        );
        kv::set("k", b"v").unwrap();
        assert_eq!(crate::v2::kv::get("k").as_deref(), Some(&b"v"[..]));
        add_contact(
            "s",
            Contact {
                jid: "1@s.whatsapp.net".into(),
                ..Contact::default()
            },
        );
        assert!(crate::v2::contact("s", "1@s.whatsapp.net").is_some());
    }

    #[test]
    fn event_data_is_an_empty_object_until_set_and_every_fetch_is_counted() {
        reset();
        assert_eq!(crate::v2::event_data_json(), "{}");
        set_event_data(serde_json::json!({ "text": "hi" }));
        let data: Value = crate::v2::event_data().unwrap();
        assert_eq!(data["text"], "hi");
        assert_eq!(event_data_calls(), 2);
        reset();
        assert_eq!(event_data_calls(), 0);
    }
}
