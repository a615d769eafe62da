//! The typed, validated bodies of every send kind accepted by
//! `POST /api/v1/sessions/{id}/messages/{kind}`.
//!
//! [`SendRequest::from_json`] turns a JSON body into a [`SendRequest`] or the
//! first [`FieldError`] found, whose `field` is a JSON path such as
//! `buttons[1].id` (or `body` for the body as a whole).
//!
//! Rules shared by every kind:
//! - the body is a JSON object with a `to` (a JID or a phone number, see
//!   [`Jid::parse_recipient`]) and the kind's fields; any other field is
//!   rejected, except a top-level `send_at` (string or null) which is removed
//!   and ignored here: scheduling is checked by another layer.
//! - optional fields may be `null`, which means absent.
//! - lengths are counted in Unicode scalar values (`char`s), not bytes.
//! - required text must be non-empty after trimming, but is kept as given;
//!   optional free text (captions, headers, footers, titles, names) that is
//!   empty after trimming is treated as absent. Ids, URLs and MIME types are
//!   stored trimmed; phone numbers and JIDs are stored normalised.
//!
//! The kinds' bodies live in the sibling modules `send_text` (text,
//! reaction), `send_basic` (location, contact, poll), `send_media` (image,
//! video, audio, document) and `send_interactive` (cta-url, buttons, list),
//! and are re-exported here; `send_check` holds the shared checks and the
//! field error, `send_kind` the kinds. Those two are leaves: the body modules
//! name them, never this file.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::jid::Jid;
use super::send_check::json_type;
pub use super::send_check::{FieldError, MAX_URL_CHARS};
pub use super::send_kind::SendKind;
use super::{send_basic, send_interactive, send_media, send_text};

pub use super::send_basic::{ContactBody, ContactCard, LocationBody, PollBody};
pub use super::send_interactive::{
    Button, ButtonsBody, CtaUrlBody, ListBody, ListRow, ListSection,
};
pub use super::send_media::{
    AudioBody, DocumentBody, MAX_AUDIO_BYTES, MAX_DOCUMENT_BYTES, MAX_IMAGE_BYTES, MAX_VIDEO_BYTES,
    MediaBody, MediaSource,
};
pub use super::send_text::{ReactionBody, TextBody};

/// A validated request to send one message.
#[derive(Debug, Clone, PartialEq)]
pub struct SendRequest {
    /// The recipient: a user, group, broadcast list or LID.
    pub to: Jid,
    /// What to send.
    pub content: OutboundContent,
}

impl SendRequest {
    /// Validates `body` as the request of `kind`. `to` is required (JID or
    /// phone, via [`Jid::parse_recipient`]); a top-level `send_at` (string or
    /// null) is accepted and ignored. Returns the first problem found.
    pub fn from_json(kind: SendKind, body: Value) -> Result<SendRequest, FieldError> {
        let Value::Object(mut object) = body else {
            let got = json_type(&body);
            return Err(FieldError::new(
                "body",
                format!("must be a JSON object, not {got}"),
            ));
        };
        match object.remove("send_at") {
            None | Some(Value::Null | Value::String(_)) => {}
            Some(other) => {
                let got = json_type(&other);
                return Err(FieldError::new(
                    "send_at",
                    format!("must be a string or null, not {got}"),
                ));
            }
        }
        let to = match object.get("to") {
            None | Some(Value::Null) => return Err(FieldError::new("to", "is required")),
            Some(Value::String(to)) => {
                Jid::parse_recipient(to).map_err(|e| FieldError::new("to", e.to_string()))?
            }
            Some(other) => {
                let got = json_type(other);
                return Err(FieldError::new(
                    "to",
                    format!("must be a string (a JID or a phone number), not {got}"),
                ));
            }
        };
        let body = Value::Object(object);
        let content = match kind {
            SendKind::Text => OutboundContent::Text(send_text::text(body)?),
            SendKind::Image => OutboundContent::Image(send_media::image(body)?),
            SendKind::Video => OutboundContent::Video(send_media::video(body)?),
            SendKind::Audio => OutboundContent::Audio(send_media::audio(body)?),
            SendKind::Document => OutboundContent::Document(send_media::document(body)?),
            SendKind::Location => OutboundContent::Location(send_basic::location(body)?),
            SendKind::Contact => OutboundContent::Contact(send_basic::contact(body)?),
            SendKind::Poll => OutboundContent::Poll(send_basic::poll(body)?),
            SendKind::Reaction => OutboundContent::Reaction(send_text::reaction(body, &to)?),
            SendKind::CtaUrl => OutboundContent::CtaUrl(send_interactive::cta_url(body)?),
            SendKind::Buttons => OutboundContent::Buttons(send_interactive::buttons(body)?),
            SendKind::List => OutboundContent::List(send_interactive::list(body)?),
        };
        Ok(SendRequest { to, content })
    }

