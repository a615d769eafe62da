//! What the gateway's real `whatsapp` backend does when the wire server
//! says no: each scripted login refusal, stream error, dropped connection
//! and unlink ends in its documented event and reconnect behaviour. The
//! gateway's reconnect schedule is 50 ms here, so a session that retried
//! what it must not would log in or be refused many times within the
//! quiet second each test waits.

use std::time::Duration;

use switchboard_tests::sse::EventStream;
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};
use switchboard_wire::{LoginFailure, Seen};

/// A gateway reconnecting fast, with session `wa` linked, and a stream of
/// its connection events.
async fn linked() -> (Wired, EventStream) {
    let w = Wired::start_with(|c| {
        c.reconnect.delays = vec![Duration::from_millis(50)];
        c.reconnect.stable_after = Duration::from_secs(30);
    })
    .await;
    w.linked("wa").await;
    let stream = w
        .server
        .open_stream(
            "session=wa&events=connected,disconnected,logged_out,account_locked,client_outdated,stream_error",
        )
        .await;
    (w, stream)
}

/// From now on the server refuses every login with `failure`, and it drops
/// the session's connection so that the gateway logs in again.
fn refuse_every_login(w: &Wired, failure: LoginFailure) {
    w.wire.refuse_logins(GATEWAY_PHONE, Some(failure));
    w.wire.drop_connections(GATEWAY_PHONE);
}

fn refusals(w: &Wired) -> usize {
    w.wire.count(|s| matches!(s, Seen::Refused { .. }))
}

fn logins(w: &Wired) -> usize {
    w.wire.count(|s| matches!(s, Seen::LoggedIn { .. }))
}

