//! The `data` shapes of network-side events: which events a network (or the
//! simulated network's control API) may deliver, and the fields each one must
//! carry. Extra fields pass through untouched; a field is named in errors as a
//! path such as `data.pinned`. The data of the gateway's own events is typed
//! in [`own`].

use serde_json::Value;

use super::event::EventName;
use super::send::FieldError;

pub mod own;
mod shapes;
pub use shapes::{CALL_ACTIONS, HISTORY_SYNC_TYPES, RECEIPT_TYPES, shape};

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A string.
    Str,
    /// A string or `null`.
    StrOrNull,
    /// A boolean.
    Bool,
    /// An integer.
    Int,
    /// An integer or `null`.
    IntOrNull,
    /// A number or `null`.
    NumOrNull,
    /// An array of strings.
    StrArray,
    /// An array of integers.
    IntArray,
    /// An array of objects (their fields are described in docs/api.md).
    ObjectArray,
    /// One of these strings.
    OneOf(&'static [&'static str]),
}

impl FieldType {
    fn accepts(self, v: &Value) -> bool {
        match self {
            FieldType::Str => v.is_string(),
            FieldType::StrOrNull => v.is_string() || v.is_null(),
            FieldType::Bool => v.is_boolean(),
            FieldType::Int => v.is_i64() || v.is_u64(),
            FieldType::IntOrNull => v.is_i64() || v.is_u64() || v.is_null(),
            FieldType::NumOrNull => v.is_number() || v.is_null(),
            FieldType::StrArray => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            FieldType::IntArray => v
                .as_array()
                .is_some_and(|a| a.iter().all(|x| x.is_i64() || x.is_u64())),
            FieldType::ObjectArray => v.as_array().is_some_and(|a| a.iter().all(Value::is_object)),
            FieldType::OneOf(values) => v.as_str().is_some_and(|s| values.contains(&s)),
        }
    }

    fn describe(self) -> String {
        match self {
            FieldType::Str => "a string".into(),
            FieldType::StrOrNull => "a string or null".into(),
            FieldType::Bool => "a boolean".into(),
            FieldType::Int => "an integer".into(),
            FieldType::IntOrNull => "an integer or null".into(),
            FieldType::NumOrNull => "a number or null".into(),
            FieldType::StrArray => "an array of strings".into(),
            FieldType::IntArray => "an array of integers".into(),
            FieldType::ObjectArray => "an array of objects".into(),
            FieldType::OneOf(values) => format!("one of {}", values.join(", ")),
        }
    }
}

/// One field of an event's data.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The field name.
    pub name: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// Whether it must be present (a required `…OrNull` field may be `null`).
    pub required: bool,
}

/// Whether a network may deliver this event as-is. Not `message` (a message
/// is decoded, deduplicated and enriched), not the lifecycle events the
/// gateway produces itself (`qr_code`, `pair_code`, `connected`,
/// `logged_out`, `account_locked`, whose cooldown is the gateway's, and
/// `reach_out_timelock`, whose hold is) and
/// not the blast and storage events.
pub fn network_side(event: EventName) -> bool {
    !matches!(
        event,
        EventName::Message
            | EventName::QrCode
            | EventName::PairCode
            | EventName::Connected
            | EventName::LoggedOut
            | EventName::AccountLocked
            | EventName::ReachOutTimelock
            | EventName::ReconnectScheduled
            | EventName::BlastProgress
            | EventName::BlastCompleted
            | EventName::StorageFailed
            | EventName::StorageRecovered
    )
}

