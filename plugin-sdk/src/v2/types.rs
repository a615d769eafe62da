//! The event a 0.2 filter sees: [`Event`], with the typed fields of a
//! message in [`Message`]. The rest of the event's data is not part of it;
//! [`event_data`](crate::v2::event_data) fetches it when a filter needs it.

use serde::{Deserialize, Serialize};

/// An event as an event filter sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Event {
    /// The session the event belongs to.
    pub session_id: String,
    /// The event name (`message`, `receipt`, …).
    pub event: String,
    /// Unix seconds when the gateway saw the event.
    pub timestamp: i64,
    /// Message events only: redelivered from the disconnect window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    /// Message events only: the typed fields of its data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// The fields of a `message` event a filter most often decides on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Message {
    /// The message id.
    pub message_id: String,
    /// The sender's address as the network uses it (may be an `@lid`).
    pub from: String,
    /// The sender's phone digits, when known.
    #[serde(default)]
    pub from_phone: Option<String>,
    /// The chat JID (a group JID for group chats).
    pub chat: String,
    /// The chat's phone digits, when known; none for a group.
    #[serde(default)]
    pub chat_phone: Option<String>,
    /// The sender JID.
    pub participant: String,
    /// `text`, `image`, `location`, `interactive_response`, ….
    pub message_type: String,
    /// The text, when the message has one.
    #[serde(default)]
    pub text: Option<String>,
    /// The media caption, when it has one.
    #[serde(default)]
    pub caption: Option<String>,
    /// Sent in a group.
    pub is_group: bool,
    /// Sent by the session itself (from another device of the account).
    pub is_from_me: bool,
    /// The name the sender set for itself.
    pub push_name: String,
    /// The quoted message's id, on a reply.
    #[serde(default)]
    pub quoted_id: Option<String>,
    /// The media's MIME type, on a media message.
    #[serde(default)]
    pub media_mimetype: Option<String>,
    /// Marked forwarded by the sender's app.
    pub forwarded: bool,
}

impl Message {
    /// The words of the message a reader sees: its text and its caption,
    /// whichever it has (a media message may carry both), in that order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        [self.text.as_deref(), self.caption.as_deref()]
            .into_iter()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_the_text_then_the_caption_when_present() {
        let mut m = Message {
            caption: Some("a photo".into()),
            ..Message::default()
        };
        assert_eq!(m.texts().collect::<Vec<_>>(), ["a photo"]);
        m.text = Some("hi".into());
        assert_eq!(m.texts().collect::<Vec<_>>(), ["hi", "a photo"]);
    }
}
