//! Pause: a paused session is deliberately offline, keeps its data, receives
//! nothing and sends nothing until it is resumed; what the network held for
//! it arrives after the resume, marked offline.

use std::time::Duration;

use serde_json::json;
use switchboard_tests::TestServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_receives_nothing_and_sends_nothing() {
    let server =
        TestServer::start_with(|c| c.reconnect.delays = vec![Duration::from_millis(50)]).await;
    server.paired_session("a").await;
    let b = server.paired_session("b").await;
    let mut stream = server.open_stream("session=a").await;
    assert_eq!(
        server
            .post_empty("/api/v1/sessions/a/pause")
            .await
            .expect(200),
        json!({ "paused": true })
    );
    let status = server.get("/api/v1/sessions/a/status").await.expect(200);
    assert_eq!(status["paused"], true);
    assert_eq!(status["status"], "disconnected");
    assert_eq!(status["is_logged_in"], true, "keeps its account");
    // Nothing reaches it: a message waits on the network, events and address
    // book changes are not delivered, lookups are refused.
    let a_phone = server.get("/api/v1/sessions/a").await.body["phone_number"].clone();
    server
        .post(
            "/api/v1/sessions/b/messages/text",
            json!({ "to": a_phone, "text": "are you there?" }),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sim/sessions/a/events",
            json!({ "event": "stream_error", "data": { "code": "503" } }),
        )
        .await
        .expect_error(409, "session_not_connected");
    server
        .post(
            "/api/v1/sim/sessions/a/address-book",
            json!({ "phone": "15550001111", "full_name": "Ann" }),
        )
        .await
        .expect(201);
    // And nothing leaves it.
    server
        .post(
            "/api/v1/sessions/a/messages/text",
            json!({ "to": b["phone_number"], "text": "hi" }),
        )
        .await
        .expect_error(409, "session_paused");
    server
        .post(
            "/api/v1/sessions/a/tctoken/issue",
            json!({ "jids": ["15550001111"] }),
        )
        .await
        .expect_error(409, "session_paused");
    // No auto-reconnect while paused: a dropped session comes back meanwhile.
    crate::reconnect::stays_disconnected(&server, "a").await;
    let messages = server.get("/api/v1/sessions/a/messages").await.expect(200);
    assert_eq!(messages["count"], 0);
    let contacts = server.get("/api/v1/sessions/a/contacts").await.expect(200);
    assert_eq!(contacts["total"], 0);
    let outbox = server
        .get("/api/v1/sim/sessions/a/outbox")
        .await
        .expect(200);
    assert_eq!(outbox["count"], 0);
    // The resume brings what waited, and the first message event is that one.
    assert_eq!(
        server
            .post_empty("/api/v1/sessions/a/resume")
            .await
            .expect(200),
        json!({ "paused": false })
    );
    let first = stream
        .find(|e| e["event"] == "message" || e["event"] == "stream_error")
        .await;
    assert_eq!(first["event"], "message", "{first}");
    assert_eq!(first["data"]["text"], "are you there?");
    assert_eq!(first["offline"], true);
    server.wait_for_status("a", "logged_in").await;
    let contacts = server.get("/api/v1/sessions/a/contacts").await.expect(200);
    assert!(contacts["total"].as_u64().unwrap() >= 1, "{contacts}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_is_not_connected_by_a_restart_and_resumes_afterwards() {
    let mut server = TestServer::start().await;
    server.paired_session("p").await;
    server.paired_session("q").await;
    server
        .post_empty("/api/v1/sessions/p/pause")
        .await
        .expect(200);
    server.restart().await;
    // `q` is brought back by the restart: by the time it is, `p` would have
    // been too, were a pause not kept.
    server.wait_for_status("q", "logged_in").await;
    let s = server.get("/api/v1/sessions/p").await.expect(200);
    assert_eq!(
        (s["paused"].clone(), s["status"].clone()),
        (json!(true), json!("disconnected"))
    );
    server
        .post_empty("/api/v1/sessions/p/connect")
        .await
        .expect_error(409, "session_paused");
    server
        .post_empty("/api/v1/sessions/p/resume")
        .await
        .expect(200);
    server.wait_for_status("p", "logged_in").await;
}