    /// The kind of the content.
    pub fn kind(&self) -> SendKind {
        self.content.kind()
    }
}

impl Serialize for SendRequest {
    /// Serializes as `{"kind": "text", "to": "<jid>", "content": {…}}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("kind", &self.kind())?;
        map.serialize_entry("to", &self.to)?;
        map.serialize_entry("content", &self.content)?;
        map.end()
    }
}

/// The validated content of a message, one variant per [`SendKind`].
///
/// Serializes as the inner body alone (no `to`, no kind tag); media given as
/// `data` serializes as `"data": {"bytes": <decoded length>}`, never the bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OutboundContent {
    /// See [`TextBody`].
    Text(TextBody),
    /// See [`MediaBody`].
    Image(MediaBody),
    /// See [`MediaBody`].
    Video(MediaBody),
    /// See [`AudioBody`].
    Audio(AudioBody),
    /// See [`DocumentBody`].
    Document(DocumentBody),
    /// See [`LocationBody`].
    Location(LocationBody),
    /// See [`ContactBody`].
    Contact(ContactBody),
    /// See [`PollBody`].
    Poll(PollBody),
    /// See [`ReactionBody`].
    Reaction(ReactionBody),
    /// See [`CtaUrlBody`].
    CtaUrl(CtaUrlBody),
    /// See [`ButtonsBody`].
    Buttons(ButtonsBody),
    /// See [`ListBody`].
    List(ListBody),
}

impl OutboundContent {
    /// Where a media send's bytes come from; `None` for other kinds.
    pub fn media_source(&self) -> Option<&MediaSource> {
        match self {
            Self::Image(b) | Self::Video(b) => Some(&b.source),
            Self::Audio(b) => Some(&b.source),
            Self::Document(b) => Some(&b.source),
            _ => None,
        }
    }

    /// The kind of this content.
    pub fn kind(&self) -> SendKind {
        match self {
            OutboundContent::Text(_) => SendKind::Text,
            OutboundContent::Image(_) => SendKind::Image,
            OutboundContent::Video(_) => SendKind::Video,
            OutboundContent::Audio(_) => SendKind::Audio,
            OutboundContent::Document(_) => SendKind::Document,
            OutboundContent::Location(_) => SendKind::Location,
            OutboundContent::Contact(_) => SendKind::Contact,
            OutboundContent::Poll(_) => SendKind::Poll,
            OutboundContent::Reaction(_) => SendKind::Reaction,
            OutboundContent::CtaUrl(_) => SendKind::CtaUrl,
            OutboundContent::Buttons(_) => SendKind::Buttons,
            OutboundContent::List(_) => SendKind::List,
        }
    }

    /// The main text, for logs and records: the text of text and interactive
    /// messages, a media caption, a location's name (or address), the first
    /// contact's name, a poll's question, a reaction's emoji (`None` when the
    /// reaction is removed). `None` for audio.
    pub fn preview(&self) -> Option<&str> {
        match self {
            OutboundContent::Text(b) => Some(&b.text),
            OutboundContent::Image(b) | OutboundContent::Video(b) => b.caption.as_deref(),
            OutboundContent::Audio(_) => None,
            OutboundContent::Document(b) => b.caption.as_deref(),
            OutboundContent::Location(b) => b.name.as_deref().or(b.address.as_deref()),
            OutboundContent::Contact(b) => b.contacts.first().map(|c| c.name.as_str()),
            OutboundContent::Poll(b) => Some(&b.question),
            OutboundContent::Reaction(b) => (!b.emoji.is_empty()).then_some(b.emoji.as_str()),
            OutboundContent::CtaUrl(b) => Some(&b.text),
            OutboundContent::Buttons(b) => Some(&b.text),
            OutboundContent::List(b) => Some(&b.text),
        }
    }
}

