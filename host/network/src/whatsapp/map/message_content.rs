//! What a message says: its type, text, caption, media, location, the quoted
//! message, and the selection of a button or list reply. Wrappers
//! (ephemeral, view-once, edits, device-sent copies) are peeled first.
//! Media messages (image, video and video note, audio, document, sticker)
//! become a [`crate::domain::media::NetworkMedia`] through `super::media`,
//! with the handle a later download uses.

use serde_json::{Value, json};
use wa::__buffa::oneof::message::buttons_response_message::Response as ButtonsResponse;
use wa::__buffa::oneof::message::interactive_response_message::InteractiveResponseMessage as Reply;
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::whatsapp as wa;

use super::media::{Fields, network_media};
use crate::InboundMessage;
use crate::domain::media::MediaKind;

/// The fields every media proto shares, as [`Fields`] with the
/// kind-specific ones unset (each branch sets its own).
macro_rules! fields {
    ($x:expr) => {
        Fields {
            mimetype: &$x.mimetype,
            file_sha256: &$x.file_sha256,
            file_enc_sha256: &$x.file_enc_sha256,
            media_key: &$x.media_key,
            direct_path: &$x.direct_path,
            file_length: $x.file_length,
            width: None,
            height: None,
            seconds: None,
            ptt: None,
            filename: None,
            view_once: false,
        }
    };
}

/// Fills `m`'s content fields from `message`.
pub fn fill(m: &mut InboundMessage, message: &wa::Message) {
    let view_once = message.is_view_once();
    let b = message.get_base_message();
    let context = if let Some(t) = b.conversation.as_ref().filter(|t| !t.is_empty()) {
        m.message_type = "text".into();
        m.text = Some(t.clone());
        None
    } else if let Some(x) = b.extended_text_message.as_option() {
        m.message_type = "text".into();
        m.text = x.text.clone();
        x.context_info.as_option()
    } else if let Some(x) = b.image_message.as_option() {
        let f = Fields {
            width: x.width,
            height: x.height,
            view_once: view_once || x.view_once.unwrap_or(false),
            ..fields!(x)
        };
        media(m, MediaKind::Image, &x.mimetype, &x.caption, &f);
        x.context_info.as_option()
    } else if let Some(x) = b.video_message.as_option().or(b.ptv_message.as_option()) {
        // A video note (`ptv`) is a video the app shows round.
        let f = Fields {
            width: x.width,
            height: x.height,
            seconds: x.seconds,
            view_once: view_once || x.view_once.unwrap_or(false),
            ..fields!(x)
        };
        media(m, MediaKind::Video, &x.mimetype, &x.caption, &f);
        x.context_info.as_option()
    } else if let Some(x) = b.audio_message.as_option() {
        let f = Fields {
            seconds: x.seconds,
            ptt: x.ptt,
            view_once: view_once || x.view_once.unwrap_or(false),
            ..fields!(x)
        };
        media(m, MediaKind::Audio, &x.mimetype, &None, &f);
        x.context_info.as_option()
    } else if let Some(x) = b.document_message.as_option() {
        let f = Fields {
            filename: x.file_name.as_deref(),
            ..fields!(x)
        };
        media(m, MediaKind::Document, &x.mimetype, &x.caption, &f);
        x.context_info.as_option()
    } else if let Some(x) = b.sticker_message.as_option() {
        let f = Fields {
            width: x.width,
            height: x.height,
            ..fields!(x)
        };
        media(m, MediaKind::Sticker, &x.mimetype, &None, &f);
        x.context_info.as_option()
    } else if let Some(x) = b.location_message.as_option() {
        m.message_type = "location".into();
        m.location = Some(location(x));
        x.context_info.as_option()
    } else if let Some(x) = b.live_location_message.as_option() {
        m.message_type = "live_location".into();
        m.location = Some(live_location(x));
        x.context_info.as_option()
    } else if let Some(x) = b.buttons_response_message.as_option() {
        m.message_type = "buttons_response".into();
        let label = match &x.response {
            Some(ButtonsResponse::SelectedDisplayText(t)) => Some(t.clone()),
            _ => None,
        };
        selection(m, x.selected_button_id.clone(), label);
        x.context_info.as_option()
    } else if let Some(x) = b.list_response_message.as_option() {
        m.message_type = "list_response".into();
        let id = x
            .single_select_reply
            .as_option()
            .and_then(|r| r.selected_row_id.clone());
        selection(m, id, x.title.clone());
        x.context_info.as_option()
    } else if let Some(x) = b.template_button_reply_message.as_option() {
        m.message_type = "template_button_reply".into();
        selection(m, x.selected_id.clone(), x.selected_display_text.clone());
        x.context_info.as_option()
    } else if let Some(x) = b.interactive_response_message.as_option() {
        m.message_type = "interactive_response".into();
        interactive(m, x);
        x.context_info.as_option()
    } else if let Some(x) = b.interactive_message.as_option() {
        // Buttons, a list or a URL button someone sent: the body is its text
        // (the sim's `interactive` has the same shape).
        m.message_type = "interactive".into();
        m.text = x.body.as_option().and_then(|b| b.text.clone());
        x.context_info.as_option()
    } else if let Some(x) = b.reaction_message.as_option() {
        m.message_type = "reaction".into();
        m.text = x.text.clone();
        m.quoted_message_id = x.key.as_option().and_then(|k| k.id.clone());
        // In a group the key names the target's author: without it a
        // reaction to one member's message cannot be told from another's.
        m.quoted_sender_jid = x
            .key
            .as_option()
            .and_then(|k| k.participant.clone())
            .filter(|p| !p.is_empty());
        None
    } else if let Some(x) = b.contact_message.as_option() {
        m.message_type = "contact".into();
        m.text = x.vcard.clone();
        x.context_info.as_option()
    } else if let Some(x) = b.contacts_array_message.as_option() {
        m.message_type = "contact".into();
        let cards: Vec<&str> = x
            .contacts
            .iter()
            .filter_map(|c| c.vcard.as_deref())
            .collect();
        m.text = Some(cards.join("\n"));
        x.context_info.as_option()
    } else if let Some(x) = b
        .poll_creation_message
        .as_option()
        .or(b.poll_creation_message_v2.as_option())
        .or(b.poll_creation_message_v3.as_option())
    {
        m.message_type = "poll".into();
        m.text = x.name.clone();
        x.context_info.as_option()
    } else {
        m.message_type = "unknown".into();
        None
    };
    if let Some(c) = context {
        m.quoted_message_id = c.stanza_id.clone().filter(|s| !s.is_empty());
        m.quoted_sender_jid = c.participant.clone().filter(|s| !s.is_empty());
        m.forwarded = c.is_forwarded.unwrap_or(false);
    }
}

