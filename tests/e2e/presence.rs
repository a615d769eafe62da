//! Presence and typing between two sim sessions: a subscriber hears the
//! current presence at once and every change after; typing, recording and
//! pausing arrive as `chat_presence`; blasts and scheduled sends show typing
//! first when configured to.

use std::time::Duration;

use serde_json::json;
use switchboard_tests::TestServer;

use crate::chat_actions::next_event;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_hears_the_current_presence_at_once_and_each_change_after() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let mut alices = server.open_stream("session=alice").await;
    server
        .post(
            "/api/v1/sessions/alice/presence/subscribe",
            json!({ "jid": bob["jid"] }),
        )
        .await
        .expect(200);
    let now = next_event(&mut alices, "presence", |_| true).await;
    assert_eq!(now["data"]["jid"], bob["jid"]);
    assert_eq!(now["data"]["available"], false);
    server
        .post(
            "/api/v1/sessions/bob/presence/set",
            json!({ "status": "available" }),
        )
        .await
        .expect(200);
    let online = next_event(&mut alices, "presence", |e| e["data"]["available"] == true).await;
    assert_eq!(online["data"]["jid"], bob["jid"]);
    assert_eq!(online["data"]["last_seen"], serde_json::Value::Null);
    server
        .post(
            "/api/v1/sessions/bob/presence/set",
            json!({ "status": "unavailable" }),
        )
        .await
        .expect(200);
    let offline = next_event(&mut alices, "presence", |e| e["data"]["available"] == false).await;
    assert!(offline["data"]["last_seen"].as_i64().unwrap() > 0);

    server
        .post(
            "/api/v1/sessions/bob/presence/set",
            json!({ "status": "away" }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_recording_and_pausing_reach_the_other_side_as_chat_presence() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let mut alices = server.open_stream("session=alice").await;
    for (state, seen, media) in [
        ("composing", "composing", "text"),
        ("recording", "composing", "audio"),
        ("paused", "paused", "text"),
    ] {
        server
            .post(
                "/api/v1/sessions/bob/chatstate/send",
                json!({ "to": alice["jid"], "state": state }),
            )
            .await
            .expect(200);
        let got = next_event(&mut alices, "chat_presence", |_| true).await;
        assert_eq!(got["data"]["chat"], bob["jid"], "{state}");
        assert_eq!(got["data"]["sender"], bob["jid"], "{state}");
        assert_eq!(got["data"]["state"], seen, "{state}");
        assert_eq!(got["data"]["media"], media, "{state}");
    }
    // waxum's typing shortcut.
    server
        .post(
            "/api/v1/sessions/bob/chatstate/typing",
            json!({ "to": alice["jid"] }),
        )
        .await
        .expect(200);
    let got = next_event(&mut alices, "chat_presence", |_| true).await;
    assert_eq!(got["data"]["state"], "composing");
    server
        .post(
            "/api/v1/sessions/bob/chatstate/send",
            json!({ "to": alice["jid"], "state": "shouting" }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_shows_typing_before_each_message_when_configured() {
    let server =
        TestServer::start_with(|c| c.typing_before_send = Duration::from_millis(200)).await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let mut alices = server.open_stream("session=alice").await;
    server
        .post(
            "/api/v1/sessions/bob/blast",
            json!({
                "endpoint": "text",
                "recipients": [alice["jid"]],
                "body": { "to": "{{recipient}}", "text": "hello from the blast" },
            }),
        )
        .await
        .expect(201);
    // Typing comes first, then the message.
    let first = loop {
        let e = alices.next().await.expect("the stream goes on");
        if e.event == "chat_presence" || e.event == "message" {
            break e;
        }
    };
    assert_eq!(first.event, "chat_presence");
    assert_eq!(first.json()["data"]["state"], "composing");
    let message = next_event(&mut alices, "message", |_| true).await;
    assert_eq!(message["data"]["text"], "hello from the blast");
}
