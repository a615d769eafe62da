//! The `data` of the events the gateway produces itself (pairing, login and
//! logout, an account lock, an inbound message as the gateway delivers it):
//! typed, so the producer builds exactly what the API document describes.
//! Network-side events are checked against [`super::shape`] instead.

use serde::Serialize;
use serde_json::Value;

use crate::blast::model::JobStatus;

/// `qr_code`: a QR code to scan, replaced by the next one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QrCodeData {
    /// The code to render as a QR image.
    pub code: String,
    /// Unix seconds when this code stops being valid.
    pub expires_at: i64,
}

/// `pair_code`: the code to type on the phone.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PairCodeData {
    /// `ABCD-EFGH`.
    pub code: String,
}

/// `connected`: the session is logged in and online; no fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectedData {}

/// `logged_out`: the account unlinked this device (or was logged out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoggedOutData {
    /// Why.
    pub reason: String,
}

/// `account_locked`: the network locked the account; reconnecting waits out
/// an escalating cooldown.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountLockedData {
    /// The network's reason.
    pub reason: String,
    /// Length of this cooldown, in whole seconds.
    pub cooldown_secs: i64,
    /// Unix seconds when the cooldown ends.
    pub cooldown_until: i64,
    /// Unix seconds when the network says the lock ends (a temporary ban's
    /// expiry; the cooldown is at least that long); `null` when it did not
    /// say.
    pub expires_at: Option<i64>,
    /// Where the network says the account holder can appeal; `null` when it
    /// gave none.
    pub url: Option<String>,
}

/// `reconnect_scheduled`: the session will reconnect by itself, when and
/// why (also the `next_attempt` of its reconnect status).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReconnectScheduledData {
    /// Why it reconnects (after what).
    pub reason: String,
    /// The pause before it, in milliseconds (jitter included).
    pub delay_ms: u64,
    /// Unix milliseconds when it comes.
    pub at_ms: i64,
    /// The consecutive failures that chose the pause.
    pub error_count: u32,
}

/// `reach_out_timelock`: WhatsApp restricts the account from messaging
/// people it has no chat with (its error 463), or lifted the restriction.
/// While it holds, the gateway holds such sends until `until` instead of
/// sending them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReachOutTimelockData {
    /// Whether the lock holds now.
    pub active: bool,
    /// Unix seconds when it ends (the network's time when `stated`, else the
    /// gateway's assumed hold); `null` once lifted.
    pub until: Option<i64>,
    /// Whether WhatsApp stated the end, rather than the gateway assuming one
    /// (`--reach-out-hold-secs`).
    pub stated: bool,
    /// Whole seconds until `until`; `null` once lifted.
    pub retry_after_secs: Option<i64>,
}

/// `storage_failed` and `storage_recovered`: the gateway's store met a
/// storage fault and was reopened. Both are published once the store
/// takes writes again (while it fails, no event can be recorded).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StorageFaultData {
    /// `no_space` (the disk was full) or `io` (another I/O fault).
    pub kind: String,
    /// Unix seconds when the store failed.
    pub failed_at: i64,
    /// `storage_recovered` only: Unix seconds when it took writes again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered_at: Option<i64>,
}

/// `message`: an inbound (or own-device) message. The stored inbound
/// record's `body` is the same object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageData {
    /// The sender as the network gave it (a user JID or an `@lid`; never rewritten).
    pub from: String,
    /// The sender's phone digits, when known.
    pub from_phone: Option<String>,
    /// The chat JID.
    pub chat: String,
    /// The chat's phone digits; always `null` in a group.
    pub chat_phone: Option<String>,
    /// Id of the message this one replies to.
    pub quoted_message_id: Option<String>,
    /// Sender of the quoted message.
    pub quoted_sender_jid: Option<String>,
    /// Whether the sender forwarded it from another chat.
    pub forwarded: bool,
    /// The network's message id.
    pub message_id: String,
    /// Sent by this account from another linked device.
    pub is_from_me: bool,
    /// The sender's display name.
    pub push_name: String,
    /// `text`, `image`, `video`, `audio`, `document`, `sticker`, `location`,
    /// `contact`, `poll`, `reaction`, `interactive`, `interactive_response`,
    /// `buttons_response`, `list_response`, `template_button_reply`, `unknown`;
    /// and the actions on an earlier message, which `quoted_message_id`
    /// names: `revoke` (deleted for everyone), `edit` (its new `text` or
    /// `caption`), `pin` and `unpin`.
    pub message_type: String,
    /// The text; for replies the chosen label (or id); for a poll the question.
    pub text: Option<String>,
    /// A media message's caption.
    pub caption: Option<String>,
    /// A media message's MIME type.
    pub media_mimetype: Option<String>,
    /// The media of a media message (image, video, audio, document,
    /// sticker): its bytes are at its `url`, the gateway's media route.
    pub media: Option<crate::media::MediaObject>,
    /// `{latitude, longitude, name?, address?, is_live?, sequence_number?}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub location: Option<Value>,
    /// Whether the chat is a group.
    pub is_group: bool,
    /// The sender within the chat (equals `from` outside groups).
    pub participant: String,
    /// Button or row id of an interactive reply.
    pub selected_id: Option<String>,
    /// Label of an interactive reply.
    pub selected_text: Option<String>,
    /// Native-flow reply: `{name, params}` with `params` parsed.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub native_flow: Option<Value>,
}

/// `blast_progress` (every 25th successful send) and `blast_completed` (the
/// job reached a terminal state): the job's identity, status and counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlastEventData {
    /// The job id.
    pub job_id: String,
    /// The job's session.
    pub session_id: String,
    /// The send kind (or plugin endpoint) of the job.
    pub endpoint: String,
    /// `running` in progress events; the terminal state when completed.
    pub status: JobStatus,
    /// Recipients in the job.
    pub total: u64,
    /// Sent so far.
    pub sent_count: u64,
    /// Failed so far.
    pub failed_count: u64,
    /// Dead-lettered so far.
    pub dlq_count: u64,
    /// Duplicates skipped.
    pub skipped_dup_count: u64,
    /// `blast_completed` only: when the job ran and why it failed.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub completion: Option<BlastCompletion>,
}

/// What a `blast_completed` event adds to the counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlastCompletion {
    /// ISO-8601 start.
    pub started_at: Option<String>,
    /// ISO-8601 end.
    pub finished_at: Option<String>,
    /// Why a `failed` job failed, else `null`.
    pub reason: Option<String>,
}

/// An event's data as the envelope carries it. The types above hold strings,
/// numbers and JSON values only, which always serialize, so the `Null`
/// fallback is never taken; it keeps a producer from panicking if one ever
/// could not.
pub fn to_data(data: &impl Serialize) -> Value {
    serde_json::to_value(data).unwrap_or(Value::Null)
}
