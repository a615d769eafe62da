//! The typed event record of the 0.2 contract, made from an envelope: a
//! filter deciding on a message's text gets it as a field, with no JSON to
//! parse in the guest and none to write in the host.

use serde_json::Value;

use super::engine::v2::types::{Event, Message};
use crate::domain::event::{Envelope, EventName};

/// The record a 0.2 filter receives for `env` carrying `data` (`message`
/// set on message events only).
pub(super) fn event_record(env: &Envelope, data: &Value) -> Event {
    Event {
        session_id: env.session_id.clone(),
        event: env.event.as_str().to_owned(),
        timestamp: env.timestamp,
        offline: env.offline,
        message: (env.event == EventName::Message).then(|| message_record(data)),
    }
}

/// The typed fields of a message event's data; a field the data lacks is
/// empty (strings), `none` (options) or false (flags).
fn message_record(data: &Value) -> Message {
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_owned);
    let flag = |k: &str| data.get(k).and_then(Value::as_bool).unwrap_or(false);
    Message {
        message_id: text("message_id").unwrap_or_default(),
        from: text("from").unwrap_or_default(),
        from_phone: text("from_phone"),
        chat: text("chat").unwrap_or_default(),
        chat_phone: text("chat_phone"),
        participant: text("participant").unwrap_or_default(),
        message_type: text("message_type").unwrap_or_default(),
        text: text("text"),
        caption: text("caption"),
        is_group: flag("is_group"),
        is_from_me: flag("is_from_me"),
        push_name: text("push_name").unwrap_or_default(),
        quoted_id: text("quoted_message_id"),
        media_mimetype: text("media_mimetype"),
        forwarded: flag("forwarded"),
    }
}
