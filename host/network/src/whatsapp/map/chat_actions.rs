//! App-state actions on chats and messages taken on another of the
//! account's devices: a message starred or unstarred, a chat deleted or
//! cleared, a message deleted for this account only, a contact's status
//! updates muted. (Pin, mute, archive and mark-as-read are `app_state.rs`.)

use serde_json::json;
use whatsapp_rust::types::events::{
    ClearChatUpdate, DeleteChatUpdate, DeleteMessageForMeUpdate, StarUpdate, UserStatusMuteUpdate,
};

use super::{other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

/// A message was starred or unstarred. `participant` is the sender of a
/// group message from someone else, `null` otherwise.
pub fn star(e: &StarUpdate) -> NetworkEvent {
    other(
        EventName::StarUpdate,
        json!({
            "chat_jid": user_jid(&e.chat_jid),
            "message_id": e.message_id,
            "from_me": e.from_me,
            "participant": e.participant_jid.as_ref().map(user_jid),
            "starred": e.action.starred.unwrap_or(false),
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A chat was deleted.
pub fn chat_deleted(e: &DeleteChatUpdate) -> NetworkEvent {
    other(
        EventName::ChatDeleted,
        json!({
            "chat_jid": user_jid(&e.jid),
            "delete_media": e.delete_media,
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A chat's messages were cleared (the chat stays).
pub fn chat_cleared(e: &ClearChatUpdate) -> NetworkEvent {
    other(
        EventName::ChatCleared,
        json!({
            "chat_jid": user_jid(&e.jid),
            "delete_starred": e.delete_starred,
            "delete_media": e.delete_media,
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A message was deleted for this account only (the others still see it).
pub fn deleted_for_me(e: &DeleteMessageForMeUpdate) -> NetworkEvent {
    other(
        EventName::MessageDeletedForMe,
        json!({
            "chat_jid": user_jid(&e.chat_jid),
            "message_id": e.message_id,
            "from_me": e.from_me,
            "participant": e.participant_jid.as_ref().map(user_jid),
            "delete_media": e.action.delete_media.unwrap_or(false),
            "message_timestamp": e.action.message_timestamp,
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}

/// A contact's (or group's, or channel's) status updates were muted or unmuted.
pub fn status_mute(e: &UserStatusMuteUpdate) -> NetworkEvent {
    other(
        EventName::StatusMuteUpdate,
        json!({
            "jid": user_jid(&e.jid),
            "muted": e.muted,
            "timestamp": e.timestamp.timestamp(),
        }),
    )
}
