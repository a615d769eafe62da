//! Bodies of the plain send kinds: text, location, contact, poll and reaction.
//!
//! Each `fn <kind>` takes the request body (an object still holding `to`,
//! without `send_at`) and returns the validated body or the first
//! [`FieldError`]. The shared rules are in the `send` module's docs.

use std::collections::HashMap;

use serde::Deserialize;
use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::jid::{Jid, JidKind};
use super::send::FieldError;
use super::send_check::{at, count, decode, http_url, id, join, optional_text, required_text};

/// Longest `text` of a text message, in characters.
pub const MAX_TEXT_CHARS: usize = 65_536;
/// Most `mentions` in a text message.
pub const MAX_MENTIONS: usize = 1024;
/// Longest message id (`quoted_message_id`, a reaction's `message_id`).
pub const MAX_MESSAGE_ID_CHARS: usize = 256;
/// Longest location `name` or `address`, in characters.
pub const MAX_LOCATION_TEXT_CHARS: usize = 1024;
/// Most cards in a contact message.
pub const MAX_CONTACTS: usize = 20;
/// Longest contact `name` or `organization`, in characters.
pub const MAX_CONTACT_TEXT_CHARS: usize = 256;
/// Longest contact `email`, in characters.
pub const MAX_EMAIL_CHARS: usize = 254;
/// Longest poll `question`, in characters.
pub const MAX_POLL_QUESTION_CHARS: usize = 255;
/// Fewest and most poll `options`.
pub const POLL_OPTIONS: (usize, usize) = (2, 12);
/// Longest poll option, in characters.
pub const MAX_POLL_OPTION_CHARS: usize = 100;
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    text: String,
    quoted_message_id: Option<String>,
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

/// A point on the map.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocationBody {
    /// Degrees north, in [-90, 90].
    pub latitude: f64,
    /// Degrees east, in [-180, 180].
    pub longitude: f64,
    /// The place's name (at most 1024 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The place's address (at most 1024 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// A web page about the place (absolute http/https URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocationWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    latitude: f64,
    longitude: f64,
    name: Option<String>,
    address: Option<String>,
    url: Option<String>,
}

/// Validates a `location` body.
pub(super) fn location(body: Value) -> Result<LocationBody, FieldError> {
    let wire: LocationWire = decode(body)?;
    for (field, value, limit) in [
        ("latitude", wire.latitude, 90.0),
        ("longitude", wire.longitude, 180.0),
    ] {
        if !value.is_finite() || value.abs() > limit {
            return Err(FieldError::new(
                field,
                format!("must be a number from -{limit} to {limit}"),
            ));
        }
    }
    Ok(LocationBody {
        latitude: wire.latitude,
        longitude: wire.longitude,
        name: optional_text("name", wire.name, MAX_LOCATION_TEXT_CHARS)?,
        address: optional_text("address", wire.address, MAX_LOCATION_TEXT_CHARS)?,
        url: match wire.url.filter(|u| !u.trim().is_empty()) {
            Some(url) => Some(http_url("url", &url)?),
            None => None,
        },
    })
}

/// One or more contact cards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContactBody {
    /// 1 to 20 cards.
    pub contacts: Vec<ContactCard>,
}

/// One contact card.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContactCard {
    /// Display name; non-empty, at most 256 characters.
    pub name: String,
    /// Phone number as digits only, no `+` (normalised like [`Jid::user`]).
    pub phone: String,
    /// Company (at most 256 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// E-mail address: `local@domain`, no whitespace, at most 254 characters; trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContactWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    contacts: Vec<CardWire>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object")]
struct CardWire {
    name: String,
    phone: String,
    organization: Option<String>,
    email: Option<String>,
}

/// Validates a `contact` body.
pub(super) fn contact(body: Value) -> Result<ContactBody, FieldError> {
    let wire: ContactWire = decode(body)?;
    count("contacts", wire.contacts.len(), 1, MAX_CONTACTS)?;
    let mut contacts = Vec::with_capacity(wire.contacts.len());
    for (i, card) in wire.contacts.into_iter().enumerate() {
        let base = at("contacts", i);
        let phone = Jid::user(&card.phone).map_err(|e| {
            FieldError::new(
                join(&base, "phone"),
                format!("is not a valid phone number: {}", e.reason),
            )
        })?;
        let email = match card
            .email
            .as_deref()
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            Some(email) => Some(check_email(&join(&base, "email"), email)?),
            None => None,
        };
        contacts.push(ContactCard {
            name: required_text(&join(&base, "name"), card.name, MAX_CONTACT_TEXT_CHARS)?,
            phone: phone.user_part().to_owned(),
            organization: optional_text(
                &join(&base, "organization"),
                card.organization,
                MAX_CONTACT_TEXT_CHARS,
            )?,
            email,
        });
    }
    Ok(ContactBody { contacts })
}

fn check_email(field: &str, email: &str) -> Result<String, FieldError> {
    let email = id(field, email, MAX_EMAIL_CHARS)?;
    let well_formed = matches!(email.split_once('@'), Some((local, domain))
        if !local.is_empty() && !domain.is_empty() && !domain.contains('@'))
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if !well_formed {
        return Err(FieldError::new(
            field,
            "must be an e-mail address like `name@example.com`",
        ));
    }
    Ok(email)
}

/// A poll.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PollBody {
    /// The question; non-empty, at most 255 characters.
    pub question: String,
    /// 2 to 12 options as given; each non-empty, at most 100 characters, and
    /// unique after trimming (case matters).
    pub options: Vec<String>,
    /// How many options a voter may pick: 1 (default) to the number of options.
    pub selectable_count: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PollWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    question: String,
    options: Vec<String>,
    selectable_count: Option<u32>,
}

/// Validates a `poll` body.
pub(super) fn poll(body: Value) -> Result<PollBody, FieldError> {
    let wire: PollWire = decode(body)?;
    let question = required_text("question", wire.question, MAX_POLL_QUESTION_CHARS)?;
    count(
        "options",
        wire.options.len(),
        POLL_OPTIONS.0,
        POLL_OPTIONS.1,
    )?;
    let mut seen = HashMap::new();
    for (i, option) in wire.options.iter().enumerate() {
        let field = at("options", i);
        required_text(&field, option.clone(), MAX_POLL_OPTION_CHARS)?;
        if let Some(first) = seen.insert(option.trim(), i) {
            return Err(FieldError::new(field, format!("repeats options[{first}]")));
        }
    }
    let selectable_count = wire.selectable_count.unwrap_or(1);
    if selectable_count == 0 || selectable_count as usize > wire.options.len() {
        return Err(FieldError::new(
            "selectable_count",
            format!(
                "must be from 1 to {} (the number of options)",
                wire.options.len()
            ),
        ));
    }
    Ok(PollBody {
        question,
        options: wire.options,
        selectable_count,
    })
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReactionWire {
    #[serde(rename = "to")]
    _to: IgnoredAny,
    message_id: String,
    emoji: String,
    from_me: Option<bool>,
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

    fn send(kind: SendKind, body: serde_json::Value) -> Result<OutboundContent, String> {
        SendRequest::from_json(kind, body)
            .map(|r| r.content)
            .map_err(|e| e.field)
    }
}
