//! `@lid` lookups both ways: the network answers what the session has not
//! learned, and what it answers is learned; a mapping learned from a message
//! answers without the network; a send's answer names the recipient's
//! `@lid` when the session knows it.

use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

async fn register(server: &TestServer, phone: &str, lid: &str) {
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": phone, "push_name": "Lina", "lid": lid }),
        )
        .await
        .expect(201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_and_its_lid_are_looked_up_from_each_other_and_learned() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    register(&server, "15550007777", "777").await;

    let by_phone = server
        .get("/api/v1/sessions/s/lid/+1 555 000 7777")
        .await
        .expect(200);
    assert_eq!(
        by_phone,
        json!({
            "lid": "777@lid",
            "phone": "15550007777",
            "jid": "15550007777@s.whatsapp.net",
            "source": "network",
        })
    );
    let again = server
        .get("/api/v1/sessions/s/lid/15550007777@s.whatsapp.net")
        .await
        .expect(200);
    assert_eq!(again["source"], "learned");
    let by_lid = server
        .get("/api/v1/sessions/s/lid/777@lid")
        .await
        .expect(200);
    assert_eq!(by_lid["phone"], "15550007777");
    assert_eq!(by_lid["source"], "learned");

    // Learned answers need no connection; the network's do.
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    server.wait_for_status("s", "disconnected").await;
    server
        .get("/api/v1/sessions/s/lid/777@lid")
        .await
        .expect(200);
    server
        .get("/api/v1/sessions/s/lid/999@lid")
        .await
        .expect_error(409, "invalid_session_state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lid_learned_from_a_message_answers_and_an_unknown_one_is_not_found() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/inbound",
            json!({ "from": "555@lid", "sender_phone": "15550005555", "text": "hi" }),
        )
        .await
        .expect(200);
    let got = eventually("the mapping learned from the message", || async {
        let r = server.get("/api/v1/sessions/s/lid/555@lid").await;
        (r.status.as_u16() == 200).then_some(r.body)
    })
    .await;
    assert_eq!(got["phone"], "15550005555");
    assert_eq!(got["source"], "learned");
    server
        .get("/api/v1/sessions/s/lid/424242@lid")
        .await
        .expect_error(404, "not_found_on_network");
    server
        .get("/api/v1/sessions/s/lid/120363000000000001@g.us")
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sends_answer_names_the_recipients_lid_when_the_network_reveals_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let peer = server.paired_session("peer").await;
    register(&server, "15550008888", "888").await;
    let to_user = server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "15550008888", "text": "hello" }),
        )
        .await
        .expect(200);
    assert_eq!(to_user["lid"], "888@lid");
    let to_peer = server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": peer["jid"], "text": "hello" }),
        )
        .await
        .expect(200);
    assert_eq!(
        to_peer["lid"],
        Value::Null,
        "a sim session's account has no lid"
    );
}
