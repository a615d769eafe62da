//! `record-echo`, a test component for world `event-filter-plugin` of
//! contract 0.2: it replaces each event's data with `{"record": …}`, the
//! typed record its filter was handed, field for field. The host copies
//! that record into the plugin's memory by hand (for speed), so a test
//! compares what arrives with the event it came from, for every field.

use switchboard_plugin_sdk::register_plugin;
use switchboard_plugin_sdk::v2::{Event, EventFilter, FilterDecision, json};

/// The plugin.
pub struct RecordEcho;

impl EventFilter for RecordEcho {
    const NAME: &'static str = "record-echo";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn filter(event: Event) -> FilterDecision {
        match serde_json::to_value(&event) {
            Ok(record) => FilterDecision::Replace(json!({ "record": record })),
            // An `Event` always serialises; were it not to, the event goes
            // through as it was and the test sees no record.
            Err(_) => FilterDecision::Keep,
        }
    }
}

register_plugin!(v2 event_filter: RecordEcho);
