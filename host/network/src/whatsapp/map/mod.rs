//! The crate's events as the gateway's [`NetworkEvent`]s: pure functions, one
//! file per event family, so each mapping is tested by building the crate's
//! event values (no network). [`map_event`] is the one entry point; an event
//! it gives nothing for is counted by [`unmapped_kind`] (the pump bumps
//! `switchboard_whatsapp_events_unmapped_total{kind}`), never dropped
//! without a trace. `media` is the exception that is not an event family:
//! the inbound media fields and download handle a message's mapping uses,
//! and the way back from a stored handle to the crate's download request.

pub mod account_ops;
pub mod app_state;
pub mod app_state_sync;
pub mod calls;
pub mod chat;
pub mod chat_actions;
pub mod connection;
pub mod contact_changes;
pub mod contact_lookups;
pub mod contacts;
pub mod group_info;
pub mod groups;
pub mod history;
pub mod iq_errors;
pub mod kinds;
pub mod labels;
pub mod media;
pub mod message;
pub mod message_content;
pub mod newsletters;
pub mod protocol;

#[cfg(test)]
mod tests_connection;
#[cfg(test)]
mod tests_events;
#[cfg(test)]
pub(crate) mod tests_events_sync;
#[cfg(test)]
mod tests_media;
#[cfg(test)]
mod tests_message;
#[cfg(test)]
mod tests_protocol;

use whatsapp_rust::Jid;
use whatsapp_rust::types::events::Event;

use crate::NetworkEvent;
use crate::domain::event::EventName;
pub use kinds::unmapped_kind;

/// What a mapping needs besides the event.
#[derive(Debug, Clone, Default)]
pub struct MapContext {
    /// Unix seconds now (QR expiry).
    pub now: i64,
    /// The session's own account, phone and lid users, when known (to tell
    /// a group join of our own account).
    pub own_users: Vec<String>,
    /// The session's push name, when known (the account stored at pairing).
    pub push_name: Option<String>,
}

/// Maps one crate event. Most give one event; a message batch gives one per
/// message; unlisted events, and the cases of listed ones a mapping leaves
/// out, give none (see [`unmapped_kind`]).
pub fn map_event(ev: &Event, cx: &MapContext) -> Vec<NetworkEvent> {
    use connection as c;
    match ev {
        Event::Connected(_) => vec![NetworkEvent::LoggedIn],
        Event::Disconnected(e) => vec![c::disconnected(e)],
        Event::PairSuccess(e) => vec![c::paired(e, cx.push_name.clone())],
        Event::PairError(e) => vec![c::pair_failed(e)],
        Event::LoggedOut(e) => vec![c::logged_out(e)],
        Event::PairingQrCode(e) => vec![c::qr(e, cx)],
        Event::PairingCode(e) => vec![c::pair_code(e)],
        Event::PairingCodeError(e) => vec![c::pair_code_error(e)],
        // The pump asks a new code for the same phone; the code it gets
        // arrives as its own `PairingCode` event.
        Event::PairingCodeRefresh(_) => Vec::new(),
        Event::PairingQrCodesExhausted(e) => c::qr_codes_exhausted(e).into_iter().collect(),
        Event::QrScannedWithoutMultidevice(_) => vec![c::scanned_without_multidevice()],
        // The crate retries no login of an outdated client, nor does the
        // gateway: the operator upgrades first.
        Event::ClientOutdated(_) => vec![
            other(EventName::ClientOutdated, serde_json::json!({})),
            NetworkEvent::Refused {
                reason: "ClientOutdated: WhatsApp refuses this client version; upgrade the gateway"
                    .into(),
            },
        ],
        Event::TemporaryBan(e) => vec![c::temporary_ban(e, cx.now)],
        Event::ConnectFailure(e) => c::connect_failure(e),
        Event::StreamError(e) => vec![c::stream_error(e)],
        Event::StreamReplaced(_) => vec![NetworkEvent::Replaced {
            reason: "stream replaced: another client connected with this device".into(),
        }],
        Event::OfflineSyncPreview(e) => vec![c::offline_preview(e)],
        Event::OfflineSyncCompleted(e) => vec![c::offline_completed(e)],
        // Message batches take the inbound path (`inbound.rs`): votes are
        // opened and the batch is stored before the crate acknowledges it.
        Event::Messages(_) => Vec::new(),
        Event::UndecryptableMessage(e) => vec![message::undecryptable(e)],
        Event::Receipt(e) => chat::receipt(e).into_iter().collect(),
        Event::Presence(e) => vec![chat::presence(e)],
        Event::ChatPresence(e) => vec![chat::chat_presence(e)],
        Event::PictureUpdate(e) => vec![contacts::picture(e)],
        Event::UserAboutUpdate(e) => vec![contacts::about(e)],
        Event::PushNameUpdate(e) => vec![contacts::push_name(e)],
        Event::ContactUpdate(e) => contacts::contact(e),
        Event::DeviceListUpdate(e) => vec![contacts::device_list(e)],
        Event::PinUpdate(e) => vec![app_state::pin(e)],
        Event::MuteUpdate(e) => vec![app_state::mute(e)],
        Event::ArchiveUpdate(e) => vec![app_state::archive(e)],
        Event::MarkChatAsReadUpdate(e) => vec![app_state::mark_read(e)],
        Event::StarUpdate(e) => vec![chat_actions::star(e)],
        Event::DeleteChatUpdate(e) => vec![chat_actions::chat_deleted(e)],
        Event::ClearChatUpdate(e) => vec![chat_actions::chat_cleared(e)],
        Event::DeleteMessageForMeUpdate(e) => vec![chat_actions::deleted_for_me(e)],
        Event::UserStatusMuteUpdate(e) => vec![chat_actions::status_mute(e)],
        Event::LabelEditUpdate(e) => vec![labels::edit(e)],
        Event::LabelAssociationUpdate(e) => vec![labels::association(e)],
        Event::GroupUpdate(e) => groups::update(e, cx).into_iter().collect(),
        Event::IdentityChange(e) => vec![contact_changes::identity(e)],
        Event::ContactNumberChanged(e) => vec![contact_changes::number_changed(e)],
        Event::DisappearingModeChanged(e) => vec![contact_changes::disappearing_mode(e)],
        Event::IncomingCall(e) => calls::incoming(e).into_iter().collect(),
        Event::MissedCall(e) => vec![calls::missed(e)],
        Event::CallEndedElsewhere(e) => calls::ended_elsewhere(e).into_iter().collect(),
        Event::HistorySync(e) => vec![history::history_sync(e)],
        Event::AppStateSyncFailed(e) => vec![app_state_sync::failed(e)],
        Event::NewsletterLiveUpdate(e) => vec![newsletters::live_update(e)],
        // Counted as unmapped by kind (`kinds.rs`): server acks, raw and
        // unhandled notifications, profile-changed and contact-resync
        // notices, our own push name, business status, dirty markers, MEX
        // updates and passkey pairing, which the gateway does not use.
        _ => Vec::new(),
    }
}

/// A network-side event in its API `data` shape.
pub(crate) fn other(event: EventName, data: serde_json::Value) -> NetworkEvent {
    NetworkEvent::Other { event, data }
}

/// A JID without its device part, as the API prints it
/// (`<user>@s.whatsapp.net`, `<id>@lid`, `<id>@g.us`).
pub fn user_jid(j: &Jid) -> String {
    j.to_non_ad_string()
}

/// The user part of a JID (phone digits for a phone JID).
pub fn jid_user(j: &Jid) -> String {
    j.user.to_string()
}