/// The request body of each send kind as it arrives on the wire, for the
/// OpenAPI document (`api::openapi::send_bodies`).
pub mod wire {
    pub use super::super::send_basic::{ContactWire, LocationWire, PollWire};
    pub use super::super::send_interactive::{ButtonsWire, CtaUrlWire, ListWire};
    #[cfg(feature = "openapi")]
    pub use super::super::send_media::media_schema;
    pub use super::super::send_media::{AudioWire, DocumentWire, VisualWire};
    pub use super::super::send_text::{ReactionWire, TextWire};
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field_of(kind: SendKind, body: Value) -> String {
        SendRequest::from_json(kind, body).unwrap_err().field
    }

    #[test]
    fn every_kind_round_trips_through_its_url_spelling() {
        for kind in SendKind::ALL {
            assert_eq!(SendKind::parse(kind.as_str()), Some(kind));
            assert_eq!(kind.to_string(), kind.as_str());
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(kind.as_str()));
            assert_eq!(
                serde_json::from_value::<SendKind>(json!(kind.as_str())).unwrap(),
                kind
            );
        }
        assert_eq!(SendKind::CtaUrl.as_str(), "cta-url");
        assert_eq!(SendKind::parse("cta_url"), None);
        assert_eq!(SendKind::parse("Text"), None);
    }

    #[test]
    fn a_body_that_is_not_an_object_is_rejected_as_body() {
        for body in [json!([]), json!("hi"), json!(null)] {
            let err = SendRequest::from_json(SendKind::Text, body).unwrap_err();
            assert_eq!(err.field, "body");
        }
    }

    #[test]
    fn send_at_is_accepted_and_ignored() {
        for send_at in [json!("2030-01-01T00:00:00Z"), json!(null)] {
            let body = json!({"to": "12345", "text": "hi", "send_at": send_at});
            let request = SendRequest::from_json(SendKind::Text, body).unwrap();
            assert_eq!(request.content.preview(), Some("hi"));
        }
        assert_eq!(
            field_of(
                SendKind::Text,
                json!({"to": "12345", "text": "hi", "send_at": 5})
            ),
            "send_at"
        );
    }

    #[test]
    fn to_as_bare_phone_is_normalised_to_a_user_jid() {
        let body = json!({"to": "+49 (30) 1234-5678", "text": "hallo"});
        let request = SendRequest::from_json(SendKind::Text, body).unwrap();
        assert_eq!(request.to.to_string(), "493012345678@s.whatsapp.net");
        assert_eq!(request.kind(), SendKind::Text);
    }

    #[test]
    fn to_that_is_missing_invalid_or_not_a_string_is_named() {
        for to in [
            json!("hello"),
            json!(12345),
            json!(null),
            json!("1@example.com"),
        ] {
            assert_eq!(
                field_of(SendKind::Text, json!({"to": to, "text": "hi"})),
                "to"
            );
        }
        let err = SendRequest::from_json(SendKind::Poll, json!({"question": "?"})).unwrap_err();
        assert_eq!(err.to_string(), "`to`: is required");
    }

    #[test]
    fn an_unknown_field_is_rejected_by_name_with_the_known_fields() {
        let body = json!({"to": "12345", "text": "hi", "colour": "red"});
        let err = SendRequest::from_json(SendKind::Text, body).unwrap_err();
        assert_eq!(err.field, "colour");
        assert!(
            err.message.contains("`to`") && err.message.contains("`mentions`"),
            "{err}"
        );
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        let err =
            SendRequest::from_json(SendKind::Text, json!({"to": "12345", "text": 5})).unwrap_err();
        assert_eq!(err.field, "text");
        assert!(err.message.contains("expected a string"), "{err}");
        let body = json!({"to": "12345", "latitude": "north", "longitude": 0});
        let err = SendRequest::from_json(SendKind::Location, body).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.message.contains("a number")),
            ("latitude", true)
        );
    }

    #[test]
    fn a_request_serializes_with_kind_to_and_the_bare_content() {
        let body = json!({"to": "12345@c.us", "text": "hi", "send_at": null});
        let request = SendRequest::from_json(SendKind::Text, body).unwrap();
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"kind": "text", "to": "12345@s.whatsapp.net", "content": {"text": "hi"}})
        );
    }
}
