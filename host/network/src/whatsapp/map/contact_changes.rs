//! Changes to a contact's account the server tells about: a new identity
//! key (WhatsApp reinstalled, so its safety number changed), a new phone
//! number, a new default disappearing-messages timer.

use serde_json::json;
use whatsapp_rust::types::events::{ContactNumberChanged, DisappearingModeChanged, IdentityChange};

use super::{other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// A contact's identity key changed. `implicit` is true when the crate
/// noticed it while decrypting a message, false when the server sent a
/// notification.
pub fn identity(e: &IdentityChange) -> NetworkEvent {
    other(
        EventName::IdentityChange,
        json!({
            "jid": user_jid(&e.user),
            "lid": e.lid_user.as_ref().map(user_jid),
            "implicit": e.implicit,
        }),
    )
}

/// A contact moved to a new phone number (and `@lid`, when the server says).
pub fn number_changed(e: &ContactNumberChanged) -> NetworkEvent {
    other(
        EventName::ContactNumberChanged,
        json!({
            "old_jid": user_jid(&e.old_jid),
            "new_jid": user_jid(&e.new_jid),
            "old_lid": e.old_lid.as_ref().map(user_jid),
            "new_lid": e.new_lid.as_ref().map(user_jid),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A contact's default timer for disappearing messages changed (`0`: off).
/// `timestamp` is when the contact changed it: apply it only over an older
/// setting.
pub fn disappearing_mode(e: &DisappearingModeChanged) -> NetworkEvent {
    other(
        EventName::DisappearingModeUpdate,
        json!({
            "jid": user_jid(&e.from),
            "ephemeral_seconds": e.duration,
            "timestamp": e.setting_timestamp.timestamp(),
        }),
    )
}
