//! Bodies of the send kinds about text and other messages: text (with
//! quotes and mentions) and reaction.
//!
//! Each `fn <kind>` takes the request body (an object still holding `to`,
//! without `send_at`) and returns the validated body or the first
//! [`FieldError`]. The shared rules are in the `send` module's docs.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::jid::{Jid, JidKind};
use super::send_check::FieldError;
use super::send_check::{at, count, decode, id, required_text};

/// Longest `text` of a text message, in characters.
pub const MAX_TEXT_CHARS: usize = 65_536;
/// Most `mentions` in a text message.
pub const MAX_MENTIONS: usize = 1024;
/// Longest message id (`quoted_message_id`, a reaction's `message_id`).
pub const MAX_MESSAGE_ID_CHARS: usize = 256;
/// Longest non-empty reaction `emoji`, in characters (a ZWJ family is up to 11).
pub const MAX_EMOJI_CHARS: usize = 16;

/// A text message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextBody {
    /// The text, as given; non-empty after trimming, at most 65,536 characters.
    pub text: String,
    /// Id of the message this one replies to (trimmed, at most 256 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quoted_message_id: Option<String>,
    /// Users mentioned (user or LID JIDs, at most 1024); empty when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<Jid>,
}

/// The body of a `text` send.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendText))]
pub struct TextWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// The text, as given; not blank, at most 65,536 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 65536, pattern = r"[^\s\x85]")
    )]
    text: String,
    /// Id of the message this one replies to; not blank, at most 256 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")
    )]
    quoted_message_id: Option<String>,
    /// Users mentioned: phone numbers, user JIDs or LIDs (at most 1024).
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<Vec<crate::address_schema::UserAddress>>, max_items = 1024)
    )]
    mentions: Option<Vec<String>>,
}

/// Validates a `text` body.
pub(super) fn text(body: Value) -> Result<TextBody, FieldError> {
    let wire: TextWire = decode(body)?;
    let text = required_text("text", wire.text, MAX_TEXT_CHARS)?;
    let quoted_message_id = match wire.quoted_message_id {
        Some(q) => Some(id("quoted_message_id", &q, MAX_MESSAGE_ID_CHARS)?),
        None => None,
    };
    let mentions = wire.mentions.unwrap_or_default();
    count("mentions", mentions.len(), 0, MAX_MENTIONS)?;
    let mentions = mentions
        .iter()
        .enumerate()
        .map(|(i, m)| person(&at("mentions", i), m))
        .collect::<Result<_, _>>()?;
    Ok(TextBody {
        text,
        quoted_message_id,
        mentions,
    })
}

/// A person's JID: a user JID, phone number or LID; not a group or broadcast.
fn person(field: &str, value: &str) -> Result<Jid, FieldError> {
    let jid = Jid::parse_recipient(value).map_err(|e| FieldError::new(field, e.to_string()))?;
    match jid.kind() {
        JidKind::User | JidKind::Lid => Ok(jid),
        JidKind::Group | JidKind::Broadcast => Err(FieldError::new(
            field,
            "must be a user JID, LID or phone number, not a group or broadcast",
        )),
    }
}

/// An emoji reaction to an earlier message, or the removal of ours.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReactionBody {
    /// Id of the message reacted to (trimmed, at most 256 characters).
    pub message_id: String,
    /// The emoji (at most 16 characters, not only whitespace); `""` removes
    /// our earlier reaction. Not checked to be an emoji.
    pub emoji: String,
    /// Whether the message reacted to was sent by us; default false.
    pub from_me: bool,
    /// Author of the message reacted to, in a group (user JID or LID). Only
    /// allowed when `to` is a group; recommended there when `from_me` is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participant: Option<Jid>,
}

impl ReactionBody {
    /// Whether this removes our reaction instead of setting one.
    pub fn is_removal(&self) -> bool {
        self.emoji.is_empty()
    }
}

/// The body of a `reaction` send; an empty `emoji` removes the reaction.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendReaction))]
pub struct ReactionWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Id of the message reacted to; not blank, at most 256 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")
    )]
    message_id: String,
    /// The emoji: at most 16 characters, not only whitespace; `""` removes
    /// our earlier reaction.
    #[cfg_attr(
        feature = "openapi",
        schema(schema_with = super::send_check::schema::emoji)
    )]
    emoji: String,
    /// Whether the message reacted to was sent by us; default false.
    from_me: Option<bool>,
    /// Author of the message reacted to, in a group: a phone number, user
    /// JID or LID. Only when `to` is a group.
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<crate::address_schema::UserAddress>)
    )]
    participant: Option<String>,
}

