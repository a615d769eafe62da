//! The table of event data shapes: for each network-side event, its fields,
//! their JSON types and whether they are required (see docs/api.md, Events).

use super::EventName;
use super::{Field, FieldType};
use FieldType::{
    Bool, Int, IntArray, IntOrNull, NumOrNull, ObjectArray, OneOf, Str, StrArray, StrOrNull,
};

const fn req(name: &'static str, ty: FieldType) -> Field {
    Field {
        name,
        ty,
        required: true,
    }
}

const fn opt(name: &'static str, ty: FieldType) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}

/// Receipt types.
pub const RECEIPT_TYPES: &[&str] = &[
    "delivered",
    "read",
    "played",
    "sent",
    "server_error",
    "read_self",
    "played_self",
];

/// What a `call` event says happened: the call signalling a linked device
/// sees (`offer` … `terminate`), and the outcomes of a call that rang here
/// (`missed`, or answered or declined on another of the account's devices).
pub const CALL_ACTIONS: &[&str] = &[
    "offer",
    "offer_notice",
    "preaccept",
    "accept",
    "reject",
    "terminate",
    "missed",
    "accepted_elsewhere",
    "rejected_elsewhere",
];

/// History sync chunk types (`unknown` for a type newer than this list).
pub const HISTORY_SYNC_TYPES: &[&str] = &[
    "initial_bootstrap",
    "initial_status_v3",
    "full",
    "recent",
    "push_name",
    "non_blocking_data",
    "on_demand",
    "no_history",
    "message_access_status",
    "unknown",
];

/// The fields of an event's data, in the order of the API reference. Events
/// the gateway produces itself (and `message`) have no network-side shape here.
pub fn shape(event: EventName) -> &'static [Field] {
    match event {
        EventName::Receipt => {
            const {
                &[
                    req("message_ids", StrArray),
                    req("chat", Str),
                    req("sender", Str),
                    req("type", OneOf(RECEIPT_TYPES)),
                    req("timestamp", Int),
                    opt("offline", Bool),
                ]
            }
        }
        EventName::Presence => {
            const {
                &[
                    req("jid", Str),
                    req("available", Bool),
                    opt("last_seen", IntOrNull),
                ]
            }
        }
        EventName::ChatPresence => {
            const {
                &[
                    req("chat", Str),
                    req("sender", Str),
                    req("state", OneOf(&["composing", "paused"])),
                    opt("media", OneOf(&["text", "audio"])),
                ]
            }
        }
        EventName::Disconnected => const { &[req("reason", Str)] },
        EventName::PairingCodeError => {
            const {
                &[
                    req("error", Str),
                    req("rejection", StrOrNull),
                    req("throttled", Bool),
                    req("retry_after_seconds", NumOrNull),
                ]
            }
        }
        EventName::GroupUpdate => {
            const {
                &[
                    req("jid", Str),
                    opt("sender", StrOrNull),
                    opt("timestamp", Int),
                    opt("name", StrOrNull),
                    opt("topic", StrOrNull),
                    opt("topic_id", StrOrNull),
                    opt("announce", Bool),
                    opt("locked", Bool),
                    opt("ephemeral_seconds", IntOrNull),
                    opt("join", StrArray),
                    opt("leave", StrArray),
                    opt("promote", StrArray),
                    opt("demote", StrArray),
                    opt("invite_link", StrOrNull),
                    opt("membership_approval_mode", OneOf(&["off", "on"])),
                    opt("member_add_mode", OneOf(&["admin_add", "all_member_add"])),
                    opt(
                        "member_link_mode",
                        OneOf(&["admin_link", "all_member_link"]),
                    ),
                ]
            }
        }
        EventName::JoinedGroup => {
            const {
                &[
                    req("jid", Str),
                    opt("name", StrOrNull),
                    opt("reason", StrOrNull),
                    opt("sender", StrOrNull),
                    opt("participants", StrArray),
                ]
            }
        }
        EventName::PictureUpdate => {
            const {
                &[
                    req("jid", Str),
                    req("action", Str),
                    opt("author", StrOrNull),
                    opt("picture_id", StrOrNull),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::UserAboutUpdate => {
            const { &[req("jid", Str), req("about", Str), opt("timestamp", Int)] }
        }
        EventName::PushNameUpdate => {
            const {
                &[
                    req("jid", Str),
                    req("push_name", Str),
                    opt("old_push_name", StrOrNull),
                    opt("lid", Str),
                ]
            }
        }
        EventName::ContactUpdate => {
            const {
                &[
                    req("jid", Str),
                    opt("full_name", StrOrNull),
                    opt("first_name", StrOrNull),
                    opt("lid", Str),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::DeviceListUpdate => const { &[req("jid", Str), req("devices", IntArray)] },
        EventName::PinUpdate => {
            const {
                &[
                    req("chat_jid", Str),
                    req("pinned", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::MuteUpdate => {
            const {
                &[
                    req("chat_jid", Str),
                    req("muted", Bool),
                    opt("mute_end_timestamp", IntOrNull),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::ArchiveUpdate => {
            const {
                &[
                    req("chat_jid", Str),
                    req("archived", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::MarkChatAsRead => {
            const {
                &[
                    req("chat_jid", Str),
                    req("read", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::StarUpdate => {
            const {
                &[
                    req("chat_jid", Str),
                    req("message_id", Str),
                    req("from_me", Bool),
                    opt("participant", StrOrNull),
                    req("starred", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::ChatDeleted => {
            const {
                &[
                    req("chat_jid", Str),
                    opt("delete_media", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::ChatCleared => {
            const {
                &[
                    req("chat_jid", Str),
                    opt("delete_starred", Bool),
                    opt("delete_media", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::MessageDeletedForMe => {
            const {
                &[
                    req("chat_jid", Str),
                    req("message_id", Str),
                    req("from_me", Bool),
                    opt("participant", StrOrNull),
                    opt("delete_media", Bool),
                    opt("message_timestamp", IntOrNull),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::StatusMuteUpdate => {
            const { &[req("jid", Str), req("muted", Bool), opt("timestamp", Int)] }
        }
        EventName::LabelUpdate => {
            const {
                &[
                    req("label_id", Str),
                    opt("name", StrOrNull),
                    opt("color", IntOrNull),
                    opt("predefined_id", IntOrNull),
                    req("deleted", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::LabelAssociation => {
            const {
                &[
                    req("label_id", Str),
                    req("chat_jid", Str),
                    req("labeled", Bool),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::ContactNumberChanged => {
            const {
                &[
                    req("old_jid", Str),
                    req("new_jid", Str),
                    opt("old_lid", StrOrNull),
                    opt("new_lid", StrOrNull),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::IdentityChange => {
            const {
                &[
                    req("jid", Str),
                    opt("lid", StrOrNull),
                    req("implicit", Bool),
                ]
            }
        }
        EventName::DisappearingModeUpdate => {
            const {
                &[
                    req("jid", Str),
                    req("ephemeral_seconds", Int),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::Call => {
            const {
                &[
                    req("call_id", Str),
                    req("from", Str),
                    opt("from_phone", StrOrNull),
                    req("action", OneOf(CALL_ACTIONS)),
                    opt("call_creator", Str),
                    opt("is_video", Bool),
                    opt("is_group", Bool),
                    opt("group_jid", StrOrNull),
                    opt("reason", StrOrNull),
                    opt("duration_seconds", IntOrNull),
                    opt("offline", Bool),
                    req("timestamp", Int),
                ]
            }
        }
        EventName::HistorySync => {
            const {
                &[
                    req("sync_type", OneOf(HISTORY_SYNC_TYPES)),
                    req("chunk_order", IntOrNull),
                    req("progress", IntOrNull),
                    req("conversations", IntOrNull),
                    req("messages", IntOrNull),
                    opt("request_id", StrOrNull),
                ]
            }
        }
        EventName::UndecryptableMessage => {
            const {
                &[
                    req("chat", Str),
                    req("sender", Str),
                    req("message_id", Str),
                    opt("is_unavailable", Bool),
                    opt("unavailable_type", StrOrNull),
                    opt("decrypt_fail_mode", StrOrNull),
                    opt("timestamp", Int),
                ]
            }
        }
        EventName::OfflineSyncPreview => {
            const {
                &[
                    req("messages", Int),
                    opt("notifications", Int),
                    opt("receipts", Int),
                    opt("app_data_changes", Int),
                ]
            }
        }
        EventName::OfflineSyncCompleted => const { &[req("count", Int)] },
        EventName::StorageFailed => const { &[req("kind", Str), req("failed_at", Int)] },
        EventName::StorageRecovered => {
            const {
                &[
                    req("kind", Str),
                    req("failed_at", Int),
                    req("recovered_at", Int),
                ]
            }
        }
        EventName::AccountLocked => {
            const {
                &[
                    req("reason", Str),
                    req("cooldown_secs", Int),
                    req("cooldown_until", Int),
                    opt("expires_at", IntOrNull),
                    opt("url", StrOrNull),
                ]
            }
        }
        EventName::ReconnectScheduled => {
            const {
                &[
                    req("reason", Str),
                    req("delay_ms", Int),
                    req("at_ms", Int),
                    req("error_count", Int),
                ]
            }
        }
        EventName::ReachOutTimelock => {
            const {
                &[
                    req("active", Bool),
                    req("until", IntOrNull),
                    req("stated", Bool),
                    req("retry_after_secs", IntOrNull),
                ]
            }
        }
        EventName::CallLogSync => {
            const {
                &[
                    req("call_creator_jid", Str),
                    req("call_id", Str),
                    req("from_me", Bool),
                    req("timestamp", Int),
                    req("from_full_sync", Bool),
                    req("record", Str),
                ]
            }
        }
        EventName::StreamError => const { &[req("code", Str)] },
        EventName::EncDecryptFailed => {
            const {
                &[
                    req("chat", Str),
                    req("sender", Str),
                    req("message_id", Str),
                    req("enc_index", Int),
                    req("enc_type", Str),
                    req("reason", Str),
                ]
            }
        }
        EventName::AppStateSyncFailed => {
            const {
                &[
                    req("fatal", StrArray),
                    req("retryable", StrArray),
                    req("skipped", StrArray),
                    req("connected", Bool),
                ]
            }
        }
        EventName::NewsletterLiveUpdate => {
            const { &[req("jid", Str), req("messages", ObjectArray)] }
        }
        EventName::PollVote => {
            const {
                &[
                    req("message_id", Str),
                    req("chat", Str),
                    req("voter", Str),
                    req("poll_message_id", Str),
                    req("timestamp", Int),
                    req("selected_options", StrArray),
                    opt("error", Str),
                ]
            }
        }
        EventName::EphemeralSetting => {
            const {
                &[
                    req("chat", Str),
                    req("sender", Str),
                    req("expiration_seconds", Int),
                    req("timestamp", Int),
                ]
            }
        }
        EventName::ClientOutdated
        | EventName::Message
        | EventName::Connected
        | EventName::LoggedOut
        | EventName::QrCode
        | EventName::PairCode
        | EventName::BlastProgress
        | EventName::BlastCompleted => const { &[] },
    }
}
