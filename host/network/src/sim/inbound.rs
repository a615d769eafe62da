//! What the control API injects as an inbound message, and the sim's rules
//! that turn it into what the network would have decoded: the defaults a
//! real message would carry (its type, the sender's push name, a message id),
//! and the checks a real message could not fail (a text message has text, a
//! location has coordinates, a sender's phone goes only with an `@lid`).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{DecodedMedia, SimNetwork};
use crate::InboundMessage;
use crate::domain::jid::{Jid, JidKind};
use crate::domain::media::MediaKind;
use crate::domain::send::FieldError;
use crate::domain::time::unix_now;
use crate::store::SimUser;

/// An inbound message to deliver, as the control API's body
/// (`POST /api/v1/sim/sessions/{id}/inbound`) gives it.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(as = SimInboundIn))]
pub struct SimInbound {
    /// The sender: a phone number or a JID (`…@lid` too).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::domain::address_schema::ChatAddress))]
    pub from: String,
    /// The chat, when not the sender's own (a group).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::domain::address_schema::ChatAddress>))]
    pub chat: Option<String>,
    /// One of the message types the sim can deliver; by default `text` (or what `location`/`native_flow` imply).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<SimMessageType>))]
    pub message_type: Option<String>,
    /// The text (required for `text`).
    pub text: Option<String>,
    /// A media caption.
    pub caption: Option<String>,
    /// The sender's name; by default a registered user's, else the phone.
    pub push_name: Option<String>,
    /// The message id; by default one the sim generates.
    pub message_id: Option<String>,
    /// The message this one replies to.
    pub quoted_message_id: Option<String>,
    /// The author of the quoted message.
    pub quoted_sender_jid: Option<String>,
    /// Marked as forwarded from another chat.
    pub forwarded: Option<bool>,
    /// `{latitude, longitude, …}` of a location message.
    pub location: Option<Value>,
    /// The chosen option of a response message.
    pub selected_id: Option<String>,
    /// The chosen option's text.
    pub selected_text: Option<String>,
    /// `{name, params}` of an interactive response; `params` may be a JSON string, as on the wire.
    pub native_flow: Option<Value>,
    /// Delivered as if queued while the session was offline.
    pub offline: Option<bool>,
    /// The media's MIME type.
    pub media_mimetype: Option<String>,
    /// The media of an image, video, audio, document or sticker message
    /// (required for those types): its bytes and what the sender declares.
    pub media: Option<super::SimMediaIn>,
    /// The sender's phone, carried beside an `@lid` sender as some messages do.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::domain::address_schema::PhoneNumber>))]
    pub sender_phone: Option<String>,
    /// Deliver the message twice in a row (exercises the gateway's dedup).
    pub duplicate: Option<bool>,
}

/// The message types the sim delivers, for the API document: a string
/// schema whose values are [`MESSAGE_TYPES`].
#[cfg(feature = "openapi")]
pub struct SimMessageType;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for SimMessageType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(MESSAGE_TYPES.iter().copied()))
            .description(Some("A message type the simulated network can deliver."))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for SimMessageType {}

/// The message types the sim delivers.
const MESSAGE_TYPES: &[&str] = &[
    "text",
    "image",
    "video",
    "audio",
    "document",
    "sticker",
    "location",
    "contact",
    "poll",
    "reaction",
    "interactive",
    "interactive_response",
    "buttons_response",
    "list_response",
    "template_button_reply",
    "unknown",
];