fn media(
    m: &mut InboundMessage,
    kind: MediaKind,
    mimetype: &Option<String>,
    caption: &Option<String>,
    fields: &Fields<'_>,
) {
    m.message_type = kind.as_str().into();
    m.media_mimetype = mimetype.clone();
    m.caption = caption.clone().filter(|c| !c.is_empty());
    m.media = Some(network_media(kind, fields));
}

fn location(x: &wa::message::LocationMessage) -> Value {
    json!({
        "latitude": x.degrees_latitude.unwrap_or_default(),
        "longitude": x.degrees_longitude.unwrap_or_default(),
        "name": x.name.clone().unwrap_or_default(),
        "address": x.address.clone().unwrap_or_default(),
        "url": x.url.clone().unwrap_or_default(),
        "accuracy_meters": x.accuracy_in_meters.unwrap_or_default(),
        "speed_mps": x.speed_in_mps.unwrap_or_default(),
        "is_live": x.is_live.unwrap_or(false),
    })
}

fn live_location(x: &wa::message::LiveLocationMessage) -> Value {
    let mut v = json!({
        "latitude": x.degrees_latitude.unwrap_or_default(),
        "longitude": x.degrees_longitude.unwrap_or_default(),
        "name": "",
        "address": "",
        "url": "",
        "accuracy_meters": x.accuracy_in_meters.unwrap_or_default(),
        "speed_mps": x.speed_in_mps.unwrap_or_default(),
        "is_live": true,
        "sequence_number": x.sequence_number.unwrap_or_default(),
    });
    if let Some(c) = x.caption.as_ref().filter(|c| !c.is_empty()) {
        v["caption"] = json!(c);
    }
    v
}

/// A reply's choice: `text` is the label, or the id when there is no label.
fn selection(m: &mut InboundMessage, id: Option<String>, label: Option<String>) {
    let label = label.filter(|l| !l.is_empty());
    m.text = label.clone().or_else(|| id.clone());
    m.selected_id = id;
    m.selected_text = label;
}

/// A native-flow reply: `native_flow` is `{name, params}` with the params
/// parsed; the selection is the params' `id` (absent for a submitted flow).
fn interactive(m: &mut InboundMessage, x: &wa::message::InteractiveResponseMessage) {
    let label = x.body.as_option().and_then(|b| b.text.clone());
    let (name, params) = match &x.interactive_response_message {
        Some(Reply::NativeFlowResponseMessage(n)) => (
            n.name.clone().unwrap_or_default(),
            n.params_json
                .as_deref()
                .and_then(|p| serde_json::from_str::<Value>(p).ok())
                .unwrap_or_else(|| json!({})),
        ),
        _ => (String::new(), json!({})),
    };
    let id = params.get("id").and_then(Value::as_str).map(str::to_owned);
    selection(m, id, label);
    m.native_flow = Some(json!({ "name": name, "params": params }));
}
