//! The plugin components the end-to-end tests load, built from source by
//! `tests/build.rs` (`plugins/` for Rust, `plugins/python-shouter` for
//! Python): absolute paths fixed at compile time, and a reader.

use std::path::Path;

/// Event filter: keeps or drops `message` events by keywords/patterns
/// (`{keywords, patterns?, mode: "keep"|"drop"}`).
pub const KEYWORD_ROUTER: &str = env!("SWITCHBOARD_PLUGIN_KEYWORD_ROUTER");
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
/// Python (componentize-py) event filter: upper-cases message text (a `replace`).
pub const PYTHON_SHOUTER: &str = env!("SWITCHBOARD_PLUGIN_PYTHON_SHOUTER");

/// Every plugin above: (name, path).
pub const ALL: &[(&str, &str)] = &[
    ("keyword-router", KEYWORD_ROUTER),
    ("redactor", REDACTOR),
    ("footer", FOOTER),
    ("greeting", GREETING),
    ("hostile-loop", HOSTILE_LOOP),
    ("hostile-memory", HOSTILE_MEMORY),
    ("hostile-trap", HOSTILE_TRAP),
    ("python-shouter", PYTHON_SHOUTER),
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
