//! Network-side events delivered by the simulated network
//! (`POST /api/v1/sim/sessions/{id}/events`): each arrives on the event stream
//! with its data unchanged; bad data, events the gateway produces itself and
//! sessions that are not online are refused.

use serde_json::{Value, json};
use switchboard_tests::TestServer;

async fn post_event(
    server: &TestServer,
    session: &str,
    event: &str,
    data: Value,
) -> switchboard_tests::Resp {
    server
        .post(
            &format!("/api/v1/sim/sessions/{session}/events"),
            json!({ "event": event, "data": data }),
        )
        .await
}

/// One example of every event whose data shape the spec or docs/api.md fixes.
fn examples() -> Vec<(&'static str, Value)> {
    vec![
        (
            "picture_update",
            json!({ "jid": "15550001111@s.whatsapp.net", "action": "set" }),
        ),
        (
            "pin_update",
            json!({ "chat_jid": "15550001111@s.whatsapp.net", "pinned": true }),
        ),
        (
            "pairing_code_error",
            json!({ "error": "rate limited", "rejection": "RateOverlimit", "throttled": true, "retry_after_seconds": 30 }),
        ),
        (
            "call_log_sync",
            json!({
                "call_creator_jid": "15550001111@s.whatsapp.net", "call_id": "CALL1", "from_me": false,
                "timestamp": 1_700_000_000, "from_full_sync": false, "record": "CallLogRecord{…}",
            }),
        ),
        ("stream_error", json!({ "code": "429" })),
        (
            "enc_decrypt_failed",
            json!({ "chat": "15550001111@s.whatsapp.net", "sender": "15550001111@s.whatsapp.net", "message_id": "M1", "enc_index": 0, "enc_type": "pkmsg", "reason": "no session" }),
        ),
        (
            "receipt",
            json!({ "message_ids": ["M1", "M2"], "chat": "15550001111@s.whatsapp.net", "sender": "15550001111@s.whatsapp.net", "type": "read", "timestamp": 1_700_000_000 }),
        ),
        (
            "presence",
            json!({ "jid": "15550001111@s.whatsapp.net", "available": false, "last_seen": 1_700_000_000 }),
        ),
        (
            "chat_presence",
            json!({ "chat": "15550001111@s.whatsapp.net", "sender": "15550001111@s.whatsapp.net", "state": "composing", "media": "audio" }),
        ),
        (
            "push_name_update",
            json!({ "jid": "15550001111@s.whatsapp.net", "push_name": "New", "old_push_name": "Old" }),
        ),
        ("client_outdated", json!({})),
        (
            "mute_update",
            json!({ "chat_jid": "120363000000000001@g.us", "muted": true, "mute_end_timestamp": null }),
        ),
        (
            "device_list_update",
            json!({ "jid": "15550001111@s.whatsapp.net", "devices": [0, 3] }),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_network_side_event_arrives_on_the_stream_with_the_data_as_given() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    for (event, data) in examples() {
        let got = post_event(&server, "s", event, data.clone())
            .await
            .expect(200);
        assert_eq!(got["event"], event);
        let sse = loop {
            let e = stream.next().await.expect("an event");
            if e.event == event {
                break e;
            }
        };
        let env = sse.json();
        assert_eq!(env["session_id"], "s");
        assert_eq!(env["event"], event);
        assert_eq!(env["data"], data, "{event} arrives unchanged");
        assert!(env.get("offline").is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_that_misses_a_field_or_has_the_wrong_type_is_a_400_naming_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    for (event, data, field) in [
        (
            "pin_update",
            json!({ "chat_jid": "x", "pinned": "yes" }),
            "data.pinned",
        ),
        ("pin_update", json!({ "pinned": true }), "data.chat_jid"),
        (
            "pairing_code_error",
            json!({ "error": "e", "throttled": false, "retry_after_seconds": null }),
            "data.rejection",
        ),
        (
            "enc_decrypt_failed",
            json!({ "chat": "c", "sender": "s", "message_id": "m", "enc_index": 1.5, "enc_type": "t", "reason": "r" }),
            "data.enc_index",
        ),
        ("stream_error", json!({ "code": 429 }), "data.code"),
        (
            "receipt",
            json!({ "message_ids": ["M"], "chat": "c", "sender": "s", "type": "seen", "timestamp": 1 }),
            "data.type",
        ),
        ("client_outdated", json!("outdated"), "data"),
    ] {
        let msg = post_event(&server, "s", event, data)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains(&format!("`{field}`")), "{event}: {msg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_the_gateway_produces_itself_and_unknown_events_are_refused() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    for event in [
        "message",
        "qr_code",
        "pair_code",
        "connected",
        "logged_out",
        "blast_progress",
        "blast_completed",
        "account_locked",
        "telepathy",
    ] {
        let msg = post_event(&server, "s", event, json!({}))
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains("`event`"), "{event}: {msg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_is_not_online_gets_a_409_and_an_unknown_one_a_404() {
    let server = TestServer::start().await;
    server.create_session("idle").await;
    post_event(&server, "idle", "stream_error", json!({ "code": "429" }))
        .await
        .expect_error(409, "session_not_connected");
    server.paired_session("off").await;
    server
        .post_empty("/api/v1/sessions/off/disconnect")
        .await
        .expect(200);
    post_event(&server, "off", "stream_error", json!({ "code": "429" }))
        .await
        .expect_error(409, "session_not_connected");
    post_event(&server, "nobody", "stream_error", json!({ "code": "429" }))
        .await
        .expect_error(404, "not_found_on_network");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnected_event_drops_the_session_like_a_network_drop() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    post_event(
        &server,
        "s",
        "disconnected",
        json!({ "reason": "stream replaced" }),
    )
    .await
    .expect(200);
    let env = stream.find_event("s", "disconnected").await;
    assert_eq!(env["data"], json!({ "reason": "stream replaced" }));
    let status = server.wait_for_status("s", "disconnected").await;
    assert_eq!(status["is_logged_in"], true, "credentials are kept");
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
}
