//! Chats: the list kept from the messages a session sent and received, each
//! chat's history page by page, and the chat actions (archive, pin, mute,
//! mark unread, delete) with what they change in the list.

use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

use crate::chat_actions::text;

fn chat_path(session: &str, who: &Value) -> String {
    format!(
        "/api/v1/sessions/{session}/chats/{}",
        who["jid"].as_str().unwrap()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chats_history_comes_newest_first_in_pages_that_neither_skip_nor_repeat() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let mut sent = Vec::new();
    for i in 0..7 {
        let from = if i % 2 == 0 { "alice" } else { "bob" };
        let to = if i % 2 == 0 { &bob } else { &alice };
        sent.push(text(&server, from, to, &format!("message {i}")).await);
    }
    // Bob's chat with alice holds his 3 sends and alice's 4 once they arrive.
    let path = format!("{}/messages", chat_path("bob", &alice));
    eventually("all seven in bob's chat", || async {
        let page = server.get(&format!("{path}?limit=500")).await.expect(200);
        (page["messages"].as_array().unwrap().len() == 7).then_some(())
    })
    .await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let url = match &cursor {
            Some(c) => format!("{path}?limit=3&cursor={c}"),
            None => format!("{path}?limit=3"),
        };
        let page = server.get(&url).await.expect(200);
        pages += 1;
        for m in page["messages"].as_array().unwrap() {
            seen.push(m["message_id"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3, "7 messages in pages of 3");
    let newest_first: Vec<String> = sent.iter().rev().cloned().collect();
    assert_eq!(seen, newest_first);

    server
        .get(&format!("{path}?cursor=abc"))
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_list_shows_the_last_message_and_unread_count_and_puts_pinned_chats_first() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let carol = server.paired_session("carol").await;
    let from_bob = text(&server, "bob", &alice, "hi alice").await;
    let from_carol = text(&server, "carol", &alice, "hello from carol").await;
    let list = eventually("both chats at alice", || async {
        let list = server.get("/api/v1/sessions/alice/chats").await.expect(200);
        (list["total"] == 2).then_some(list)
    })
    .await;
    // Carol wrote last.
    assert_eq!(list["chats"][0]["jid"], carol["jid"]);
    assert_eq!(list["chats"][0]["unread_count"], 1);
    assert_eq!(
        list["chats"][0]["last_message"]["message_id"],
        from_carol.as_str()
    );
    assert_eq!(
        list["chats"][0]["last_message"]["preview"],
        "hello from carol"
    );
    assert_eq!(list["chats"][0]["last_message"]["from_me"], false);
    assert_eq!(list["chats"][1]["jid"], bob["jid"]);
    assert_eq!(
        list["chats"][1]["last_message"]["message_id"],
        from_bob.as_str()
    );

    // Answering reads the chat; pinning puts it first.
    text(&server, "alice", &bob, "hi bob").await;
    let pinned = server
        .post_empty(&format!("{}/pin", chat_path("alice", &bob)))
        .await
        .expect(200);
    assert_eq!(pinned["pinned"], true);
    assert_eq!(pinned["unread_count"], 0);
    let list = server.get("/api/v1/sessions/alice/chats").await.expect(200);
    assert_eq!(list["chats"][0]["jid"], bob["jid"]);
    assert_eq!(list["chats"][0]["last_message"]["from_me"], true);

    let unread = server
        .get("/api/v1/sessions/alice/chats?unread=true")
        .await
        .expect(200);
    assert_eq!(unread["total"], 1);
    assert_eq!(unread["chats"][0]["jid"], carol["jid"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_mute_and_mark_unread_change_the_chat_and_delete_removes_it_with_its_history() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    text(&server, "alice", &bob, "hello").await;
    let chat = chat_path("alice", &bob);

    let archived = server
        .post(&format!("{chat}/archive"), json!({ "archived": true }))
        .await
        .expect(200);
    assert_eq!(archived["archived"], true);
    let list = server
        .get("/api/v1/sessions/alice/chats?archived=false")
        .await
        .expect(200);
    assert_eq!(list["total"], 0);
    let list = server
        .get("/api/v1/sessions/alice/chats?archived=true")
        .await
        .expect(200);
    assert_eq!(list["total"], 1);

    let muted = server
        .post(&format!("{chat}/mute"), json!({ "duration_seconds": 3600 }))
        .await
        .expect(200);
    assert_eq!(muted["muted"], true);
    let until = muted["muted_until"].as_i64().unwrap();
    assert!(until > 3000 + switchboard::domain::time::unix_now());
    let for_ever = server.post_empty(&format!("{chat}/mute")).await.expect(200);
    assert_eq!(
        (for_ever["muted"].clone(), for_ever["muted_until"].clone()),
        (json!(true), Value::Null)
    );
    let unmuted = server
        .post_empty(&format!("{chat}/unmute"))
        .await
        .expect(200);
    assert_eq!(unmuted["muted"], false);
    server
        .post(&format!("{chat}/mute"), json!({ "duration_seconds": 0 }))
        .await
        .expect_error(400, "invalid_field");
    server
        .post(&format!("{chat}/mute"), json!({ "until": 1 }))
        .await
        .expect_error(400, "invalid_field");

    let unread = server
        .post_empty(&format!("{chat}/unread"))
        .await
        .expect(200);
    assert_eq!(unread["marked_unread"], true);
    let read = server
        .post(&format!("{chat}/unread"), json!({ "unread": false }))
        .await
        .expect(200);
    assert_eq!(read["marked_unread"], false);

    server.delete(&chat).await.expect(200);
    server
        .get(&chat)
        .await
        .expect_error(404, "not_found_on_network");
    let history = server.get(&format!("{chat}/messages")).await.expect(200);
    assert_eq!(history["messages"], json!([]));
    let all = server.get("/api/v1/sessions/alice/chats").await.expect(200);
    assert_eq!(all["total"], 0);
    let _ = alice;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_accounts_devices_say_of_a_chat_shows_in_the_list() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let chat = "15550001111@s.whatsapp.net";
    for (event, data) in [
        (
            "archive_update",
            json!({ "chat_jid": chat, "archived": true, "timestamp": 1_700_000_000 }),
        ),
        (
            "pin_update",
            json!({ "chat_jid": chat, "pinned": true, "timestamp": 1_700_000_001 }),
        ),
        (
            "mark_chat_as_read",
            json!({ "chat_jid": chat, "read": false, "timestamp": 1_700_000_002 }),
        ),
    ] {
        server
            .post(
                "/api/v1/sim/sessions/s/events",
                json!({ "event": event, "data": data }),
            )
            .await
            .expect(200);
    }
    let got = eventually("the chat's flags", || async {
        let c = server
            .get(&format!("/api/v1/sessions/s/chats/{chat}"))
            .await;
        (c.status.as_u16() == 200 && c.body["marked_unread"] == true).then_some(c.body)
    })
    .await;
    assert_eq!(got["archived"], true);
    assert_eq!(got["pinned"], true);
    assert_eq!(got["last_message"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_routes_refuse_bad_input_and_sessions_that_cannot_act() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.create_session("idle").await;
    server
        .get("/api/v1/sessions/alice/chats/not-a-jid")
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            &format!("{}/archive", chat_path("alice", &alice)),
            json!({ "archived": "yes" }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post_empty(&format!("{}/archive", chat_path("idle", &alice)))
        .await
        .expect_error(409, "invalid_session_state");
    server
        .get("/api/v1/sessions/ghost/chats")
        .await
        .expect_error(404, "session_not_found");
    // The list is local data: it answers in any state.
    server.get("/api/v1/sessions/idle/chats").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_from_an_lid_and_to_its_phone_are_one_chat() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/inbound",
            json!({ "from": "555@lid", "sender_phone": "15550005555", "text": "hi from a lid" }),
        )
        .await
        .expect(200);
    eventually("the inbound message", || async {
        server.inbound_messages("s").await.into_iter().next()
    })
    .await;
    server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "15550005555", "text": "answered by phone" }),
        )
        .await
        .expect(200);
    let list = server.get("/api/v1/sessions/s/chats").await.expect(200);
    assert_eq!(list["total"], 1, "{list}");
    let chat = &list["chats"][0];
    assert_eq!(chat["jid"], "15550005555@s.whatsapp.net");
    assert_eq!(chat["message_count"], 2);
    assert_eq!(chat["unread_count"], 0, "the answer read the chat");
    // Asked by either address, the same chat.
    let by_lid = server
        .get("/api/v1/sessions/s/chats/555@lid/messages")
        .await
        .expect(200);
    assert_eq!(by_lid["messages"].as_array().unwrap().len(), 2);
    let by_phone = server
        .get("/api/v1/sessions/s/chats/15550005555/messages")
        .await
        .expect(200);
    assert_eq!(by_phone["messages"], by_lid["messages"]);
}
