//! The kind of every crate event as a stable snake_case name, and which
//! events count as unmapped when [`super::map_event`] gives nothing for
//! them (the pump bumps `switchboard_whatsapp_events_unmapped_total` with
//! the name as its `kind` label). Nothing is dropped without a trace: an
//! event no mapping forwards, or one whose particular case a mapping leaves
//! out (a retry receipt, a call's in-call signalling), is counted under its
//! crate variant's name.

use whatsapp_rust::types::events::Event;

/// The crate variant of `ev` in snake_case (`IncomingCall` is
/// `incoming_call`). A variant newer than this list is `other`.
pub fn kind_name(ev: &Event) -> &'static str {
    match ev {
        Event::Connected(_) => "connected",
        Event::Disconnected(_) => "disconnected",
        Event::PairSuccess(_) => "pair_success",
        Event::PairError(_) => "pair_error",
        Event::LoggedOut(_) => "logged_out",
        Event::PairingQrCode(_) => "pairing_qr_code",
        Event::PairingCode(_) => "pairing_code",
        Event::PairingCodeRefresh(_) => "pairing_code_refresh",
        Event::PairingCodeError(_) => "pairing_code_error",
        Event::PairingQrCodesExhausted(_) => "pairing_qr_codes_exhausted",
        Event::QrScannedWithoutMultidevice(_) => "qr_scanned_without_multidevice",
        Event::ClientOutdated(_) => "client_outdated",
        Event::Messages(_) => "messages",
        Event::Receipt(_) => "receipt",
        Event::ServerAck(_) => "server_ack",
        Event::UndecryptableMessage(_) => "undecryptable_message",
        Event::Notification(_) => "notification",
        Event::ChatPresence(_) => "chat_presence",
        Event::Presence(_) => "presence",
        Event::PictureUpdate(_) => "picture_update",
        Event::UserAboutUpdate(_) => "user_about_update",
        Event::ContactUpdated(_) => "contact_updated",
        Event::ContactNumberChanged(_) => "contact_number_changed",
        Event::ContactSyncRequested(_) => "contact_sync_requested",
        Event::GroupUpdate(_) => "group_update",
        Event::ContactUpdate(_) => "contact_update",
        Event::IncomingCall(_) => "incoming_call",
        Event::MissedCall(_) => "missed_call",
        Event::CallEndedElsewhere(_) => "call_ended_elsewhere",
        Event::PushNameUpdate(_) => "push_name_update",
        Event::SelfPushNameUpdated(_) => "self_push_name_updated",
        Event::PinUpdate(_) => "pin_update",
        Event::MuteUpdate(_) => "mute_update",
        Event::ArchiveUpdate(_) => "archive_update",
        Event::StarUpdate(_) => "star_update",
        Event::MarkChatAsReadUpdate(_) => "mark_chat_as_read_update",
        Event::DeleteChatUpdate(_) => "delete_chat_update",
        Event::ClearChatUpdate(_) => "clear_chat_update",
        Event::UserStatusMuteUpdate(_) => "user_status_mute_update",
        Event::DeleteMessageForMeUpdate(_) => "delete_message_for_me_update",
        Event::LabelEditUpdate(_) => "label_edit_update",
        Event::LabelAssociationUpdate(_) => "label_association_update",
        Event::HistorySync(_) => "history_sync",
        Event::OfflineSyncPreview(_) => "offline_sync_preview",
        Event::OfflineSyncCompleted(_) => "offline_sync_completed",
        Event::DirtyState(_) => "dirty_state",
        Event::DeviceListUpdate(_) => "device_list_update",
        Event::IdentityChange(_) => "identity_change",
        Event::BusinessStatusUpdate(_) => "business_status_update",
        Event::StreamReplaced(_) => "stream_replaced",
        Event::TemporaryBan(_) => "temporary_ban",
        Event::ConnectFailure(_) => "connect_failure",
        Event::StreamError(_) => "stream_error",
        Event::DisappearingModeChanged(_) => "disappearing_mode_changed",
        Event::NewsletterLiveUpdate(_) => "newsletter_live_update",
        Event::RawNode(_) => "raw_node",
        Event::MexNotification(_) => "mex_notification",
        Event::PairPasskeyRequest(_) => "pair_passkey_request",
        Event::PairPasskeyConfirmation(_) => "pair_passkey_confirmation",
        Event::PairPasskeyError(_) => "pair_passkey_error",
        Event::AppStateSyncFailed(_) => "app_state_sync_failed",
        _ => "other",
    }
}

/// What to count for an event [`super::map_event`] gave nothing for: its
/// kind, or `None` for the events the backend handles itself: message
/// batches take the inbound path, and a pair-code refresh makes the pump
/// ask for a new code, which arrives as its own event.
pub fn unmapped_kind(ev: &Event) -> Option<&'static str> {
    match ev {
        Event::Messages(_) | Event::PairingCodeRefresh(_) => None,
        ev => Some(kind_name(ev)),
    }
}
