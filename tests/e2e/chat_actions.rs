//! Actions on messages between two sim sessions, each seen where it lands:
//! read receipts at the sender, revokes, edits, pins and forwards at the
//! recipient as `message` events naming their target, stars with the
//! account; and the bad requests each refuses.

use serde_json::{Value, json};
use switchboard_tests::sse::EventStream;
use switchboard_tests::{TestServer, eventually};

/// The next envelope of `event` on `stream` that `pred` accepts.
pub async fn next_event(
    stream: &mut EventStream,
    event: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    loop {
        let e = stream.next().await.expect("the stream goes on");
        if e.event == event {
            let env = e.json();
            if pred(&env) {
                return env;
            }
        }
    }
}

/// Sends a text from `from` to the session whose account is `to`; its id.
pub async fn text(server: &TestServer, from: &str, to: &Value, text: &str) -> String {
    let sent = server
        .post(
            &format!("/api/v1/sessions/{from}/messages/text"),
            json!({ "to": to["jid"], "text": text }),
        )
        .await
        .expect(200);
    sent["message_id"].as_str().unwrap().to_owned()
}

/// Waits until session `id` stored an inbound message with this id.
async fn received(server: &TestServer, id: &str, message_id: &str) -> Value {
    eventually("the message at its recipient", || async {
        server
            .inbound_messages(id)
            .await
            .into_iter()
            .find(|m| m["message_id"] == message_id)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_receipt_reaches_the_sender_as_a_read_receipt_event() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let mut alices = server.open_stream("session=alice").await;
    let id = text(&server, "alice", &bob, "did you see this?").await;
    received(&server, "bob", &id).await;
    let read = server
        .post(
            "/api/v1/sessions/bob/messages/read",
            json!({ "chat": alice["jid"], "message_ids": [id] }),
        )
        .await
        .expect(200);
    assert_eq!(read, json!({ "success": true, "message_ids": [id] }));
    let receipt = next_event(&mut alices, "receipt", |_| true).await;
    let data = &receipt["data"];
    assert_eq!(data["type"], "read");
    assert_eq!(data["message_ids"], json!([id]));
    assert_eq!(data["chat"], bob["jid"]);
    assert_eq!(data["sender"], bob["jid"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_a_whole_chat_sends_receipts_for_every_unread_message_and_clears_its_count() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let mut alices = server.open_stream("session=alice").await;
    let first = text(&server, "alice", &bob, "one").await;
    let second = text(&server, "alice", &bob, "two").await;
    received(&server, "bob", &second).await;
    let chat = server
        .get(&format!(
            "/api/v1/sessions/bob/chats/{}",
            alice["jid"].as_str().unwrap()
        ))
        .await
        .expect(200);
    assert_eq!(chat["unread_count"], 2);
    // waxum's spelling of the chat, and no ids: the whole chat.
    let read = server
        .post(
            "/api/v1/sessions/bob/messages/read",
            json!({ "chat_jid": alice["jid"] }),
        )
        .await
        .expect(200);
    let mut ids: Vec<String> = serde_json::from_value(read["message_ids"].clone()).unwrap();
    ids.sort();
    let mut expected = vec![first.clone(), second.clone()];
    expected.sort();
    assert_eq!(ids, expected);
    let receipt = next_event(&mut alices, "receipt", |_| true).await;
    let mut got: Vec<String> =
        serde_json::from_value(receipt["data"]["message_ids"].clone()).unwrap();
    got.sort();
    assert_eq!(got, expected);
    let chat = server
        .get(&format!(
            "/api/v1/sessions/bob/chats/{}",
            alice["jid"].as_str().unwrap()
        ))
        .await
        .expect(200);
    assert_eq!(chat["unread_count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoke_reaches_the_recipient_as_a_revoke_message_naming_the_deleted_one() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let id = text(&server, "alice", &bob, "oops").await;
    received(&server, "bob", &id).await;
    let revoked = server
        .post(
            "/api/v1/sessions/alice/messages/revoke",
            json!({ "to": bob["jid"], "message_id": id }),
        )
        .await
        .expect(200);
    assert_eq!(revoked["success"], true);
    assert_eq!(revoked["kind"], "revoke");
    assert_eq!(revoked["target_message_id"], id.as_str());
    assert_ne!(
        revoked["message_id"],
        id.as_str(),
        "the revoke has its own id"
    );
    let got = received(&server, "bob", revoked["message_id"].as_str().unwrap()).await;
    assert_eq!(got["body"]["message_type"], "revoke");
    assert_eq!(got["body"]["quoted_message_id"], id.as_str());
    assert_eq!(got["kind"], "revoke");

    // A message this session never sent there cannot be deleted by it.
    server
        .post(
            "/api/v1/sessions/alice/messages/revoke",
            json!({ "to": bob["jid"], "message_id": "3EB0NOTMINE" }),
        )
        .await
        .expect_error(404, "not_found_on_network");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_reaches_the_recipient_with_the_new_text() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let id = text(&server, "alice", &bob, "teh typo").await;
    received(&server, "bob", &id).await;
    let edited = server
        .post(
            "/api/v1/sessions/alice/messages/edit",
            json!({ "to": bob["jid"], "message_id": id, "text": "the typo" }),
        )
        .await
        .expect(200);
    assert_eq!(edited["kind"], "edit");
    assert_eq!(edited["target_message_id"], id.as_str());
    let got = received(&server, "bob", edited["message_id"].as_str().unwrap()).await;
    assert_eq!(got["body"]["message_type"], "edit");
    assert_eq!(got["body"]["text"], "the typo");
    assert_eq!(got["body"]["quoted_message_id"], id.as_str());

    // Someone else's message is not this account's to edit.
    let theirs = text(&server, "bob", &alice, "mine").await;
    received(&server, "alice", &theirs).await;
    server
        .post(
            "/api/v1/sessions/alice/messages/edit",
            json!({ "to": bob["jid"], "message_id": theirs, "text": "yours now" }),
        )
        .await
        .expect_error(409, "message_not_editable");
    // A poll has no text to edit.
    let poll = server
        .post(
            "/api/v1/sessions/alice/messages/poll",
            json!({ "to": bob["jid"], "question": "Lunch?", "options": ["yes", "no"] }),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/alice/messages/edit",
            json!({ "to": bob["jid"], "message_id": poll["message_id"], "text": "Dinner?" }),
        )
        .await
        .expect_error(422, "network_rejected");
    server
        .post(
            "/api/v1/sessions/alice/messages/edit",
            json!({ "to": bob["jid"], "message_id": id, "text": "  " }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_and_an_unpin_reach_the_other_member() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let id = text(&server, "bob", &alice, "remember this").await;
    received(&server, "alice", &id).await;
    // waxum's body: `chat`, and the default duration (24 hours).
    let pinned = server
        .post(
            "/api/v1/sessions/alice/messages/pin",
            json!({ "chat": bob["jid"], "message_id": id }),
        )
        .await
        .expect(200);
    assert_eq!(pinned["kind"], "pin");
    let got = received(&server, "bob", pinned["message_id"].as_str().unwrap()).await;
    assert_eq!(got["body"]["message_type"], "pin");
    assert_eq!(got["body"]["quoted_message_id"], id.as_str());
    assert_eq!(
        got["body"]["quoted_sender_jid"], bob["jid"],
        "the pinned message is bob's, as alice's record says"
    );
    let unpinned = server
        .post(
            "/api/v1/sessions/alice/messages/pin",
            json!({ "chat": bob["jid"], "message_id": id, "duration_seconds": 0 }),
        )
        .await
        .expect(200);
    assert_eq!(unpinned["kind"], "unpin");
    let got = received(&server, "bob", unpinned["message_id"].as_str().unwrap()).await;
    assert_eq!(got["body"]["message_type"], "unpin");
    server
        .post(
            "/api/v1/sessions/alice/messages/pin",
            json!({ "chat": bob["jid"], "message_id": id, "duration_seconds": 3600 }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_sends_a_copy_of_a_received_message_marked_forwarded() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let carol = server.paired_session("carol").await;
    let id = text(&server, "alice", &bob, "pass it on").await;
    received(&server, "bob", &id).await;
    let forwarded = server
        .post(
            "/api/v1/sessions/bob/messages/forward",
            json!({ "to": carol["jid"], "message_id": id }),
        )
        .await
        .expect(200);
    assert_eq!(forwarded["kind"], "forward");
    let got = received(&server, "carol", forwarded["message_id"].as_str().unwrap()).await;
    assert_eq!(got["body"]["message_type"], "text");
    assert_eq!(got["body"]["text"], "pass it on");
    assert_eq!(got["body"]["forwarded"], true);
    assert_ne!(got["body"]["from"], alice["jid"], "bob forwarded it");

    // waxum's form: a text marked forwarded.
    let waxum = server
        .post(
            "/api/v1/sessions/bob/messages/forward",
            json!({ "to": carol["jid"], "text": "as waxum forwards", "reply_to": null, "send_at": null }),
        )
        .await
        .expect(200);
    let got = received(&server, "carol", waxum["message_id"].as_str().unwrap()).await;
    assert_eq!(got["body"]["text"], "as waxum forwards");
    assert_eq!(got["body"]["forwarded"], true);

    server
        .post(
            "/api/v1/sessions/bob/messages/forward",
            json!({ "to": carol["jid"], "message_id": "3EB0UNKNOWN" }),
        )
        .await
        .expect_error(404, "not_found_on_network");
    server
        .post(
            "/api/v1/sessions/bob/messages/forward",
            json!({ "to": carol["jid"], "message_id": id, "text": "both" }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            "/api/v1/sessions/bob/messages/forward",
            json!({ "to": carol["jid"] }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_star_is_kept_with_the_account_until_it_is_taken_back() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let id = text(&server, "alice", &bob, "keep this").await;
    received(&server, "bob", &id).await;
    server
        .post(
            "/api/v1/sessions/bob/messages/star",
            json!({ "chat": alice["jid"], "message_id": id }),
        )
        .await
        .expect(200);
    let starred = server
        .get("/api/v1/sim/sessions/bob/starred")
        .await
        .expect(200);
    assert_eq!(
        starred["starred"],
        json!([{ "chat": alice["jid"], "message_id": id }])
    );
    server
        .post(
            "/api/v1/sessions/bob/messages/star",
            json!({ "chat": alice["jid"], "message_id": id, "starred": false }),
        )
        .await
        .expect(200);
    let starred = server
        .get("/api/v1/sim/sessions/bob/starred")
        .await
        .expect(200);
    assert_eq!(starred["starred"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_actions_refuse_bad_bodies_and_sessions_that_cannot_send() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.create_session("idle").await;
    for (action, body) in [
        ("read", json!({ "chat": alice["jid"], "message_ids": [] })),
        ("read", json!({ "chat": "not a jid", "message_ids": ["M"] })),
        (
            "read",
            json!({ "chat": alice["jid"], "chat_jid": alice["jid"] }),
        ),
        ("revoke", json!({ "to": alice["jid"], "message_id": " " })),
        ("revoke", json!({ "to": alice["jid"] })),
        ("edit", json!({ "to": alice["jid"], "message_id": "M" })),
        (
            "pin",
            json!({ "chat": alice["jid"], "message_id": "M", "extra": 1 }),
        ),
        (
            "star",
            json!({ "chat": alice["jid"], "message_id": "M", "starred": "yes" }),
        ),
    ] {
        let got = server
            .post(
                &format!("/api/v1/sessions/alice/messages/{action}"),
                body.clone(),
            )
            .await;
        assert_eq!(got.status.as_u16(), 400, "{action} {body}: {:?}", got.body);
    }
    server
        .post(
            "/api/v1/sessions/idle/messages/revoke",
            json!({ "to": alice["jid"], "message_id": "M" }),
        )
        .await
        .expect_error(409, "invalid_session_state");
    server
        .post(
            "/api/v1/sessions/ghost/messages/read",
            json!({ "chat": alice["jid"], "message_ids": ["M"] }),
        )
        .await
        .expect_error(404, "session_not_found");
}
