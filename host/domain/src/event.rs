//! The event envelope and the names of every event the gateway emits.

use serde::{Deserialize, Serialize};

/// Declares [`EventName`] with its wire spellings in one place.
macro_rules! event_names {
    ($($variant:ident => $wire:literal),* $(,)?) => {
        /// Every event name of the API (the `event` field of an envelope).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventName { $(#[doc = $wire] $variant),* }

        impl EventName {
            /// Every event name, in the order of the API reference.
            pub const ALL: &'static [EventName] = &[$(EventName::$variant),*];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(EventName::$variant => $wire),* }
            }

            /// Parses a wire spelling; `all` is not an event and is refused here.
            pub fn parse(s: &str) -> Option<EventName> {
                match s { $($wire => Some(EventName::$variant),)* _ => None }
            }
        }

        /// In the OpenAPI document: a string, one of the wire spellings.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for EventName {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some("An event name."))
                    .enum_values(Some([$($wire),*]))
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for EventName {}
    };
}

event_names! {
    Message => "message",
    Receipt => "receipt",
    Presence => "presence",
    ChatPresence => "chat_presence",
    Connected => "connected",
    Disconnected => "disconnected",
    LoggedOut => "logged_out",
    QrCode => "qr_code",
    PairCode => "pair_code",
    PairingCodeError => "pairing_code_error",
    GroupUpdate => "group_update",
    JoinedGroup => "joined_group",
    PictureUpdate => "picture_update",
    UserAboutUpdate => "user_about_update",
    PushNameUpdate => "push_name_update",
    ContactUpdate => "contact_update",
    DeviceListUpdate => "device_list_update",
    PinUpdate => "pin_update",
    MuteUpdate => "mute_update",
    ArchiveUpdate => "archive_update",
    MarkChatAsRead => "mark_chat_as_read",
    StarUpdate => "star_update",
    ChatDeleted => "chat_deleted",
    ChatCleared => "chat_cleared",
    MessageDeletedForMe => "message_deleted_for_me",
    StatusMuteUpdate => "status_mute_update",
    LabelUpdate => "label_update",
    LabelAssociation => "label_association",
    ContactNumberChanged => "contact_number_changed",
    IdentityChange => "identity_change",
    DisappearingModeUpdate => "disappearing_mode_update",
    Call => "call",
    HistorySync => "history_sync",
    PollVote => "poll_vote",
    EphemeralSetting => "ephemeral_setting",
    UndecryptableMessage => "undecryptable_message",
    ClientOutdated => "client_outdated",
    OfflineSyncPreview => "offline_sync_preview",
    OfflineSyncCompleted => "offline_sync_completed",
    AccountLocked => "account_locked",
    ReachOutTimelock => "reach_out_timelock",
    ReconnectScheduled => "reconnect_scheduled",
    CallLogSync => "call_log_sync",
    StreamError => "stream_error",
    EncDecryptFailed => "enc_decrypt_failed",
    AppStateSyncFailed => "app_state_sync_failed",
    NewsletterLiveUpdate => "newsletter_live_update",
    BlastProgress => "blast_progress",
    BlastCompleted => "blast_completed",
    StorageFailed => "storage_failed",
    StorageRecovered => "storage_recovered",
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        EventName::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown event name `{s}`")))
    }
}

/// What every subscriber receives: webhooks, the event stream and plugin filters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The session the event belongs to.
    pub session_id: String,
    /// The event name.
    pub event: EventName,
    /// Unix seconds when the gateway saw the event.
    pub timestamp: i64,
    /// Event-specific data.
    pub data: serde_json::Value,
    /// Message events only: true when redelivered from the disconnect window.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offline: Option<bool>,
    /// The gateway-wide sequence number given when the envelope was
    /// recorded (0 before that): the event stream's `id:`. Not part of the
    /// JSON document, which stays the one a webhook receives.
    #[serde(skip)]
    pub seq: u64,
}

impl Envelope {
    /// An envelope stamped with the current time.
    pub fn now(session_id: &str, event: EventName, data: serde_json::Value) -> Self {
        Self {
            session_id: session_id.to_owned(),
            event,
            timestamp: super::time::unix_now(),
            data,
            offline: None,
            seq: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_name_round_trips_through_its_wire_spelling() {
        for name in EventName::ALL {
            assert_eq!(EventName::parse(name.as_str()), Some(*name));
        }
        assert_eq!(EventName::ALL.len(), 51);
        assert_eq!(EventName::parse("all"), None);
    }

    #[test]
    fn offline_is_left_out_of_non_message_envelopes() {
        let env = Envelope::now("s1", EventName::Connected, serde_json::json!({}));
        let json = serde_json::to_value(&env).unwrap();
        assert!(json.get("offline").is_none());
        assert_eq!(json["event"], "connected");
    }
}
