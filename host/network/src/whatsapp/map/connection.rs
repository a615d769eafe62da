//! Connection, pairing and system events: socket state, QR and pair codes,
//! pairing results, logouts, account locks and bans, stream errors, the
//! outdated-client notice and the offline-sync preview and completion.

use serde_json::json;
use whatsapp_rust::types::events::{
    ConnectFailure, ConnectFailureReason, Disconnected, LoggedOut, OfflineSyncCompleted,
    OfflineSyncPreview, PairError, PairSuccess, PairingCode, PairingCodeError, PairingQrCode,
    PairingQrCodesExhausted, StreamError, TemporaryBan,
};

use super::{MapContext, jid_user, other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;
use crate::domain::session::Account;

/// A QR code to show until `now + timeout`.
pub fn qr(e: &PairingQrCode, cx: &MapContext) -> NetworkEvent {
    NetworkEvent::Qr {
        code: e.code.clone(),
        expires_at: cx.now + i64::try_from(e.timeout.as_secs()).unwrap_or(i64::MAX / 2),
    }
}

/// A pair code to type on the phone.
pub fn pair_code(e: &PairingCode) -> NetworkEvent {
    NetworkEvent::PairCode {
        code: e.code.clone(),
    }
}

/// A failed pair-code request, in the spec's `pairing_code_error` shape.
pub fn pair_code_error(e: &PairingCodeError) -> NetworkEvent {
    let rejection = e.rejection.map(|r| format!("{r:?}"));
    let throttled = e.rejection.is_some_and(|r| r.is_throttled());
    other(
        EventName::PairingCodeError,
        json!({
            "error": e.error,
            "rejection": rejection,
            "throttled": throttled,
            "retry_after_seconds": e.backoff.map(|d| d.as_secs_f64()),
        }),
    )
}

/// No phone scanned any of the QR codes: when the crate closed the socket,
/// the session is disconnected with the reason (connecting again shows new
/// codes); when it left the socket up, nothing changes yet.
pub fn qr_codes_exhausted(e: &PairingQrCodesExhausted) -> Option<NetworkEvent> {
    e.disconnected.then(|| NetworkEvent::Disconnected {
        reason: "no phone scanned the QR codes before they ran out; connect again for new ones"
            .into(),
    })
}

/// A phone without multi-device support scanned the code: nothing will
/// link, and the operator should hear why (as a pairing error).
pub fn scanned_without_multidevice() -> NetworkEvent {
    other(
        EventName::PairingCodeError,
        json!({
            "error": "the phone that scanned the code does not support linked devices; update WhatsApp on it",
            "rejection": null,
            "throttled": false,
            "retry_after_seconds": null,
        }),
    )
}

/// The phone linked the device: the account to store. `push_name` is the
/// device's push name when the client knows it already.
pub fn paired(e: &PairSuccess, push_name: Option<String>) -> NetworkEvent {
    NetworkEvent::Paired(Account {
        jid: user_jid(&e.id),
        phone: jid_user(&e.id),
        push_name: push_name.filter(|n| !n.is_empty()),
    })
}

/// Linking failed after the scan: the socket closes, nothing is stored.
pub fn pair_failed(e: &PairError) -> NetworkEvent {
    NetworkEvent::Disconnected {
        reason: format!("pairing failed: {}", e.error),
    }
}

/// The socket dropped.
pub fn disconnected(e: &Disconnected) -> NetworkEvent {
    NetworkEvent::Disconnected {
        reason: e.reason.to_string(),
    }
}

/// The account was unlinked — or locked, which the network reports as a
/// logout reason but which keeps the credentials. The server's own words
/// (its logout message) follow the reason's name.
pub fn logged_out(e: &LoggedOut) -> NetworkEvent {
    let mut reason = reason_name(&e.reason);
    if let Some(m) = &e.logout_message {
        let words: Vec<&str> = [&m.header, &m.subtext]
            .into_iter()
            .flatten()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect();
        if !words.is_empty() {
            reason = format!("{reason}: {}", words.join(" — "));
        }
    }
    if e.reason == ConnectFailureReason::AccountLocked {
        return NetworkEvent::AccountLocked {
            reason,
            until: None,
            url: None,
        };
    }
    NetworkEvent::LoggedOut { reason }
}

/// The server refused the login.
pub fn connect_failure(e: &ConnectFailure) -> Vec<NetworkEvent> {
    let reason = match &e.message {
        Some(m) if !m.is_empty() => format!("{}: {m}", reason_name(&e.reason)),
        _ => reason_name(&e.reason),
    };
    match e.reason {
        ConnectFailureReason::AccountLocked => vec![NetworkEvent::AccountLocked {
            reason,
            until: None,
            url: None,
        }],
        ConnectFailureReason::ClientOutdated => vec![
            other(EventName::ClientOutdated, json!({})),
            NetworkEvent::Refused { reason },
        ],
        // Only a server error is worth another try (WhatsApp's own clients
        // retry nothing else); the rest end the connection for good.
        r if r.should_reconnect() => vec![NetworkEvent::Disconnected { reason }],
        _ => vec![NetworkEvent::Refused { reason }],
    }
}

/// A temporary ban: the account cannot connect until it expires (`now`
/// plus the ban's duration), which the gateway handles like an account
/// lock (credentials kept, a cooldown at least as long as the ban).
pub fn temporary_ban(e: &TemporaryBan, now: i64) -> NetworkEvent {
    let secs = e.expire.num_seconds().max(0);
    NetworkEvent::AccountLocked {
        reason: format!(
            "temporary ban ({:?}) for {secs} s{}",
            e.code,
            e.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ),
        until: Some(now.saturating_add(secs)),
        url: e.url.clone().filter(|u| !u.is_empty()),
    }
}

/// A stream-level error such as a rate limit.
pub fn stream_error(e: &StreamError) -> NetworkEvent {
    other(EventName::StreamError, json!({ "code": e.code }))
}

/// The preview of what the server holds for a reconnecting session.
pub fn offline_preview(e: &OfflineSyncPreview) -> NetworkEvent {
    other(
        EventName::OfflineSyncPreview,
        json!({
            "messages": e.messages,
            "notifications": e.notifications,
            "receipts": e.receipts,
            "app_data_changes": e.app_data_changes,
            "total": e.total,
            "calls": e.calls,
            "statuses": e.statuses,
        }),
    )
}

/// The server delivered everything it held.
pub fn offline_completed(e: &OfflineSyncCompleted) -> NetworkEvent {
    other(EventName::OfflineSyncCompleted, json!({ "count": e.count }))
}

/// A failure reason as the network names it (`AccountLocked`, `LoggedOut`, …).
fn reason_name(r: &ConnectFailureReason) -> String {
    format!("{r:?}")
}
