//! Mapping tests for connection, pairing and system events: each builds the
//! crate's event value and checks the resulting network event field by field.

use std::time::Duration;

use serde_json::json;
use whatsapp_rust::Jid;
use whatsapp_rust::types::events::{
    ClientOutdated, ConnectFailure, ConnectFailureReason, Connected, Disconnected, Event,
    LoggedOut, LogoutMessage, OfflineSyncCompleted, OfflineSyncPreview, PairError, PairSuccess,
    PairingCode, PairingCodeError, PairingQrCode, StreamError, TempBanReason, TemporaryBan,
};
use whatsapp_rust::wacore::net::DisconnectReason;
use whatsapp_rust::wacore::pair_code::PairCodeRejection;

use super::{MapContext, map_event};
use crate::NetworkEvent;
use crate::domain::event::EventName;
use crate::domain::event_data::validate;
use crate::domain::session::Account;

fn cx() -> MapContext {
    MapContext {
        now: 1_000,
        own_users: vec!["15550001111".into()],
        push_name: Some("Ada".into()),
    }
}

fn one(ev: Event) -> NetworkEvent {
    let mut out = map_event(&ev, &cx());
    assert_eq!(out.len(), 1, "one event for {ev:?}");
    out.remove(0)
}

/// The data of an `Other` event, checked against the event's data shape.
fn data(ev: NetworkEvent, want: EventName) -> serde_json::Value {
    match ev {
        NetworkEvent::Other { event, data } => {
            assert_eq!(event, want);
            validate(event, &data)
                .unwrap_or_else(|e| panic!("{want:?} data fits its shape: {e:?}"));
            data
        }
        other => panic!("expected {want:?}, got {other:?}"),
    }
}

fn jid(s: &str) -> Jid {
    s.parse().unwrap()
}

#[test]
fn a_qr_code_expires_after_its_timeout() {
    let ev = PairingQrCode::builder()
        .code("2@abc,def".to_string())
        .timeout(Duration::from_secs(60))
        .build();
    let got = one(Event::PairingQrCode(ev));
    assert_eq!(
        got,
        NetworkEvent::Qr {
            code: "2@abc,def".into(),
            expires_at: 1_060
        }
    );
}

#[test]
fn a_pair_code_is_passed_on() {
    let ev = PairingCode::builder()
        .code("ABCD-EFGH".to_string())
        .timeout(Duration::from_secs(180))
        .build();
    assert_eq!(
        one(Event::PairingCode(ev)),
        NetworkEvent::PairCode {
            code: "ABCD-EFGH".into()
        }
    );
}

#[test]
fn a_throttled_pair_code_request_says_so_with_its_backoff() {
    let ev = PairingCodeError::builder()
        .error("rate-overlimit".to_string())
        .rejection(PairCodeRejection::RateOverlimit)
        .backoff(Duration::from_secs(30))
        .build();
    let d = data(
        one(Event::PairingCodeError(ev)),
        EventName::PairingCodeError,
    );
    assert_eq!(d["error"], "rate-overlimit");
    assert_eq!(d["rejection"], "RateOverlimit");
    assert_eq!(d["throttled"], true);
    assert_eq!(d["retry_after_seconds"], 30.0);
}

#[test]
fn a_local_pair_code_failure_has_no_rejection() {
    let ev = PairingCodeError::builder()
        .error("socket closed".to_string())
        .build();
    let d = data(
        one(Event::PairingCodeError(ev)),
        EventName::PairingCodeError,
    );
    assert_eq!(
        d,
        json!({"error": "socket closed", "rejection": null, "throttled": false, "retry_after_seconds": null})
    );
}

#[test]
fn a_forbidden_pair_code_is_a_rejection_but_not_throttled() {
    let ev = PairingCodeError::builder()
        .error("forbidden".to_string())
        .rejection(PairCodeRejection::Forbidden)
        .build();
    let d = data(
        one(Event::PairingCodeError(ev)),
        EventName::PairingCodeError,
    );
    assert_eq!(
        (d["rejection"].as_str(), d["throttled"].as_bool()),
        (Some("Forbidden"), Some(false))
    );
}

