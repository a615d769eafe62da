//! What is stored about webhooks and dead-lettered deliveries.

use serde::{Deserialize, Serialize};

use crate::event::EventName;

/// A registered webhook of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Webhook {
    /// UUID v4.
    pub id: String,
    /// The session whose events it receives.
    pub session_id: String,
    /// Where deliveries are POSTed.
    pub url: String,
    /// Subscribed event names; `all` means every event.
    pub events: Vec<String>,
    /// HMAC-SHA256 secret; deliveries are signed when set.
    pub secret: Option<String>,
    /// True on registration; never turned off automatically.
    pub enabled: bool,
    /// Unix seconds of registration.
    pub created_at: i64,
}

impl Webhook {
    /// Whether the webhook subscribes to `event`.
    pub fn wants(&self, event: EventName) -> bool {
        self.events
            .iter()
            .any(|e| e == "all" || e == event.as_str())
    }
}

/// A delivery that used all its attempts (or could not be attempted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DlqEntry {
    /// UUID v4 of the entry.
    pub id: String,
    /// The session of the event.
    pub session_id: String,
    /// The webhook it was for, when it still existed.
    pub webhook_id: Option<String>,
    /// The URL it was for.
    pub webhook_url: String,
    /// The event name.
    pub event: String,
    /// The verbatim serialized envelope that failed.
    pub payload: String,
    /// Why the last attempt failed.
    pub last_error: String,
    /// Attempts made.
    pub attempts: u32,
    /// Unix seconds of dead-lettering.
    pub failed_at: i64,
    /// The secret captured at failure time, used on replay (never listed).
    pub secret: Option<String>,
    /// The delivery id, kept across retries and replays of one event.
    pub delivery_id: String,
}
