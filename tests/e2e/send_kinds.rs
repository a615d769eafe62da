//! Every send kind: one good body that reaches the network as that kind, and
//! one bad body refused with a 400 naming the field.

use base64::Engine as _;
use serde_json::{Value, json};
use switchboard_tests::TestServer;

const TO: &str = "+1 555 000 0001";

/// `(kind, good body, bad body, field the error must name)`.
fn cases() -> Vec<(&'static str, Value, Value, &'static str)> {
    let png = base64::engine::general_purpose::STANDARD.encode([0x89, b'P', b'N', b'G', 1, 2, 3]);
    vec![
        (
            "text",
            json!({ "to": TO, "text": "hello" }),
            json!({ "to": TO, "text": "" }),
            "text",
        ),
        (
            "image",
            json!({ "to": TO, "url": "https://example.com/cat.jpg", "caption": "a cat" }),
            json!({ "to": TO, "url": "ftp://example.com/cat.jpg" }),
            "url",
        ),
        (
            "video",
            json!({ "to": TO, "data": png, "mimetype": "video/mp4" }),
            json!({ "to": TO, "data": "%%% not base64 %%%" }),
            "data",
        ),
        (
            "audio",
            json!({ "to": TO, "url": "https://example.com/a.ogg", "ptt": true }),
            json!({ "to": TO, "url": "https://example.com/a.ogg", "ptt": "yes" }),
            "ptt",
        ),
        (
            "document",
            json!({ "to": TO, "url": "https://example.com/r.pdf", "filename": "report.pdf" }),
            json!({ "to": TO, "url": "https://example.com/r.pdf", "filename": "../etc/passwd" }),
            "filename",
        ),
        (
            "location",
            json!({ "to": TO, "latitude": 52.52, "longitude": 13.405, "name": "Berlin" }),
            json!({ "to": TO, "latitude": 91.0, "longitude": 13.4 }),
            "latitude",
        ),
        (
            "contact",
            json!({ "to": TO, "contacts": [{ "name": "Ada", "phone": "+44 20 7946 0000" }] }),
            json!({ "to": TO, "contacts": [{ "name": "Ada", "phone": "ring ring" }] }),
            "contacts[0].phone",
        ),
        (
            "poll",
            json!({ "to": TO, "question": "Lunch?", "options": ["Pizza", "Salad"] }),
            json!({ "to": TO, "question": "Lunch?", "options": ["Pizza"] }),
            "options",
        ),
        (
            "reaction",
            json!({ "to": TO, "message_id": "3EB0ABCDEF", "emoji": "👍" }),
            json!({ "to": TO, "message_id": "", "emoji": "👍" }),
            "message_id",
        ),
        (
            "cta-url",
            json!({ "to": TO, "text": "Track your order", "button_text": "Track", "url": "https://example.com/t/1" }),
            json!({ "to": TO, "text": "Track", "button_text": "Track", "url": "not a url" }),
            "url",
        ),
        (
            "buttons",
            json!({ "to": TO, "text": "Pick one", "buttons": [{ "id": "y", "text": "Yes" }, { "id": "n", "text": "No" }] }),
            json!({ "to": TO, "text": "Pick one", "buttons": [{ "id": "y", "text": "Yes" }, { "id": "y", "text": "Also yes" }] }),
            "buttons[1].id",
        ),
        (
            "list",
            json!({ "to": TO, "text": "Menu", "button_text": "Open", "sections": [{ "title": "Mains", "rows": [{ "id": "r1", "title": "Soup" }] }] }),
            json!({ "to": TO, "text": "Menu", "button_text": "Open", "sections": [] }),
            "sections",
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_sends_a_good_body_and_refuses_a_bad_one_naming_the_field() {
    let server = TestServer::start().await;
    server.paired_session("k").await;
    let cases = cases();
    assert_eq!(cases.len(), 12);
    for (kind, good, bad, field) in &cases {
        let path = format!("/api/v1/sessions/k/messages/{kind}");
        let sent = server.post(&path, good.clone()).await.expect(200);
        assert_eq!(sent["to"], "15550000001@s.whatsapp.net", "{kind}");
        let msg = server
            .post(&path, bad.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(
            msg.contains(&format!("`{field}`")),
            "{kind}: `{msg}` should name `{field}`"
        );
    }
    let outbox = server
        .get("/api/v1/sim/sessions/k/outbox")
        .await
        .expect(200);
    let kinds: Vec<&str> = outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(
        kinds, expected,
        "each good body reached the network once, as its kind, in order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_invalid_recipient_is_refused_for_every_kind() {
    let server = TestServer::start().await;
    server.paired_session("r").await;
    for (kind, good, _, _) in cases() {
        let path = format!("/api/v1/sessions/r/messages/{kind}");
        let mut no_to = good.clone();
        no_to.as_object_mut().unwrap().remove("to");
        let msg = server
            .post(&path, no_to)
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains("`to`"), "{kind}: {msg}");
        let mut bad_to = good.clone();
        bad_to["to"] = json!("someone@example.com");
        server
            .post(&path, bad_to)
            .await
            .expect_error(400, "invalid_field");
    }
    assert_eq!(
        server
            .get("/api/v1/sim/sessions/r/outbox")
            .await
            .expect(200)["count"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_is_stored_by_size_not_by_content() {
    let server = TestServer::start().await;
    server.paired_session("m").await;
    let data = base64::engine::general_purpose::STANDARD.encode(vec![7u8; 3000]);
    server
        .post(
            "/api/v1/sessions/m/messages/image",
            json!({ "to": TO, "data": data }),
        )
        .await
        .expect(200);
    let record = &server.get("/api/v1/sessions/m/messages").await.expect(200)["messages"][0];
    let stored = record["body"].to_string();
    assert!(
        stored.len() < 1000,
        "the record must not hold the media bytes: {stored}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kind_or_unknown_field_is_refused() {
    let server = TestServer::start().await;
    server.paired_session("u").await;
    let msg = server
        .post(
            "/api/v1/sessions/u/messages/telegram",
            json!({ "to": TO, "text": "x" }),
        )
        .await
        .expect_error(404, "unknown_send_kind");
    assert!(msg.contains("cta-url"), "lists the kinds: {msg}");
    let msg = server
        .post(
            "/api/v1/sessions/u/messages/text",
            json!({ "to": TO, "text": "x", "colour": "red" }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("colour"), "{msg}");
    server
        .post("/api/v1/sessions/u/messages/text", json!(["to", TO]))
        .await
        .expect_error(400, "invalid_field");
}