/// Checks an event's data: an object whose fields of [`shape`] are present
/// when required and of the right type.
pub fn validate(event: EventName, data: &Value) -> Result<(), FieldError> {
    let obj = data
        .as_object()
        .ok_or_else(|| FieldError::new("data", "must be a JSON object"))?;
    for f in shape(event) {
        match obj.get(f.name) {
            None if f.required => {
                return Err(FieldError::new(
                    format!("data.{}", f.name),
                    format!("is required for `{event}` ({})", f.ty.describe()),
                ));
            }
            Some(v) if !f.ty.accepts(v) => {
                return Err(FieldError::new(
                    format!("data.{}", f.name),
                    format!("must be {}", f.ty.describe()),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field_of(event: EventName, data: Value) -> String {
        validate(event, &data).unwrap_err().field
    }

    #[test]
    fn thirty_nine_events_are_network_side() {
        let count = EventName::ALL.iter().filter(|e| network_side(**e)).count();
        assert_eq!(count, 39);
        assert!(!network_side(EventName::AccountLocked));
        assert!(!network_side(EventName::Message));
        assert!(!network_side(EventName::BlastCompleted));
        assert!(network_side(EventName::Disconnected));
    }

    #[test]
    fn data_must_be_an_object() {
        assert_eq!(field_of(EventName::ClientOutdated, json!([])), "data");
        assert!(validate(EventName::ClientOutdated, &json!({})).is_ok());
    }

    #[test]
    fn a_pin_update_needs_a_chat_and_a_boolean_pinned() {
        let ok = json!({ "chat_jid": "1@s.whatsapp.net", "pinned": true });
        assert!(validate(EventName::PinUpdate, &ok).is_ok());
        assert_eq!(
            field_of(
                EventName::PinUpdate,
                json!({ "chat_jid": "x", "pinned": "yes" })
            ),
            "data.pinned"
        );
        assert_eq!(
            field_of(EventName::PinUpdate, json!({ "pinned": false })),
            "data.chat_jid"
        );
    }

    #[test]
    fn a_required_nullable_field_may_be_null_but_not_missing() {
        let ok = json!({ "error": "e", "rejection": null, "throttled": false, "retry_after_seconds": null });
        assert!(validate(EventName::PairingCodeError, &ok).is_ok());
        let with_number = json!({ "error": "e", "rejection": "RateOverlimit", "throttled": true, "retry_after_seconds": 2.5 });
        assert!(validate(EventName::PairingCodeError, &with_number).is_ok());
        let missing = json!({ "error": "e", "throttled": false, "retry_after_seconds": null });
        assert_eq!(
            field_of(EventName::PairingCodeError, missing),
            "data.rejection"
        );
    }

    #[test]
    fn integers_are_told_apart_from_other_numbers() {
        let data = json!({ "chat": "c", "sender": "s", "message_id": "m", "enc_index": 1.5, "enc_type": "pkmsg", "reason": "r" });
        assert_eq!(
            field_of(EventName::EncDecryptFailed, data),
            "data.enc_index"
        );
    }

    #[test]
    fn optional_fields_are_checked_only_when_present_and_extra_fields_pass() {
        let ok = json!({ "jid": "1@s.whatsapp.net", "available": false, "extra": 1 });
        assert!(validate(EventName::Presence, &ok).is_ok());
        let bad = json!({ "jid": "1@s.whatsapp.net", "available": false, "last_seen": "now" });
        assert_eq!(field_of(EventName::Presence, bad), "data.last_seen");
    }

    #[test]
    fn enumerated_strings_are_checked() {
        let data = json!({ "message_ids": ["A"], "chat": "c", "sender": "s", "type": "seen", "timestamp": 1 });
        assert_eq!(field_of(EventName::Receipt, data), "data.type");
        let data = json!({ "chat": "c", "sender": "s", "state": "recording" });
        assert_eq!(field_of(EventName::ChatPresence, data), "data.state");
        let data = json!({ "call_id": "C", "from": "f", "action": "ring", "timestamp": 1 });
        assert_eq!(field_of(EventName::Call, data), "data.action");
    }

    #[test]
    fn arrays_of_objects_hold_objects_only() {
        let ok =
            json!({ "jid": "1@newsletter", "messages": [{ "server_id": 1, "reactions": [] }] });
        assert!(validate(EventName::NewsletterLiveUpdate, &ok).is_ok());
        let bad = json!({ "jid": "1@newsletter", "messages": [1] });
        assert_eq!(
            field_of(EventName::NewsletterLiveUpdate, bad),
            "data.messages"
        );
    }

    #[test]
    fn a_history_sync_carries_counts_that_may_be_null() {
        let ok = json!({ "sync_type": "recent", "chunk_order": null, "progress": 40, "conversations": null, "messages": null });
        assert!(validate(EventName::HistorySync, &ok).is_ok());
        let missing =
            json!({ "sync_type": "recent", "chunk_order": 1, "progress": 40, "messages": 3 });
        assert_eq!(
            field_of(EventName::HistorySync, missing),
            "data.conversations"
        );
    }
}
