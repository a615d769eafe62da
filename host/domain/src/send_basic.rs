//! Bodies of the plain send kinds: location, contact and poll.
//!
//! Each `fn <kind>` takes the request body (an object still holding `to`,
//! without `send_at`) and returns the validated body or the first
//! [`FieldError`]. The shared rules are in the `send` module's docs.

use std::collections::HashMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::jid::Jid;
use super::send_check::FieldError;
use super::send_check::{at, count, decode, http_url, id, join, optional_text, required_text};

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

/// The body of a `location` send.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendLocation))]
pub struct LocationWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// Degrees north, from -90 to 90.
    #[cfg_attr(feature = "openapi", schema(minimum = -90, maximum = 90))]
    latitude: f64,
    /// Degrees east, from -180 to 180.
    #[cfg_attr(feature = "openapi", schema(minimum = -180, maximum = 180))]
    longitude: f64,
    /// The place's name (at most 1024 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 1024))]
    name: Option<String>,
    /// The place's address (at most 1024 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 1024))]
    address: Option<String>,
    /// A web page about the place: an absolute http/https URL.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 2048,
            pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s\x00-\x1f\x7f-\x9f/?#@:\[\]]+(?::[0-9]{1,5})?(?:[/?#][^\s\x00-\x1f\x7f-\x9f]*)?$"
        )
    )]
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

/// The body of a `contact` send: one or more cards.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendContact))]
pub struct ContactWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// 1 to 20 cards.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 20))]
    contacts: Vec<CardWire>,
}

/// A contact card.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, expecting = "an object")]
#[cfg_attr(feature = "openapi", schema(as = ContactCardIn))]
pub struct CardWire {
    /// Display name; not blank, at most 256 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")
    )]
    name: String,
    /// Phone number.
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::PhoneNumber)
    )]
    phone: String,
    /// Company (at most 256 characters).
    #[cfg_attr(feature = "openapi", schema(max_length = 256))]
    organization: Option<String>,
    /// E-mail address, `local@domain` (at most 254 characters).
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 254,
            pattern = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f]+$"
        )
    )]
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

/// The body of a `poll` send: 2 to 12 options.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SendPoll))]
pub struct PollWire {
    /// The recipient: a phone number or a JID (user, group, `@lid` or broadcast).
    #[serde(rename = "to")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = crate::address_schema::ChatAddress)
    )]
    _to: IgnoredAny,
    /// The question; not blank, at most 255 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 255, pattern = r"[^\s\x85]")
    )]
    question: String,
    /// 2 to 12 options; each not blank, at most 100 characters, and unique
    /// after trimming.
    #[cfg_attr(
        feature = "openapi",
        schema(schema_with = super::send_check::schema::poll_options)
    )]
    options: Vec<String>,
    /// How many options a voter may pick: 1 (default) to the number of options.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 12))]
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
            return Err(FieldError::new(
                field,
                format!("repeats `options[{first}]`"),
            ));
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
    fn location_within_range_parses_and_out_of_range_is_rejected() {
        let body = json!({"to": "12345", "latitude": -33.86, "longitude": 151, "name": "Opera"});
        let Ok(OutboundContent::Location(l)) = send(SendKind::Location, body) else {
            panic!()
        };
        assert_eq!(
            (l.latitude, l.longitude, l.name.as_deref()),
            (-33.86, 151.0, Some("Opera"))
        );
        let body = json!({"to": "12345", "latitude": 90.5, "longitude": 0});
        assert_eq!(field(SendKind::Location, body), "latitude");
        let body = json!({"to": "12345", "latitude": 0, "longitude": -180.1});
        assert_eq!(field(SendKind::Location, body), "longitude");
        let body = json!({"to": "12345", "latitude": 0, "longitude": 0, "url": "nope"});
        assert_eq!(field(SendKind::Location, body), "url");
    }

    #[test]
    fn contact_phone_is_normalised_and_bad_cards_are_named() {
        let body = json!({"to": "12345", "contacts": [
            {"name": "Ann", "phone": "+44 7911 123456", "email": " ann@example.com "}]});
        let Ok(OutboundContent::Contact(c)) = send(SendKind::Contact, body) else {
            panic!()
        };
        assert_eq!(c.contacts[0].phone, "447911123456");
        assert_eq!(c.contacts[0].email.as_deref(), Some("ann@example.com"));
        let card = json!({"name": "Ann", "phone": "12345"});
        let bad_phone = json!({"name": "Bob", "phone": "call me"});
        let body = json!({"to": "12345", "contacts": [card, bad_phone]});
        assert_eq!(field(SendKind::Contact, body), "contacts[1].phone");
        let body =
            json!({"to": "12345", "contacts": [{"name": "Ann", "phone": "12345", "email": "x"}]});
        assert_eq!(field(SendKind::Contact, body), "contacts[0].email");
        assert_eq!(
            field(SendKind::Contact, json!({"to": "12345", "contacts": []})),
            "contacts"
        );
        let many: Vec<_> = (0..=MAX_CONTACTS).map(|_| card.clone()).collect();
        assert_eq!(
            field(SendKind::Contact, json!({"to": "12345", "contacts": many})),
            "contacts"
        );
    }

    #[test]
    fn poll_defaults_to_one_choice_and_rejects_repeats_and_bad_counts() {
        let body = json!({"to": "1@g.us", "question": "Lunch?", "options": ["Pizza", "Sushi"]});
        let Ok(OutboundContent::Poll(p)) = send(SendKind::Poll, body) else {
            panic!()
        };
        assert_eq!((p.selectable_count, p.options.len()), (1, 2));
        let body = json!({"to": "12345", "question": "?", "options": ["A", "B", " A "]});
        assert_eq!(field(SendKind::Poll, body), "options[2]");
        let body =
            json!({"to": "12345", "question": "?", "options": ["A", "a"], "selectable_count": 3});
        assert_eq!(field(SendKind::Poll, body), "selectable_count");
        let body = json!({"to": "12345", "question": "?", "options": ["A"]});
        assert_eq!(field(SendKind::Poll, body), "options");
        let body =
            json!({"to": "12345", "question": "?", "options": ["A", "B"], "selectable_count": -1});
        assert_eq!(field(SendKind::Poll, body), "selectable_count");
    }
}