/// Waits a quiet second, in which a session retrying at 50 ms would try
/// about twenty times.
async fn quiet() {
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_refused_as_logged_out_ends_the_session_and_is_never_retried() {
    let (w, mut stream) = linked().await;
    refuse_every_login(&w, LoginFailure::reason(401));
    let out = stream.find(|e| e["event"] == "logged_out").await;
    assert!(
        out["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("LoggedOut"),
        "{out}"
    );
    quiet().await;
    assert_eq!(refusals(&w), 1, "{:?}", w.wire.seen());
    let session = w.server.get("/api/v1/sessions/wa").await.expect(200);
    assert_eq!(session["status"], "disconnected", "{session}");
    assert_eq!(
        session["phone_number"],
        serde_json::Value::Null,
        "{session}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_account_is_told_with_its_cooldown_and_not_retried_within_it() {
    let (w, mut stream) = linked().await;
    refuse_every_login(&w, LoginFailure::reason(403));
    let locked = stream.find(|e| e["event"] == "account_locked").await;
    assert!(
        locked["data"]["cooldown_secs"].as_i64().unwrap() > 0,
        "{locked}"
    );
    quiet().await;
    assert_eq!(refusals(&w), 1, "{:?}", w.wire.seen());
    // The credentials stay: the account is locked, not unlinked.
    let session = w.server.get("/api/v1/sessions/wa").await.expect(200);
    assert_eq!(session["phone_number"], GATEWAY_PHONE, "{session}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_temporary_ban_names_its_expiry_and_is_not_retried_within_it() {
    let (w, mut stream) = linked().await;
    refuse_every_login(
        &w,
        LoginFailure::reason(402)
            .with("code", 101)
            .with("expire", 3600),
    );
    let locked = stream.find(|e| e["event"] == "account_locked").await;
    let reason = locked["data"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("temporary ban") && reason.contains("3600 s"),
        "{locked}"
    );
    let now = switchboard_wire::now() as i64;
    let expires = locked["data"]["expires_at"]
        .as_i64()
        .expect("the ban's end");
    assert!((now + 3590..=now + 3600).contains(&expires), "{locked}");
    assert!(
        locked["data"]["cooldown_secs"].as_i64().unwrap() >= 3590,
        "the cooldown lasts as long as the ban, not the schedule's first step: {locked}"
    );
    quiet().await;
    assert_eq!(refusals(&w), 1, "{:?}", w.wire.seen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outdated_client_is_told_so_and_not_retried() {
    let (w, mut stream) = linked().await;
    refuse_every_login(&w, LoginFailure::reason(405));
    stream.find(|e| e["event"] == "client_outdated").await;
    quiet().await;
    assert_eq!(refusals(&w), 1, "{:?}", w.wire.seen());
    let status = w.server.get("/api/v1/sessions/wa/status").await.expect(200);
    assert_eq!(status["status"], "disconnected", "{status}");
    assert!(
        status["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("ClientOutdated"),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_refused_while_the_service_is_unavailable_is_retried_with_a_growing_pause() {
    let w = Wired::start_with(|c| {
        c.reconnect.delays = [100, 200, 400, 800, 1600, 3200]
            .into_iter()
            .map(Duration::from_millis)
            .collect();
    })
    .await;
    w.linked("wa").await;
    refuse_every_login(&w, LoginFailure::reason(503));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    // 100 + 200 + 400 + 800 ms: at most five tries in 2.5 s (a fixed
    // 100 ms pause would have made about twenty-five).
    let tried = refusals(&w);
    assert!(
        (2..=5).contains(&tried),
        "{tried} tries: {:?}",
        w.wire.seen()
    );
    w.wire.refuse_logins(GATEWAY_PHONE, None);
    w.logged_in("wa").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_restart_515_logs_straight_back_in() {
    let (w, mut stream) = linked().await;
    let before = logins(&w);
    w.wire.stream_error(GATEWAY_PHONE, 515);
    stream.find(|e| e["event"] == "connected").await;
    w.logged_in("wa").await;
    assert_eq!(logins(&w), before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_stream_error_429_makes_the_session_wait_before_it_logs_in_again() {
    // Five quick steps, then a long one: the 429's penalty of five failures
    // lands on the long one.
    let w = Wired::start_with(|c| {
        c.reconnect.delays = [50, 50, 50, 50, 50, 5000]
            .into_iter()
            .map(Duration::from_millis)
            .collect();
    })
    .await;
    w.linked("wa").await;
    let mut stream = w
        .server
        .open_stream("session=wa&events=stream_error,disconnected")
        .await;
    let before = logins(&w);
    w.wire.stream_error(GATEWAY_PHONE, 429);
    let err = stream.find(|e| e["event"] == "stream_error").await;
    assert_eq!(err["data"]["code"], "429", "{err}");
    quiet().await;
    assert_eq!(
        logins(&w),
        before,
        "no login within a second of a 429: {:?}",
        w.wire.seen()
    );
    let status = w.server.get("/api/v1/sessions/wa/reconnect").await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert!(
        status.body["error_count"].as_u64().unwrap() >= 5,
        "{}",
        status.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_replaced_by_another_client_is_reported_and_not_fought_over() {
    let (w, mut stream) = linked().await;
    let before = logins(&w);
    w.wire.stream_error(GATEWAY_PHONE, 0);
    let gone = stream.find(|e| e["event"] == "disconnected").await;
    assert!(
        gone["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("replaced"),
        "{gone}"
    );
    quiet().await;
    assert_eq!(logins(&w), before, "{:?}", w.wire.seen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_comes_back_and_a_message_sent_meanwhile_arrives_once() {
    let (w, mut stream) = linked().await;
    let customer = w.customer("15550000501", "Ivy").await;
    w.wire.drop_connections(GATEWAY_PHONE);
    stream.find(|e| e["event"] == "disconnected").await;
    customer
        .send_text(GATEWAY_PHONE, "while you were away")
        .await
        .unwrap();
    stream.find(|e| e["event"] == "connected").await;
    let got = w
        .inbound("wa", |m| m["body"]["text"] == "while you were away")
        .await;
    assert_eq!(got["chat"], "15550000501@s.whatsapp.net");
    w.wire
        .wait(Duration::from_secs(10), |_| {
            w.wire.owed(GATEWAY_PHONE, 1) == 0
        })
        .await
        .unwrap();
    let copies = w
        .server
        .inbound_messages("wa")
        .await
        .into_iter()
        .filter(|m| m["body"]["text"] == "while you were away")
        .count();
    assert_eq!(copies, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_out_from_the_gateway_unlinks_the_device_on_the_phone() {
    let (w, _stream) = linked().await;
    let out = w
        .server
        .post_empty("/api/v1/sessions/wa/logout")
        .await
        .expect(200);
    assert_eq!(out["status"], "disconnected", "{out}");
    w.wire
        .wait(Duration::from_secs(10), |seen| {
            seen.iter()
                .any(|s| matches!(s, Seen::LoggedOut { device: 1, .. }))
        })
        .await
        .unwrap();
    assert_eq!(w.wire.devices(GATEWAY_PHONE), vec![(1, false, true)]);
    assert_eq!(out["phone_number"], serde_json::Value::Null, "{out}");
    // Connecting again shows a QR code: the device is gone.
    w.server
        .post_empty("/api/v1/sessions/wa/connect")
        .await
        .expect(200);
    w.wait_status("wa", "waiting_for_qr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logout_whose_unlink_the_server_refuses_says_the_device_is_still_linked() {
    let (w, mut stream) = linked().await;
    w.wire.refuse_unlink(GATEWAY_PHONE);
    w.server
        .post_empty("/api/v1/sessions/wa/logout")
        .await
        .expect(200);
    let out = stream.find(|e| e["event"] == "logged_out").await;
    let reason = out["data"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("could not be unlinked") && reason.contains("Linked devices"),
        "{out}"
    );
    let devices = w.wire.devices(GATEWAY_PHONE);
    assert!(
        devices.len() == 1 && !devices[0].2,
        "the device is still on the phone: {devices:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlinking_the_device_on_the_phone_logs_the_session_out_for_good() {
    let (w, mut stream) = linked().await;
    w.wire.unlink_from_phone(GATEWAY_PHONE, 1);
    stream.find(|e| e["event"] == "logged_out").await;
    quiet().await;
    assert_eq!(logins(&w), 1, "{:?}", w.wire.seen());
    assert_eq!(refusals(&w), 0, "{:?}", w.wire.seen());
    let session = w.server.get("/api/v1/sessions/wa").await.expect(200);
    assert_eq!(
        session["phone_number"],
        serde_json::Value::Null,
        "{session}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_refused_with_a_reason_retrying_cannot_change_is_not_retried() {
    let (w, mut stream) = linked().await;
    refuse_every_login(&w, LoginFailure::reason(409));
    // 409 is a bad user agent: no retry makes it good.
    let gone = stream
        .find(|e| {
            e["event"] == "disconnected"
                && e["data"]["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("BadUserAgent"))
        })
        .await;
    quiet().await;
    assert_eq!(refusals(&w), 1, "{gone} {:?}", w.wire.seen());
    let status = w.server.get("/api/v1/sessions/wa/status").await.expect(200);
    assert_eq!(status["status"], "disconnected", "{status}");
    // The credentials stay: connecting again is the operator's call.
    assert_eq!(status["phone_number"], GATEWAY_PHONE, "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_logged_in_session_unlinks_its_device_on_the_phone() {
    let (w, _stream) = linked().await;
    w.server.delete("/api/v1/sessions/wa").await.expect(200);
    w.wire
        .wait(Duration::from_secs(10), |seen| {
            seen.iter()
                .any(|s| matches!(s, Seen::LoggedOut { device: 1, .. }))
        })
        .await
        .unwrap();
    assert_eq!(w.wire.devices(GATEWAY_PHONE), vec![(1, false, true)]);
}