#[test]
fn pairing_stores_the_account_without_its_device_part() {
    let ev = PairSuccess::builder()
        .id(jid("15550001111:12@s.whatsapp.net"))
        .lid(jid("99887766:12@lid"))
        .business_name(String::new())
        .platform("android".to_string())
        .build();
    let want = Account {
        jid: "15550001111@s.whatsapp.net".into(),
        phone: "15550001111".into(),
        push_name: Some("Ada".into()),
    };
    assert_eq!(one(Event::PairSuccess(ev)), NetworkEvent::Paired(want));
}

#[test]
fn a_failed_pairing_closes_with_the_reason() {
    let ev = PairError::builder()
        .id(jid("15550001111:12@s.whatsapp.net"))
        .lid(jid("99887766:12@lid"))
        .business_name(String::new())
        .platform(String::new())
        .error("bad signature".to_string())
        .build();
    assert_eq!(
        one(Event::PairError(ev)),
        NetworkEvent::Disconnected {
            reason: "pairing failed: bad signature".into()
        }
    );
}

#[test]
fn connected_is_logged_in_and_a_drop_says_why() {
    assert_eq!(
        one(Event::Connected(Connected::builder().build())),
        NetworkEvent::LoggedIn
    );
    let ev = Disconnected::builder()
        .reason(DisconnectReason::StreamEnded)
        .build();
    match one(Event::Disconnected(ev)) {
        NetworkEvent::Disconnected { reason } => assert!(!reason.is_empty()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_logout_drops_the_account_but_a_lock_keeps_it() {
    let out = LoggedOut::builder()
        .on_connect(true)
        .reason(ConnectFailureReason::LoggedOut)
        .build();
    assert_eq!(
        one(Event::LoggedOut(out)),
        NetworkEvent::LoggedOut {
            reason: "LoggedOut".into()
        }
    );
    let locked = LoggedOut::builder()
        .on_connect(true)
        .reason(ConnectFailureReason::AccountLocked)
        .build();
    assert_eq!(
        one(Event::LoggedOut(locked)),
        NetworkEvent::AccountLocked {
            reason: "AccountLocked".into(),
            until: None,
            url: None,
        }
    );
    let worded = LoggedOut::builder()
        .on_connect(true)
        .reason(ConnectFailureReason::AccountLocked)
        .logout_message(
            LogoutMessage::builder()
                .header("Your account is locked".to_string())
                .subtext("Verify your number to use WhatsApp".to_string())
                .build(),
        )
        .build();
    assert_eq!(
        one(Event::LoggedOut(worded)),
        NetworkEvent::AccountLocked {
            reason: "AccountLocked: Your account is locked — Verify your number to use WhatsApp"
                .into(),
            until: None,
            url: None,
        },
        "the server's own words are kept"
    );
}

#[test]
fn connect_failures_map_to_lock_a_final_refusal_or_a_drop_worth_retrying() {
    let locked = ConnectFailure::builder()
        .reason(ConnectFailureReason::AccountLocked)
        .message("locked for spam".to_string())
        .build();
    assert_eq!(
        map_event(&Event::ConnectFailure(locked), &cx()),
        vec![NetworkEvent::AccountLocked {
            reason: "AccountLocked: locked for spam".into(),
            until: None,
            url: None,
        }]
    );
    let outdated = ConnectFailure::builder()
        .reason(ConnectFailureReason::ClientOutdated)
        .build();
    let got = map_event(&Event::ConnectFailure(outdated), &cx());
    assert_eq!(got.len(), 2);
    assert_eq!(data(got[0].clone(), EventName::ClientOutdated), json!({}));
    assert_eq!(
        got[1],
        NetworkEvent::Refused {
            reason: "ClientOutdated".into()
        }
    );
    let busy = ConnectFailure::builder()
        .reason(ConnectFailureReason::ServiceUnavailable)
        .build();
    assert_eq!(
        map_event(&Event::ConnectFailure(busy), &cx()),
        vec![NetworkEvent::Disconnected {
            reason: "ServiceUnavailable".into()
        }]
    );
    let unknown = ConnectFailure::builder()
        .reason(ConnectFailureReason::ClientUnknown)
        .build();
    assert_eq!(
        map_event(&Event::ConnectFailure(unknown), &cx()),
        vec![NetworkEvent::Refused {
            reason: "ClientUnknown".into()
        }]
    );
}

#[test]
fn a_temporary_ban_is_an_account_lock_naming_the_ban_with_its_expiry_and_appeal_link() {
    let ev = TemporaryBan::builder()
        .code(TempBanReason::SentToTooManyPeople)
        .expire(whatsapp_rust::wacore::chrono::Duration::seconds(3600))
        .url("https://faq.whatsapp.com/ban".to_string())
        .build();
    assert_eq!(
        one(Event::TemporaryBan(ev)),
        NetworkEvent::AccountLocked {
            reason: "temporary ban (SentToTooManyPeople) for 3600 s".into(),
            until: Some(cx().now + 3600),
            url: Some("https://faq.whatsapp.com/ban".into()),
        }
    );
}

#[test]
fn stream_errors_outdated_clients_and_offline_sync_are_forwarded() {
    let se = StreamError::builder().code("429".to_string()).build();
    assert_eq!(
        data(one(Event::StreamError(se)), EventName::StreamError),
        json!({"code": "429"})
    );
    let co = ClientOutdated::builder().build();
    let got = map_event(&Event::ClientOutdated(co), &cx());
    assert_eq!(data(got[0].clone(), EventName::ClientOutdated), json!({}));
    assert!(
        matches!(&got[1], NetworkEvent::Refused { reason } if reason.contains("ClientOutdated")),
        "an outdated client is not retried: {got:?}"
    );
    let preview = OfflineSyncPreview::builder()
        .total(10)
        .app_data_changes(1)
        .messages(5)
        .notifications(2)
        .receipts(1)
        .calls(1)
        .statuses(0)
        .build();
    let d = data(
        one(Event::OfflineSyncPreview(preview)),
        EventName::OfflineSyncPreview,
    );
    assert_eq!(
        (
            d["messages"].as_i64(),
            d["notifications"].as_i64(),
            d["receipts"].as_i64(),
            d["app_data_changes"].as_i64()
        ),
        (Some(5), Some(2), Some(1), Some(1))
    );
    let done = OfflineSyncCompleted::builder().count(5).build();
    assert_eq!(
        data(
            one(Event::OfflineSyncCompleted(done)),
            EventName::OfflineSyncCompleted
        ),
        json!({"count": 5})
    );
}

#[test]
fn a_replaced_stream_is_not_a_drop_to_reconnect_from() {
    match one(Event::StreamReplaced(
        whatsapp_rust::types::events::StreamReplaced::builder().build(),
    )) {
        NetworkEvent::Replaced { reason } => assert!(reason.contains("another client")),
        other => panic!("a replaced stream mapped to {other:?}"),
    }
}

#[test]
fn qr_codes_running_out_disconnects_only_when_the_crate_closed_the_socket() {
    use whatsapp_rust::types::events::PairingQrCodesExhausted;
    match one(Event::PairingQrCodesExhausted(
        PairingQrCodesExhausted::builder()
            .disconnected(true)
            .build(),
    )) {
        NetworkEvent::Disconnected { reason } => assert!(reason.contains("ran out"), "{reason}"),
        other => panic!("exhausted codes mapped to {other:?}"),
    }
    let still_up = Event::PairingQrCodesExhausted(
        PairingQrCodesExhausted::builder()
            .disconnected(false)
            .build(),
    );
    assert!(map_event(&still_up, &cx()).is_empty());
}

#[test]
fn a_scan_by_a_phone_without_linked_devices_is_a_pairing_error_that_says_why() {
    use whatsapp_rust::types::events::QrScannedWithoutMultidevice;
    let got = one(Event::QrScannedWithoutMultidevice(
        QrScannedWithoutMultidevice::builder().build(),
    ));
    let d = data(got, EventName::PairingCodeError);
    assert!(
        d["error"]
            .as_str()
            .is_some_and(|e| e.contains("linked devices")),
        "{d}"
    );
    assert_eq!(d["throttled"], false);
}

#[test]
fn a_refreshed_pair_code_is_not_an_event_of_its_own() {
    use whatsapp_rust::types::events::PairingCodeRefresh;
    let refresh =
        Event::PairingCodeRefresh(PairingCodeRefresh::builder().force_manual(true).build());
    assert!(map_event(&refresh, &cx()).is_empty());
}
