//! Auto-reconnect after a network drop (counted failures, switched off,
//! never after a requested disconnect or a pause) and the account lock: the
//! cooldown schedule walks and repeats, auto-reconnect resumes after it, and
//! a manual connect lifts it at once.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

fn secs(list: &[f64]) -> Vec<Duration> {
    list.iter().map(|s| Duration::from_secs_f64(*s)).collect()
}

/// Reconnects after 50 ms; locks cool down for `lock` seconds.
async fn server_with(lock: &[f64]) -> TestServer {
    let lock = secs(lock);
    TestServer::start_with(move |c| {
        c.reconnect.delays = secs(&[0.05]);
        c.reconnect.lock_backoff = lock;
        // A login lasts long enough at once: these tests are about failed
        // reconnects, not about connections dropped right after a login.
        c.reconnect.stable_after = Duration::ZERO;
    })
    .await
}

pub(crate) async fn drop_session(server: &TestServer, id: &str) {
    server
        .post(
            &format!("/api/v1/sim/sessions/{id}/events"),
            json!({ "event": "disconnected", "data": { "reason": "stream error" } }),
        )
        .await
        .expect(200);
}

async fn lock(server: &TestServer, id: &str, reason: &str) {
    server
        .post(
            &format!("/api/v1/sim/sessions/{id}/lock"),
            json!({ "reason": reason }),
        )
        .await
        .expect(200);
}

