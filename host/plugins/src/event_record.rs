//! The typed event record of the 0.2 contract, made from an envelope: a
//! filter deciding on a message's text gets it as a field, with no JSON to
//! parse in the guest and none to write in the host.
//!
//! The record borrows every string from the envelope and its data, so
//! making it allocates nothing: copying a 1 KB message event's strings out
//! and freeing them again cost about a fifth of a filter call. The
//! generated bindings hold owned strings (wasmtime's borrowing mode does
//! not compile for this package), so [`EventRef`] and [`MessageRef`] are
//! declared here, field for field as in `wit/0.2.0`, and the filter export
//! is typed with them when an instance is made; that type check is what
//! keeps them in step with the WIT.

use serde_json::Value;
use wasmtime::component::{ComponentType, Lower};

use super::engine::v2::types::{Event, Message};
use crate::domain::event::{Envelope, EventName};

/// Record `event` of `switchboard:plugin/types@0.2.0`, borrowing.
#[derive(ComponentType, Lower, Clone, Copy, Debug)]
#[component(record)]
pub struct EventRef<'a> {
    /// The session the event belongs to.
    #[component(name = "session-id")]
    pub session_id: &'a str,
    /// The event name.
    pub event: &'a str,
    /// Unix seconds when the gateway saw the event.
    pub timestamp: i64,
    /// Message events only: redelivered from the disconnect window.
    pub offline: Option<bool>,
    /// Message events only: the typed fields of its data.
    pub message: Option<MessageRef<'a>>,
}

/// Record `message` of `switchboard:plugin/types@0.2.0`, borrowing.
#[derive(ComponentType, Lower, Clone, Copy, Debug)]
#[component(record)]
pub struct MessageRef<'a> {
    /// The message id.
    #[component(name = "message-id")]
    pub message_id: &'a str,
    /// The sender's address.
    pub from: &'a str,
    /// The sender's phone digits.
    #[component(name = "from-phone")]
    pub from_phone: Option<&'a str>,
    /// The chat JID.
    pub chat: &'a str,
    /// The chat's phone digits.
    #[component(name = "chat-phone")]
    pub chat_phone: Option<&'a str>,
    /// The sender JID.
    pub participant: &'a str,
    /// The message type.
    #[component(name = "message-type")]
    pub message_type: &'a str,
    /// The text.
    pub text: Option<&'a str>,
    /// The media caption.
    pub caption: Option<&'a str>,
    /// Sent in a group.
    #[component(name = "is-group")]
    pub is_group: bool,
    /// Sent by the session itself.
    #[component(name = "is-from-me")]
    pub is_from_me: bool,
    /// The sender's own name.
    #[component(name = "push-name")]
    pub push_name: &'a str,
    /// The quoted message's id.
    #[component(name = "quoted-id")]
    pub quoted_id: Option<&'a str>,
    /// The media's MIME type.
    #[component(name = "media-mimetype")]
    pub media_mimetype: Option<&'a str>,
    /// Marked forwarded.
    pub forwarded: bool,
}

impl EventRef<'_> {
    /// The record with owned strings, as the generated bindings of the
    /// integration world take it (off the hot path).
    pub(super) fn into_owned(self) -> Event {
        Event {
            session_id: self.session_id.to_owned(),
            event: self.event.to_owned(),
            timestamp: self.timestamp,
            offline: self.offline,
            message: self.message.map(|m| Message {
                message_id: m.message_id.to_owned(),
                from: m.from.to_owned(),
                from_phone: m.from_phone.map(str::to_owned),
                chat: m.chat.to_owned(),
                chat_phone: m.chat_phone.map(str::to_owned),
                participant: m.participant.to_owned(),
                message_type: m.message_type.to_owned(),
                text: m.text.map(str::to_owned),
                caption: m.caption.map(str::to_owned),
                is_group: m.is_group,
                is_from_me: m.is_from_me,
                push_name: m.push_name.to_owned(),
                quoted_id: m.quoted_id.map(str::to_owned),
                media_mimetype: m.media_mimetype.map(str::to_owned),
                forwarded: m.forwarded,
            }),
        }
    }
}

/// The record a 0.2 filter receives for `env` carrying `data` (`message`
/// set on message events only).
pub(super) fn event_record<'a>(env: &'a Envelope, data: &'a Value) -> EventRef<'a> {
    EventRef {
        session_id: &env.session_id,
        event: env.event.as_str(),
        timestamp: env.timestamp,
        offline: env.offline,
        message: (env.event == EventName::Message).then(|| message_record(data)),
    }
}

/// The typed fields of a message event's data; a field the data lacks (or
/// holds with another JSON type) is empty (strings), `none` (options) or
/// false (flags). One pass over the data's keys, not one lookup per field.
fn message_record(data: &Value) -> MessageRef<'_> {
    let mut m = MessageRef {
        message_id: "",
        from: "",
        from_phone: None,
        chat: "",
        chat_phone: None,
        participant: "",
        message_type: "",
        text: None,
        caption: None,
        is_group: false,
        is_from_me: false,
        push_name: "",
        quoted_id: None,
        media_mimetype: None,
        forwarded: false,
    };
    let Value::Object(fields) = data else {
        return m;
    };
    for (key, value) in fields {
        match value {
            Value::String(s) => {
                let s = s.as_str();
                match key.as_str() {
                    "message_id" => m.message_id = s,
                    "from" => m.from = s,
                    "from_phone" => m.from_phone = Some(s),
                    "chat" => m.chat = s,
                    "chat_phone" => m.chat_phone = Some(s),
                    "participant" => m.participant = s,
                    "message_type" => m.message_type = s,
                    "text" => m.text = Some(s),
                    "caption" => m.caption = Some(s),
                    "push_name" => m.push_name = s,
                    "quoted_message_id" => m.quoted_id = Some(s),
                    "media_mimetype" => m.media_mimetype = Some(s),
                    _ => {}
                }
            }
            Value::Bool(b) => match key.as_str() {
                "is_group" => m.is_group = *b,
                "is_from_me" => m.is_from_me = *b,
                "forwarded" => m.forwarded = *b,
                _ => {}
            },
            _ => {}
        }
    }
    m
}