/// Validates a `reaction` body sent to `to`.
pub(super) fn reaction(body: Value, to: &Jid) -> Result<ReactionBody, FieldError> {
    let wire: ReactionWire = decode(body)?;
    let message_id = id("message_id", &wire.message_id, MAX_MESSAGE_ID_CHARS)?;
    if !wire.emoji.is_empty() {
        required_text("emoji", wire.emoji.clone(), MAX_EMOJI_CHARS).map_err(|e| {
            FieldError::new(
                e.field,
                format!("{}; use \"\" to remove the reaction", e.message),
            )
        })?;
    }
    let participant = match wire.participant {
        Some(_) if !to.is_group() => {
            return Err(FieldError::new(
                "participant",
                "is only allowed when `to` is a group",
            ));
        }
        Some(p) => Some(person("participant", &p)?),
        None => None,
    };
    Ok(ReactionBody {
        message_id,
        emoji: wire.emoji,
        from_me: wire.from_me.unwrap_or(false),
        participant,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::send::{OutboundContent, SendKind, SendRequest};
    use super::*;

    fn send(kind: SendKind, body: Value) -> Result<OutboundContent, FieldError> {
        SendRequest::from_json(kind, body).map(|r| r.content)
    }

    fn field(kind: SendKind, body: Value) -> String {
        send(kind, body).unwrap_err().field
    }

    #[test]
    fn text_with_quote_and_mentions_parses_and_normalises_mentions() {
        let body = json!({"to": "12345", "text": "hi @bob", "quoted_message_id": " ABC ",
                          "mentions": ["+1 555 000 1111", "99@lid"]});
        let Ok(OutboundContent::Text(t)) = send(SendKind::Text, body) else {
            panic!()
        };
        assert_eq!(t.quoted_message_id.as_deref(), Some("ABC"));
        assert_eq!(t.mentions[0].to_string(), "15550001111@s.whatsapp.net");
        assert_eq!(t.mentions[1].to_string(), "99@lid");
    }

    #[test]
    fn text_that_is_blank_too_long_or_mentions_a_group_is_rejected() {
        assert_eq!(
            field(SendKind::Text, json!({"to": "12345", "text": "  "})),
            "text"
        );
        let long = "a".repeat(MAX_TEXT_CHARS + 1);
        assert_eq!(
            field(SendKind::Text, json!({"to": "12345", "text": long})),
            "text"
        );
        let body = json!({"to": "12345", "text": "x", "mentions": ["12345", "1@g.us"]});
        assert_eq!(field(SendKind::Text, body), "mentions[1]");
        let body = json!({"to": "12345", "text": "x", "quoted_message_id": ""});
        assert_eq!(field(SendKind::Text, body), "quoted_message_id");
    }

    #[test]
    fn reaction_parses_and_empty_emoji_removes_it() {
        let body =
            json!({"to": "1@g.us", "message_id": "M1", "emoji": "👍", "participant": "12345"});
        let Ok(OutboundContent::Reaction(r)) = send(SendKind::Reaction, body) else {
            panic!()
        };
        assert_eq!(
            (r.emoji.as_str(), r.from_me, r.is_removal()),
            ("👍", false, false)
        );
        assert_eq!(
            r.participant.map(|p| p.to_string()).as_deref(),
            Some("12345@s.whatsapp.net")
        );
        let body = json!({"to": "12345", "message_id": "M1", "emoji": "", "from_me": true});
        let Ok(content) = send(SendKind::Reaction, body) else {
            panic!()
        };
        assert_eq!(content.preview(), None);
    }

    #[test]
    fn reaction_with_bad_fields_is_rejected_by_field() {
        let body = json!({"to": "12345", "emoji": "👍"});
        assert_eq!(field(SendKind::Reaction, body), "message_id");
        let body = json!({"to": "12345", "message_id": "M", "emoji": "👍", "participant": "12345"});
        assert_eq!(field(SendKind::Reaction, body), "participant");
        let body = json!({"to": "12345", "message_id": "M", "emoji": "👍".repeat(17)});
        assert_eq!(field(SendKind::Reaction, body), "emoji");
        let body = json!({"to": "12345", "message_id": "M", "emoji": " "});
        assert_eq!(field(SendKind::Reaction, body), "emoji");
    }
}
