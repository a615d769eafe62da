//! Logging: human-readable lines by default, JSON lines on request.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber. `filter` is a level or directive list;
/// an invalid one falls back to `info` with a warning.
pub fn init(filter: &str, format: LogFormat) {
    let (env_filter, bad) = match EnvFilter::try_new(filter) {
        Ok(f) => (f, false),
        Err(_) => (EnvFilter::new("info"), true),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_target(false)
        // Colour codes only for a person at a terminal: a file, a pipe or a
        // log shipper gets plain text it can search.
        .with_ansi(std::io::stdout().is_terminal());
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    if installed.is_ok() && bad {
        tracing::warn!(filter, "invalid log filter; using `info`");
    }
}
