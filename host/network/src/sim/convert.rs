//! How the simulated network turns a message one session sent into the inbound
//! message another session receives — the part a real network does with
//! protobufs. Works on the body as delivered (its JSON form), so it follows the
//! send kinds without restating their fields.

use serde_json::{Value, json};

use crate::InboundMessage;
use crate::domain::media::NetworkMedia;
use crate::domain::send::{OutboundContent, SendKind};

/// The sender side of a delivery.
pub struct Sender<'a> {
    /// The sender's user JID.
    pub jid: &'a str,
    /// The sender's push name.
    pub push_name: &'a str,
}

/// Builds what the recipient of `content` receives. `chat` is the chat JID as
/// seen by the recipient (the sender's JID for a direct message).
pub fn to_inbound(
    sender: &Sender<'_>,
    chat: &str,
    content: &OutboundContent,
    message_id: &str,
    timestamp: i64,
    media: Option<&NetworkMedia>,
) -> InboundMessage {
    let body = serde_json::to_value(content).unwrap_or(Value::Null);
    let s = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut msg = InboundMessage {
        message_id: message_id.to_owned(),
        from: sender.jid.to_owned(),
        chat: chat.to_owned(),
        participant: sender.jid.to_owned(),
        push_name: sender.push_name.to_owned(),
        timestamp,
        ..InboundMessage::default()
    };
    let kind = content.kind();
    match kind {
        SendKind::Text => {
            msg.message_type = "text".into();
            msg.text = s("text");
            msg.quoted_message_id = s("quoted_message_id");
        }
        SendKind::Image | SendKind::Video | SendKind::Audio | SendKind::Document => {
            msg.message_type = kind.as_str().into();
            msg.caption = s("caption");
            msg.media_mimetype = s("mimetype").or_else(|| Some(default_mimetype(kind).into()));
            msg.media = media.cloned();
        }
        SendKind::Location => {
            msg.message_type = "location".into();
            msg.location = Some(json!({
                "latitude": body.get("latitude").cloned().unwrap_or(Value::Null),
                "longitude": body.get("longitude").cloned().unwrap_or(Value::Null),
                "name": s("name").unwrap_or_default(),
                "address": s("address").unwrap_or_default(),
                "url": s("url").unwrap_or_default(),
                "is_live": false,
            }));
        }
        SendKind::Contact => {
            msg.message_type = "contact".into();
            msg.text = Some(vcards(&body));
        }
        SendKind::Poll => {
            msg.message_type = "poll".into();
            msg.text = s("question");
        }
        SendKind::Reaction => {
            msg.message_type = "reaction".into();
            msg.text = s("emoji");
            msg.quoted_message_id = s("message_id");
        }
        SendKind::CtaUrl | SendKind::Buttons | SendKind::List => {
            msg.message_type = "interactive".into();
            msg.text = s("text");
        }
    }
    msg
}

fn default_mimetype(kind: SendKind) -> &'static str {
    match kind {
        SendKind::Image => "image/jpeg",
        SendKind::Video => "video/mp4",
        SendKind::Audio => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

/// The contacts of a contact message as vCard 3.0 text, one card per contact.
fn vcards(body: &Value) -> String {
    let contacts = body.get("contacts").and_then(Value::as_array);
    contacts
        .into_iter()
        .flatten()
        .map(|c| {
            let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
            let phone = c.get("phone").and_then(Value::as_str).unwrap_or_default();
            format!(
                "BEGIN:VCARD\nVERSION:3.0\nFN:{name}\nTEL;type=CELL;waid={phone}:+{phone}\nEND:VCARD"
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
