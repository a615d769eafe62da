//! The live event stream: Server-Sent Events filtered by session and event,
//! the envelope fields, the `offline` flag of redelivered messages, and a
//! gateway that stops cleanly while streams are open.

use serde_json::{Value, json};
use switchboard_tests::TestServer;

async fn inject(server: &TestServer, session: &str, body: Value) -> String {
    let got = server
        .post(&format!("/api/v1/sim/sessions/{session}/inbound"), body)
        .await
        .expect(200);
    got["message_id"].as_str().unwrap().to_owned()
}

fn is_message(id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |e: &Value| e["event"] == "message" && e["data"]["message_id"] == id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_envelope_is_an_sse_event_named_after_it_with_the_envelope_as_data() {
    let server = TestServer::start().await;
    let mut stream = server.open_stream("").await;
    server.paired_session("s").await;
    let sse = loop {
        let e = stream.next().await.expect("an event");
        if e.event == "connected" {
            break e;
        }
    };
    let env = sse.json();
    assert_eq!(env["session_id"], "s");
    assert_eq!(env["event"], "connected");
    assert!(env["timestamp"].as_i64().unwrap() > 0);
    assert_eq!(env["data"], json!({}));
    assert!(env.get("offline").is_none(), "offline is for messages only");

    let id = inject(&server, "s", json!({ "from": "15550001111", "text": "hi" })).await;
    let env = stream.find(is_message(&id)).await;
    assert_eq!(env["session_id"], "s");
    assert_eq!(env["data"]["text"], "hi");
    assert_eq!(env["offline"], false, "a live arrival");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_filter_lets_only_that_sessions_events_through() {
    let server = TestServer::start().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let mut everything = server.open_stream("").await;
    let mut only_a = server.open_stream("session=a,ghost").await;

    let from_b = inject(
        &server,
        "b",
        json!({ "from": "15550001111", "text": "to b" }),
    )
    .await;
    everything.find(is_message(&from_b)).await;
    let from_a = inject(
        &server,
        "a",
        json!({ "from": "15550001111", "text": "to a" }),
    )
    .await;

    let seen = only_a.until(is_message(&from_a)).await;
    assert!(
        seen.iter().all(|e| e["session_id"] == "a"),
        "only a's events: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_filter_lets_only_those_events_through() {
    let server = TestServer::start().await;
    let mut messages = server.open_stream("events=message").await;
    let mut lifecycle = server
        .open_stream("session=f&events=connected,disconnected")
        .await;
    server.paired_session("f").await;
    let id = inject(
        &server,
        "f",
        json!({ "from": "15550001111", "text": "one" }),
    )
    .await;
    server
        .post_empty("/api/v1/sessions/f/disconnect")
        .await
        .expect(200);

    let connected = lifecycle.next_envelope().await;
    assert_eq!(connected["event"], "connected");
    let disconnected = lifecycle.next_envelope().await;
    assert_eq!(disconnected["event"], "disconnected");
    assert_eq!(disconnected["data"]["reason"], "disconnected on request");

    let first = messages.next_envelope().await;
    assert_eq!(
        first["event"], "message",
        "qr and connected events are filtered out"
    );
    assert_eq!(first["data"]["message_id"], id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_is_every_event_and_an_unknown_event_name_is_a_400_naming_it() {
    let server = TestServer::start().await;
    let mut stream = server.open_stream("events=all").await;
    server.paired_session("s").await;
    stream.find_event("s", "connected").await;

    let resp = server.stream_response("events=message,telepathy").await;
    let err = TestServer::read(resp).await;
    let message = err.expect_error(400, "invalid_query");
    assert!(message.contains("telepathy"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_needs_the_api_token() {
    let server = TestServer::start().await;
    let resp = server
        .http()
        .get(format!("{}/api/v1/events/stream", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_waited_out_a_disconnect_arrives_offline_and_a_live_one_does_not() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server.open_stream("session=s").await;
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    let waited = inject(
        &server,
        "s",
        json!({ "from": "15550001111", "text": "while away" }),
    )
    .await;
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);

    let seen = stream.until(is_message(&waited)).await;
    // The pairing's own `connected` is released once recorded, which can be
    // after the stream opened: what this test is about starts at the drop.
    let from = seen
        .iter()
        .position(|e| e["event"] == "disconnected")
        .expect("the drop is on the stream");
    let seen = &seen[from..];
    let names: Vec<&str> = seen.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "disconnected",
            "connected",
            "offline_sync_preview",
            "message"
        ]
    );
    assert_eq!(seen[2]["data"]["messages"], 1);
    let waited_env = seen.last().unwrap();
    assert_eq!(waited_env["offline"], true);
    assert_eq!(waited_env["data"]["text"], "while away");
    let done = stream.next_envelope().await;
    assert_eq!(done["event"], "offline_sync_completed");
    assert_eq!(done["data"]["count"], 1);

    let live = inject(
        &server,
        "s",
        json!({ "from": "15550001111", "text": "back" }),
    )
    .await;
    let live_env = stream.find(is_message(&live)).await;
    assert_eq!(live_env["offline"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_stops_cleanly_while_a_stream_is_open_and_the_stream_ends() {
    let server = TestServer::start().await;
    let mut stream = server.open_stream("").await;
    server.stop().await;
    while let Some(e) = stream.next().await {
        assert_ne!(e.event, "lagged");
    }
}
