//! The table of event data shapes: for each network-side event, its fields,
//! their JSON types and whether they are required (see docs/api.md, Events).

use super::EventName;
use super::{Field, FieldType};
use FieldType::{Bool, Int, IntArray, IntOrNull, NumOrNull, OneOf, Str, StrArray, StrOrNull};

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
pub const RECEIPT_TYPES: &[&str] = &["delivered", "read", "played"];

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
        EventName::AccountLocked => {
            const {
                &[
                    req("reason", Str),
                    req("cooldown_secs", Int),
                    req("cooldown_until", Int),
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
