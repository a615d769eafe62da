//! Labels (a business account's chat tags) from app-state sync: a label
//! created, renamed, recoloured or deleted (`label_update`), and a label put
//! on or taken off a chat (`label_association`).

use serde_json::json;
use whatsapp_rust::types::events::{LabelAssociationUpdate, LabelEditUpdate};

use super::{other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// A label was created or edited (`deleted: false`) or deleted.
pub fn edit(e: &LabelEditUpdate) -> NetworkEvent {
    let a = &e.action;
    other(
        EventName::LabelUpdate,
        json!({
            "label_id": e.label_id,
            "name": a.name,
            "color": a.color,
            "predefined_id": a.predefined_id,
            "deleted": a.deleted.unwrap_or(false),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A label was put on a chat (`labeled: true`) or taken off it.
pub fn association(e: &LabelAssociationUpdate) -> NetworkEvent {
    other(
        EventName::LabelAssociation,
        json!({
            "label_id": e.label_id,
            "chat_jid": user_jid(&e.chat_jid),
            "labeled": e.action.labeled.unwrap_or(false),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}
