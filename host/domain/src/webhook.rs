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
    /// How deliveries are signed (webhooks stored before it existed use the
    /// gateway's own scheme).
    #[serde(default)]
    pub signature_scheme: SignatureScheme,
}

/// How a webhook's deliveries are signed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureScheme {
    /// The gateway's own headers: `X-Webhook-Signature` (`sha256=` HMAC of
    /// `<timestamp>.<body>`), `X-Webhook-Timestamp`, `X-Webhook-Signature-Version: v2`.
    #[default]
    Switchboard,
    /// The Standard Webhooks specification: `webhook-id`, `webhook-timestamp`
    /// and `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`,
    /// keyed by a `whsec_` secret, so receivers verify with the maintained
    /// `standardwebhooks` libraries.
    Standard,
}

impl SignatureScheme {
    /// The name used in the API (`switchboard` or `standard`).
    pub fn as_str(self) -> &'static str {
        match self {
            SignatureScheme::Switchboard => "switchboard",
            SignatureScheme::Standard => "standard",
        }
    }
}

/// Why a delivery was dead-lettered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DlqReason {
    /// Its attempts failed (all of them, or one that cannot succeed on retry).
    #[default]
    Failed,
    /// Its URL had more deliveries pending than the backlog limit; the
    /// oldest were moved here to make room.
    BacklogFull,
}

/// A delivery owed to one URL, kept durably (the webhook outbox) from the
/// commit of its event until it succeeds or is dead-lettered. The payload is
/// stored beside it, as bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingDelivery {
    /// Stable across retries, restarts and replays: the receiver's dedup key.
    pub delivery_id: String,
    /// The event's session.
    pub session_id: String,
    /// The webhook it is for (a DLQ replay may outlive its webhook).
    pub webhook_id: Option<String>,
    /// The destination.
    pub url: String,
    /// The signing secret, if any.
    pub secret: Option<String>,
    /// How it is signed.
    #[serde(default)]
    pub signature_scheme: SignatureScheme,
    /// The event name.
    pub event: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// Unix milliseconds before which the next attempt is not made (0: at once).
    pub next_attempt_at: i64,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// Unix milliseconds when the delivery was recorded.
    pub created_at: i64,
    /// The single probe of a suspended URL: dead-lettered on failure.
    #[serde(default)]
    pub probe: bool,
    /// Replayed from the DLQ: delivered to its stored URL even if the webhook is gone.
    #[serde(default)]
    pub replayed: bool,
}

impl PendingDelivery {
    /// A first delivery of an event to a destination that is not a
    /// webhook (the broker, an integration plugin): no secret, no
    /// signature, nothing attempted yet.
    pub fn to_destination(
        delivery_id: String,
        session_id: &str,
        url: String,
        event: &str,
        created_at: i64,
    ) -> PendingDelivery {
        PendingDelivery {
            delivery_id,
            session_id: session_id.to_owned(),
            webhook_id: None,
            url,
            secret: None,
            signature_scheme: Default::default(),
            event: event.to_owned(),
            attempts: 0,
            next_attempt_at: 0,
            last_error: None,
            created_at,
            probe: false,
            replayed: false,
        }
    }
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
    /// Why it was dead-lettered (entries stored before it existed: `failed`).
    #[serde(default)]
    pub reason: DlqReason,
    /// The signing scheme captured at failure time, used on replay.
    #[serde(default)]
    pub signature_scheme: SignatureScheme,
}
