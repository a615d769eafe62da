//! Channel (newsletter) live updates: the reaction counts of a channel's
//! messages changed. Channel messages themselves arrive as messages.

use serde_json::json;
use whatsapp_rust::types::events::NewsletterLiveUpdate;

use super::{other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// The current reaction counts of some of a channel's messages, each named
/// by its server id.
pub fn live_update(e: &NewsletterLiveUpdate) -> NetworkEvent {
    let messages: Vec<_> = e
        .messages
        .iter()
        .map(|m| {
            let reactions: Vec<_> = m
                .reactions
                .iter()
                .map(|r| json!({ "code": r.code, "count": r.count }))
                .collect();
            json!({ "server_id": m.server_id, "reactions": reactions })
        })
        .collect();
    other(
        EventName::NewsletterLiveUpdate,
        json!({ "jid": user_jid(&e.newsletter_jid), "messages": messages }),
    )
}
