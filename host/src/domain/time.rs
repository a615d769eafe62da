//! Clock helpers: the API speaks integer Unix seconds unless a field says ISO-8601.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as integer Unix seconds.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The current time as Unix milliseconds (used where ordering within a second matters).
pub fn unix_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
