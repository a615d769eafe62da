//! Messages between sessions, injected inbound traffic, the outbox, faults and
//! the stored message history.

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_between_two_sim_sessions_arrives_as_inbound_and_sits_in_the_senders_outbox() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let to = alice["phone_number"].as_str().unwrap();
    let sent = server
        .post(
            "/api/v1/sessions/bob/messages/text",
            json!({ "to": format!("+{to}"), "text": "hello alice" }),
        )
        .await
        .expect(200);
    let message_id = sent["message_id"].as_str().unwrap().to_owned();
    assert_eq!(sent["to"], alice["jid"]);
    assert!(sent["timestamp"].as_i64().unwrap() > 0);

    let outbox = server
        .get("/api/v1/sim/sessions/bob/outbox")
        .await
        .expect(200);
    assert_eq!(outbox["count"], 1);
    let entry = &outbox["messages"][0];
    assert_eq!(entry["to"], alice["jid"]);
    assert_eq!(entry["kind"], "text");
    assert_eq!(entry["body"]["text"], "hello alice");
    assert_eq!(entry["message_id"], message_id.as_str());

    let got = eventually("the message at alice", || async {
        server.inbound_messages("alice").await.into_iter().next()
    })
    .await;
    assert_eq!(got["message_id"], message_id.as_str());
    assert_eq!(got["chat"], bob["jid"]);
    assert_eq!(got["body"]["text"], "hello alice");
    assert_eq!(got["body"]["from"], bob["jid"]);
    assert_eq!(got["body"]["from_phone"], bob["phone_number"]);
    assert_eq!(got["body"]["push_name"], "Sim bob");

    let bobs = server
        .get("/api/v1/sessions/bob/messages")
        .await
        .expect(200);
    assert_eq!(bobs["messages"][0]["direction"], "outbound");
    assert_eq!(bobs["messages"][0]["message_id"], message_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_inbound_message_is_stored_with_the_message_event_fields() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": "4915112345678", "push_name": "Greta" }),
        )
        .await
        .expect(201);
    let injected = server
        .post(
            "/api/v1/sim/sessions/s/inbound",
            json!({ "from": "+49 151 12345678", "text": "hi there", "quoted_message_id": "3EB0AAA" }),
        )
        .await
        .expect(200);
    let id = injected["message_id"].as_str().unwrap().to_owned();
    let got = eventually("the injected message", || async {
        server.inbound_messages("s").await.into_iter().next()
    })
    .await;
    let data = &got["body"];
    assert_eq!(data["message_id"], id.as_str());
    assert_eq!(data["from"], "4915112345678@s.whatsapp.net");
    assert_eq!(data["from_phone"], "4915112345678");
    assert_eq!(data["chat_phone"], "4915112345678");
    assert_eq!(data["push_name"], "Greta", "taken from the registered user");
    assert_eq!(data["message_type"], "text");
    assert_eq!(data["quoted_message_id"], "3EB0AAA");
    assert_eq!(data["is_group"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_sent_to_a_disconnected_session_arrive_on_reconnect() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    server
        .post_empty("/api/v1/sessions/alice/disconnect")
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/bob/messages/text",
            json!({ "to": alice["jid"], "text": "while you were out" }),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sim/sessions/alice/inbound",
            json!({ "from": "15550009999", "text": "me too" }),
        )
        .await
        .expect(200);
    assert!(
        server.inbound_messages("alice").await.is_empty(),
        "nothing arrives while disconnected"
    );
    server
        .post_empty("/api/v1/sessions/alice/connect")
        .await
        .expect(200);
    let got = eventually("both queued messages", || async {
        let got = server.inbound_messages("alice").await;
        (got.len() == 2).then_some(got)
    })
    .await;
    let texts: Vec<&str> = got
        .iter()
        .map(|m| m["body"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["me too", "while you were out"], "newest first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sending_before_login_is_a_409_that_reaches_no_network() {
    let server = TestServer::start().await;
    server.create_session("idle").await;
    server
        .post(
            "/api/v1/sessions/idle/messages/text",
            json!({ "to": "15550000001", "text": "hi" }),
        )
        .await
        .expect_error(409, "invalid_session_state");
    assert_eq!(
        server
            .get("/api/v1/sim/sessions/idle/outbox")
            .await
            .expect(200)["count"],
        0
    );
    assert_eq!(
        server
            .get("/api/v1/sessions/idle/messages")
            .await
            .expect(200)["count"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_send_fault_fails_the_send_with_a_502_and_records_nothing() {
    let server = TestServer::start().await;
    server.paired_session("f").await;
    server
        .post(
            "/api/v1/sim/sessions/f/faults",
            json!({ "fail_sends_to": ["15550000001"] }),
        )
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/f/messages/text",
            json!({ "to": "15550000001", "text": "hi" }),
        )
        .await
        .expect_error(502, "network_error");
    server
        .post(
            "/api/v1/sessions/f/messages/text",
            json!({ "to": "15550000002", "text": "hi" }),
        )
        .await
        .expect(200);
    server
        .delete("/api/v1/sim/sessions/f/faults")
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/f/messages/text",
            json!({ "to": "15550000001", "text": "again" }),
        )
        .await
        .expect(200);
    let outbox = server
        .get("/api/v1/sim/sessions/f/outbox")
        .await
        .expect(200);
    let to: Vec<&str> = outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["to"].as_str().unwrap())
        .collect();
    assert_eq!(
        to,
        ["15550000002@s.whatsapp.net", "15550000001@s.whatsapp.net"]
    );
    assert_eq!(
        server.get("/api/v1/sessions/f/messages").await.expect(200)["count"],
        2
    );
    server
        .post(
            "/api/v1/sim/sessions/f/faults",
            json!({ "fail_send_rate": 1.5 }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_message_history_pages_newest_first_with_a_clamped_limit() {
    let server = TestServer::start().await;
    server.paired_session("h").await;
    for i in 0..5 {
        server
            .post(
                "/api/v1/sessions/h/messages/text",
                json!({ "to": "15550000001", "text": format!("m{i}") }),
            )
            .await
            .expect(200);
    }
    let page = server
        .get("/api/v1/sessions/h/messages?limit=2&offset=1")
        .await
        .expect(200);
    let texts: Vec<&str> = page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["m3", "m2"]);
    assert_eq!(page["limit"], 2);
    let clamped = server
        .get("/api/v1/sessions/h/messages?limit=0")
        .await
        .expect(200);
    assert_eq!(clamped["limit"], 1);
    let clamped = server
        .get("/api/v1/sessions/h/messages?limit=5000")
        .await
        .expect(200);
    assert_eq!(clamped["limit"], 1000);
    server
        .get("/api/v1/sessions/h/messages?limit=lots")
        .await
        .expect_error(400, "invalid_query");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbound_injection_validates_its_body() {
    let server = TestServer::start().await;
    server.paired_session("v").await;
    let inbound = "/api/v1/sim/sessions/v/inbound";
    server
        .post(inbound, json!({ "from": "nobody", "text": "x" }))
        .await
        .expect_error(400, "invalid_field");
    server
        .post(inbound, json!({ "from": "15550000001" }))
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            inbound,
            json!({ "from": "15550000001", "message_type": "hologram" }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            inbound,
            json!({ "from": "15550000001", "location": { "latitude": "north" } }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            "/api/v1/sim/sessions/nobody/inbound",
            json!({ "from": "15550000001", "text": "x" }),
        )
        .await
        .expect_error(404, "not_found_on_network");
}