impl SimNetwork {
    /// Turns the control body into what the network would have decoded; a
    /// field that makes no sense is an error naming it.
    /// The media, if any, is checked and decoded here and put on the sim's
    /// media servers by [`SimNetwork::stage_media`].
    pub fn build_inbound(
        &self,
        b: SimInbound,
    ) -> Result<(InboundMessage, Option<DecodedMedia>), FieldError> {
        let from = jid_field("from", &b.from)?;
        let chat = match &b.chat {
            Some(c) => jid_field("chat", c)?,
            None => from.clone(),
        };
        let message_type = match b.message_type {
            Some(t) if MESSAGE_TYPES.contains(&t.as_str()) => t,
            Some(t) => {
                return Err(FieldError::new(
                    "message_type",
                    format!("`{t}` is not one of {}", MESSAGE_TYPES.join(", ")),
                ));
            }
            None if b.location.is_some() => "location".into(),
            None if b.native_flow.is_some() => "interactive_response".into(),
            None => "text".into(),
        };
        if message_type == "text" && b.text.as_deref().is_none_or(str::is_empty) {
            return Err(FieldError::new("text", "is required for a text message"));
        }
        if let Some(loc) = &b.location {
            let ok = |k: &str| {
                loc.get(k)
                    .and_then(Value::as_f64)
                    .is_some_and(f64::is_finite)
            };
            if !ok("latitude") || !ok("longitude") {
                return Err(FieldError::new(
                    "location",
                    "needs numeric `latitude` and `longitude`",
                ));
            }
        }
        let is_media = MediaKind::of_message_type(&message_type).is_some();
        let media = match b.media {
            Some(m) if is_media => Some(m.decode(b.media_mimetype.clone())?),
            Some(_) => {
                return Err(FieldError::new(
                    "media",
                    "goes only with an image, video, audio, document or sticker message",
                ));
            }
            None if is_media => {
                return Err(FieldError::new(
                    "media",
                    format!("is required for a {message_type} message"),
                ));
            }
            None => None,
        };
        let native_flow = b.native_flow.map(parse_native_flow).transpose()?;
        let from_phone = match &b.sender_phone {
            None => None,
            Some(_) if from.kind() != JidKind::Lid => {
                return Err(FieldError::new(
                    "sender_phone",
                    "only goes with a sender given as an `@lid`",
                ));
            }
            Some(p) => Some(
                Jid::user(p)
                    .map_err(|e| FieldError::new("sender_phone", e.to_string()))?
                    .user_part()
                    .to_owned(),
            ),
        };
        let push_name = match b.push_name {
            Some(p) => p,
            None => registered_user(self, &from)
                .and_then(|u| u.push_name)
                .or_else(|| from.phone().map(str::to_owned))
                .unwrap_or_default(),
        };
        let selected_id = b.selected_id.or_else(|| {
            (message_type == "interactive_response")
                .then(|| native_flow.as_ref()?.pointer("/params/id")?.as_str())
                .flatten()
                .map(str::to_owned)
        });
        let text = b.text.or_else(|| {
            matches!(
                message_type.as_str(),
                "interactive_response"
                    | "buttons_response"
                    | "list_response"
                    | "template_button_reply"
            )
            .then(|| b.selected_text.clone().or_else(|| selected_id.clone()))
            .flatten()
        });
        let message = InboundMessage {
            message_id: b.message_id.unwrap_or_else(|| self.next_message_id()),
            participant: from.to_string(),
            from: from.to_string(),
            from_phone,
            chat: chat.to_string(),
            is_from_me: false,
            push_name,
            message_type,
            text,
            caption: b.caption,
            media_mimetype: b.media_mimetype,
            media: None,
            location: b.location,
            quoted_message_id: b.quoted_message_id,
            quoted_sender_jid: b.quoted_sender_jid,
            forwarded: b.forwarded.unwrap_or(false),
            selected_id,
            selected_text: b.selected_text,
            native_flow,
            timestamp: unix_now(),
            offline: b.offline.unwrap_or(false),
        };
        Ok((message, media))
    }
}

/// The registered outside user a sender is, by phone or by lid. Found by lid,
/// it gives its push name only: the network does not reveal the phone.
fn registered_user(sim: &SimNetwork, from: &Jid) -> Option<SimUser> {
    match from.kind() {
        JidKind::User => sim.user(from.user_part()).ok().flatten(),
        JidKind::Lid => sim.user_by_lid(&from.to_string()).ok().flatten(),
        _ => None,
    }
}

/// A native-flow reply carries its params as a JSON string on the wire; the
/// event carries them parsed.
fn parse_native_flow(v: Value) -> Result<Value, FieldError> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| FieldError::new("native_flow.name", "is required"))?;
    let params = match v.get("params") {
        Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
            FieldError::new("native_flow.params", format!("is not a JSON document: {e}"))
        })?,
        Some(p) => p.clone(),
        None => json!({}),
    };
    Ok(json!({ "name": name, "params": params }))
}

fn jid_field(field: &str, value: &str) -> Result<Jid, FieldError> {
    Jid::parse_recipient(value).map_err(|e| FieldError::new(field, e.to_string()))
}