/// Asserts the session stays `disconnected` for as long as a control session
/// on the same gateway takes to be dropped and come back by itself: were the
/// session going to reconnect on the same schedule, it would have done so
/// by then. Each call pairs a control session of its own.
pub(crate) async fn stays_disconnected(server: &TestServer, id: &str) {
    let count = server.get("/api/v1/sessions").await.expect(200)["count"]
        .as_u64()
        .expect("a session count");
    let control = format!("control-{count}");
    server.paired_session(&control).await;
    let mut stream = server.open_stream(&format!("session={control}")).await;
    drop_session(server, &control).await;
    stream.find_event(&control, "disconnected").await;
    stream.find_event(&control, "connected").await;
    let body = server.get(&format!("/api/v1/sessions/{id}")).await.body;
    assert_eq!(body["status"], "disconnected", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_session_reconnects_by_itself() {
    let server = server_with(&[300.0]).await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    drop_session(&server, "s").await;
    stream.find_event("s", "disconnected").await;
    stream.find_event("s", "connected").await;
    server.wait_for_status("s", "logged_in").await;
    assert_eq!(
        server.get("/api/v1/sessions/s/reconnect").await.expect(200)["error_count"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drop_shows_the_next_attempt_and_its_reason_until_it_comes() {
    let server = TestServer::start_with(|c| {
        c.reconnect.delays = secs(&[1.0]);
        c.reconnect.jitter_percent = 50;
        c.reconnect.stable_after = Duration::ZERO;
    })
    .await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    drop_session(&server, "s").await;
    let scheduled = stream.find_event("s", "reconnect_scheduled").await["data"].clone();
    assert_eq!(
        scheduled["reason"], "after a drop: stream error",
        "{scheduled}"
    );
    let delay = scheduled["delay_ms"].as_u64().unwrap();
    assert!(
        (1000..=1500).contains(&delay),
        "the step, stretched by at most half: {scheduled}"
    );
    let session = server.get("/api/v1/sessions/s").await.expect(200);
    assert_eq!(session["next_reconnect"], scheduled, "{session}");
    let status = server.get("/api/v1/sessions/s/reconnect").await.expect(200);
    assert_eq!(status["next_attempt"], scheduled, "{status}");
    stream.find_event("s", "connected").await;
    let session = server.get("/api/v1/sessions/s").await.expect(200);
    assert!(session["next_reconnect"].is_null(), "{session}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auto_reconnect_off_a_dropped_session_stays_down() {
    let server = server_with(&[300.0]).await;
    server.paired_session("s").await;
    server
        .call(
            Method::PUT,
            "/api/v1/sessions/s/reconnect",
            Some(json!({ "enabled": false })),
        )
        .await
        .expect(200);
    drop_session(&server, "s").await;
    server.wait_for_status("s", "disconnected").await;
    stays_disconnected(&server, "s").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requested_disconnect_and_a_pause_are_not_undone() {
    let server = server_with(&[300.0]).await;
    server.paired_session("d").await;
    server.paired_session("p").await;
    server
        .post_empty("/api/v1/sessions/d/disconnect")
        .await
        .expect(200);
    server
        .post_empty("/api/v1/sessions/p/pause")
        .await
        .expect(200);
    stays_disconnected(&server, "d").await;
    stays_disconnected(&server, "p").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_reconnects_are_counted_until_a_login_resets_them() {
    let server = server_with(&[300.0]).await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/faults",
            json!({ "fail_connect": true }),
        )
        .await
        .expect(200);
    drop_session(&server, "s").await;
    eventually("two failed reconnects", || async {
        let body = server.get("/api/v1/sessions/s/reconnect").await.body;
        (body["error_count"].as_u64()? >= 2).then_some(())
    })
    .await;
    let status = server.get("/api/v1/sessions/s").await.body;
    assert!(
        status["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("connect failure"),
        "{status}"
    );
    server
        .delete("/api/v1/sim/sessions/s/faults")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    assert_eq!(
        server.get("/api/v1/sessions/s/reconnect").await.expect(200)["error_count"],
        0
    );
}

/// Locks `s`, checks the events and returns the `account_locked` data.
async fn lock_and_read(
    server: &TestServer,
    stream: &mut switchboard_tests::sse::EventStream,
) -> Value {
    lock(server, "s", "suspicious activity").await;
    let dropped = stream.find_event("s", "disconnected").await;
    assert_eq!(
        dropped["data"]["reason"],
        "account locked: suspicious activity"
    );
    let env = stream.find_event("s", "account_locked").await;
    env["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_locks_walk_the_cooldown_schedule_and_connect_lifts_each() {
    let server = server_with(&[100.0, 200.0, 300.0]).await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    let mut seen = Vec::new();
    for _ in 0..4 {
        let data = lock_and_read(&server, &mut stream).await;
        assert_eq!(data["reason"], "suspicious activity");
        let cooldown = data["cooldown_secs"].as_i64().unwrap();
        let until = data["cooldown_until"].as_i64().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert!((until - now - cooldown).abs() <= 2, "{data}");
        seen.push(cooldown);
        stays_disconnected(&server, "s").await;
        let status = server.get("/api/v1/sessions/s/reconnect").await.expect(200);
        assert_eq!(status["cooldown_until"], until, "{status}");
        server
            .post_empty("/api/v1/sessions/s/connect")
            .await
            .expect(200);
        server.wait_for_status("s", "logged_in").await;
        let status = server.get("/api/v1/sessions/s/reconnect").await.expect(200);
        assert_eq!(status["cooldown_until"], Value::Null, "connect lifted it");
    }
    assert_eq!(seen, [100, 200, 300, 300], "the last step repeats");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_whose_end_the_network_states_cools_down_at_least_until_then() {
    let server = server_with(&[100.0]).await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    for (expires, cooldown) in [(500u64, 500i64), (5, 100)] {
        server
            .post(
                "/api/v1/sim/sessions/s/lock",
                json!({ "reason": "temporary ban", "expires_in_secs": expires }),
            )
            .await
            .expect(200);
        let data = stream.find_event("s", "account_locked").await["data"].clone();
        let got = data["cooldown_secs"].as_i64().unwrap();
        assert!(
            (cooldown - 1..=cooldown).contains(&got),
            "the longer of the stated end and the schedule's step: {data}"
        );
        let stated = data["expires_at"].as_i64().expect("the stated end");
        assert!(data["cooldown_until"].as_i64().unwrap() >= stated, "{data}");
        stays_disconnected(&server, "s").await;
        server
            .post_empty("/api/v1/sessions/s/connect")
            .await
            .expect(200);
        server.wait_for_status("s", "logged_in").await;
    }
    let bad = server
        .post(
            "/api/v1/sim/sessions/s/lock",
            json!({ "expires_in_secs": 0 }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(bad.contains("expires_in_secs"), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_reconnect_resumes_once_the_cooldown_is_over() {
    let server = server_with(&[0.4]).await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    let started = Instant::now();
    let data = lock_and_read(&server, &mut stream).await;
    assert_eq!(data["cooldown_secs"], 1, "whole seconds, rounded up");
    stream.find_event("s", "connected").await;
    assert!(
        started.elapsed() >= Duration::from_millis(350),
        "not before the cooldown: {:?}",
        started.elapsed()
    );
    server.wait_for_status("s", "logged_in").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_needs_an_online_session_and_the_event_cannot_be_faked() {
    let server = server_with(&[300.0]).await;
    server.create_session("idle").await;
    server
        .post("/api/v1/sim/sessions/idle/lock", json!({}))
        .await
        .expect_error(409, "session_not_connected");
    server
        .post_empty("/api/v1/sim/sessions/ghost/lock")
        .await
        .expect_error(404, "not_found_on_network");
    server.paired_session("s").await;
    let msg = server
        .post(
            "/api/v1/sim/sessions/s/events",
            json!({ "event": "account_locked", "data": { "reason": "r", "cooldown_secs": 1, "cooldown_until": 1 } }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("/lock"), "{msg}");
    let body = server
        .post_empty("/api/v1/sim/sessions/s/lock")
        .await
        .expect(200);
    assert_eq!(body["reason"], "locked by the network");
    server.wait_for_status("s", "disconnected").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_replaced_by_another_client_is_not_reconnected_not_even_by_a_restart() {
    let mut server = server_with(&[300.0]).await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    server
        .post_empty("/api/v1/sim/sessions/s/replace")
        .await
        .expect(200);
    let dropped = stream.find_event("s", "disconnected").await;
    assert!(
        dropped["data"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("replaced")),
        "{dropped}"
    );
    // Reconnects are 50 ms apart here: staying down is a decision, not a wait.
    stays_disconnected(&server, "s").await;
    let session = server.get("/api/v1/sessions/s").await.expect(200);
    assert!(
        session["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("replaced")),
        "{session}"
    );
    server.restart().await;
    stays_disconnected(&server, "s").await;
    // The operator takes the device back on purpose.
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
}
