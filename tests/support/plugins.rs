//! The plugin components the end-to-end tests load, built from source by
//! `tests/build.rs` (`plugins/` for Rust, `plugins/python-*` for Python,
//! `plugins/js-keyword-filter` for JavaScript): absolute paths fixed at
//! compile time, and a reader.

use std::path::Path;

/// Event filter: keeps or drops `message` events by keywords/patterns
/// (`{keywords, patterns?, mode: "keep"|"drop"}`).
pub const KEYWORD_ROUTER: &str = env!("SWITCHBOARD_PLUGIN_KEYWORD_ROUTER");
/// 0.2 event filter (Rust): keeps message events whose text or caption holds
/// one of `keywords`; `tag` adds `matched_keyword` to the full data.
pub const KEYWORD_FILTER: &str = env!("SWITCHBOARD_PLUGIN_KEYWORD_FILTER");
/// 0.2 integration: forwards each incoming message to `endpoint` and sends
/// its `reply` back to the chat.
pub const BOT_BRIDGE: &str = env!("SWITCHBOARD_PLUGIN_BOT_BRIDGE");
/// Event filter: masks runs of 7+ digits in event data (a `replace`).
pub const REDACTOR: &str = env!("SWITCHBOARD_PLUGIN_REDACTOR");
/// Message transform: appends `footer` to text sends, rejects `banned_words`.
pub const FOOTER: &str = env!("SWITCHBOARD_PLUGIN_FOOTER");
/// Blast endpoint `greeting`: job body `{template: "Hello {name}!"}`.
pub const GREETING: &str = env!("SWITCHBOARD_PLUGIN_GREETING");
/// Hostile: its filter loops forever.
pub const HOSTILE_LOOP: &str = env!("SWITCHBOARD_PLUGIN_HOSTILE_LOOP");
/// Hostile: its filter allocates until it dies.
pub const HOSTILE_MEMORY: &str = env!("SWITCHBOARD_PLUGIN_HOSTILE_MEMORY");
/// Hostile: its filter panics (traps) on every call.
pub const HOSTILE_TRAP: &str = env!("SWITCHBOARD_PLUGIN_HOSTILE_TRAP");
/// 0.2 event filter for tests: replaces the data with `{"record": …}`, the
/// typed record it was handed.
pub const RECORD_ECHO: &str = env!("SWITCHBOARD_PLUGIN_RECORD_ECHO");
/// Python (componentize-py) event filter: upper-cases message text (a `replace`).
pub const PYTHON_SHOUTER: &str = env!("SWITCHBOARD_PLUGIN_PYTHON_SHOUTER");
/// Python (componentize-py) event filter, contract 0.2: keeps message events
/// containing one of `keywords`, drops other messages; `tag: true` adds
/// `matched_keyword` to a kept message's data (a `replace`).
pub const PYTHON_KEYWORD_FILTER: &str = env!("SWITCHBOARD_PLUGIN_PYTHON_KEYWORD_FILTER");
/// JavaScript (ComponentizeJS) twin of `PYTHON_KEYWORD_FILTER`, contract 0.2.
pub const JS_KEYWORD_FILTER: &str = env!("SWITCHBOARD_PLUGIN_JS_KEYWORD_FILTER");

/// Every plugin above: (name, path).
pub const ALL: &[(&str, &str)] = &[
    ("keyword-router", KEYWORD_ROUTER),
    ("keyword-filter", KEYWORD_FILTER),
    ("bot-bridge", BOT_BRIDGE),
    ("redactor", REDACTOR),
    ("footer", FOOTER),
    ("greeting", GREETING),
    ("hostile-loop", HOSTILE_LOOP),
    ("hostile-memory", HOSTILE_MEMORY),
    ("hostile-trap", HOSTILE_TRAP),
    ("record-echo", RECORD_ECHO),
    ("python-shouter", PYTHON_SHOUTER),
    ("python-keyword-filter", PYTHON_KEYWORD_FILTER),
    ("js-keyword-filter", JS_KEYWORD_FILTER),
];

/// The bytes of a component, e.g. `bytes(plugins::FOOTER)`.
#[track_caller]
pub fn bytes(path: impl AsRef<Path>) -> Vec<u8> {
    let path = path.as_ref();
    std::fs::read(path).unwrap_or_else(|e| {
        panic!(
            "plugin component {} is missing ({e}); tests/build.rs builds it: \
             `touch plugins/Cargo.toml` and run the tests again",
            path.display()
        )
    })
}
