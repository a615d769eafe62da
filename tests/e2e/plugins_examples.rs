//! The example plugins not covered elsewhere, end to end: the redactor's
//! masking at a real webhook receiver, the Python plugin loaded through the
//! API like any other, and a message transform's effect on blast results.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::plugins::{FOOTER, PYTHON_SHOUTER, REDACTOR};
use switchboard_tests::receiver::message_hook;

use crate::blasts_support::{
    create, outbox, phones, recipients, server, text_blast, wait_job, wait_status,
};
use crate::plugins_support::{bind, plugin, upload};

/// Injects an inbound message from `from` with `text`; returns its id.
async fn inbound_from(server: &TestServer, from: &str, text: &str) -> String {
    let body = server
        .post(
            "/api/v1/sim/sessions/s/inbound",
            json!({ "from": from, "text": text }),
        )
        .await
        .expect(200);
    body["message_id"]
        .as_str()
        .expect("a message id")
        .to_owned()
}

/// Every string in `v`, at any depth, with its key.
fn strings(v: &Value, key: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((key.to_owned(), s.clone())),
        Value::Array(a) => a.iter().for_each(|x| strings(x, key, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| strings(x, k, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redactor_masks_every_phone_number_before_the_webhook_sees_the_event() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, REDACTOR).await;
    assert_eq!(p["hooks"], json!(["event_filter"]), "{p}");
    bind(&server, &p, "event_filter", json!({})).await;

    let text = "call 4915112345678 or +49 151 1234, ticket 12345";
    let id = inbound_from(&server, "4915112345678", text).await;
    let got = receiver.wait_for(1).await;
    let data = got[0].json()["data"].clone();
    assert_eq!(
        data["message_id"],
        id.as_str(),
        "ids are not numbers to hide"
    );
    assert_eq!(
        data["text"], "call ************* or +49 151 1234, ticket 12345",
        "long runs masked, short ones kept: {data}"
    );
    let mut all = Vec::new();
    strings(&data, "data", &mut all);
    let leaks: Vec<_> = all
        .iter()
        .filter(|(k, s)| !k.ends_with("_id") && s.contains("4915112345678"))
        .collect();
    assert!(leaks.is_empty(), "the number leaked in {leaks:?}: {data}");
    let jids: Vec<_> = all
        .iter()
        .filter(|(_, s)| s.ends_with("@s.whatsapp.net"))
        .collect();
    assert!(!jids.is_empty(), "the event carries JIDs: {data}");
    for (k, jid) in jids {
        let user = jid.trim_end_matches("@s.whatsapp.net");
        assert!(
            user.len() < 7 || user.chars().all(|c| c == '*' || c == ':'),
            "{k} = {jid}"
        );
    }
    let p = plugin(&server, &p).await;
    assert_eq!(p["counters"]["traps"], 0, "{p}");
}

/// The chat history's record of message `id` from `from` on session `s`.
async fn stored(server: &TestServer, from: &str, id: &str) -> Value {
    let page = server
        .get(&format!(
            "/api/v1/sessions/s/chats/{from}@s.whatsapp.net/messages?limit=500"
        ))
        .await
        .expect(200);
    page["messages"]
        .as_array()
        .expect("a page")
        .iter()
        .find(|m| m["message_id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} is not in the history: {page}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_keeps_a_message_as_received_whatever_a_filter_makes_of_its_event() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let text = "call 4915112345678 today";

    // No filter: the record and the event carry the very same data.
    let plain = inbound_from(&server, "15550001111", text).await;
    let got = receiver.wait_for(1).await;
    let data = got[0].json()["data"].clone();
    assert_eq!(data["text"], text, "{data}");
    let record = stored(&server, "15550001111", &plain).await;
    assert_eq!(record["body"], data, "the record is the event's data");
    let chats = server.get("/api/v1/sessions/s/chats").await.expect(200);
    assert_eq!(
        chats["chats"][0]["last_message"]["preview"], text,
        "the chat list reads the record's text: {chats}"
    );

    // A filter rewrites the event; the history still holds what arrived.
    let p = upload(&server, REDACTOR).await;
    bind(&server, &p, "event_filter", json!({})).await;
    let masked = inbound_from(&server, "15550001111", text).await;
    let got = receiver.wait_for(2).await;
    let data = got
        .iter()
        .map(|d| d.json()["data"].clone())
        .find(|d| d["message_id"] == masked.as_str())
        .expect("the second delivery");
    assert_eq!(data["text"], "call ************* today", "{data}");
    let record = stored(&server, "15550001111", &masked).await;
    assert_eq!(record["body"]["text"], text, "{record}");
    assert_eq!(
        record["body"]["from"], "15550001111@s.whatsapp.net",
        "{record}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redactor_keeps_the_last_digits_and_uses_the_configured_mask() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, REDACTOR).await;
    bind(
        &server,
        &p,
        "event_filter",
        json!({ "config": { "mask": "#", "keep_last": 3 } }),
    )
    .await;
    inbound_from(&server, "15550001111", "my number is 4915112345678").await;
    let got = receiver.wait_for(1).await;
    let data = got[0].json()["data"].clone();
    assert_eq!(data["text"], "my number is ##########678", "{data}");
    assert!(!data.to_string().contains("15550001111"), "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_plugin_loads_through_the_api_and_shouts_at_the_webhook() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, PYTHON_SHOUTER).await;
    assert_eq!(p["name"], "python-shouter", "{p}");
    assert_eq!(p["hooks"], json!(["event_filter"]), "{p}");
    assert_eq!(p["world"], "switchboard:plugin@0.1.0", "{p}");
    assert_eq!(p["status"], "active", "{p}");
    bind(&server, &p, "event_filter", json!({})).await;

    let first = inbound_from(&server, "15550001111", "hello from python, ünïcode").await;
    let second = inbound_from(&server, "15550001111", "ALREADY LOUD").await;
    let got = receiver.wait_for(2).await;
    let by_id = |id: &str| {
        got.iter()
            .map(|r| r.json()["data"].clone())
            .find(|d| d["message_id"] == id)
            .unwrap_or_else(|| panic!("message {id} not delivered"))
    };
    assert_eq!(by_id(&first)["text"], "HELLO FROM PYTHON, ÜNÏCODE");
    assert_eq!(by_id(&second)["text"], "ALREADY LOUD");
    let p = plugin(&server, &p).await;
    assert_eq!(p["counters"]["traps"], 0, "{p}");
    assert_eq!(p["counters"]["timeouts"], 0, "{p}");
    assert!(p["counters"]["calls"].as_u64().unwrap() >= 2, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_footer_signs_every_blast_message_and_a_banned_word_fails_the_recipients() {
    let server = server().await;
    server.paired_session("s").await;
    let p = upload(&server, FOOTER).await;
    bind(
        &server,
        &p,
        "message_transform",
        json!({ "config": { "footer": "-- Acme", "separator": " ", "banned_words": ["iban"] } }),
    )
    .await;
    let to = phones(6);
    let mut body = text_blast(&to[..3], json!({ "delay_ms": 0 }));
    body["body"]["text"] = json!("spring sale");
    let signed = create(&server, "s", body).await;
    let job = wait_status(&server, "s", &signed, "completed").await;
    assert_eq!(job["sent_count"], 3, "{job}");
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 3);
    for m in &sent {
        assert_eq!(m["body"]["text"], "spring sale -- Acme", "{m}");
    }

    // Refused sends are dead-lettered on their first attempt: a refusal
    // would only repeat, so the attempts left are not spent on it.
    let mut body = text_blast(&to[3..], json!({ "delay_ms": 0, "max_attempts": 5 }));
    body["body"]["text"] = json!("send your IBAN");
    let refused = create(&server, "s", body).await;
    let job = wait_job(&server, "s", &refused, "to give up", |j| {
        j["dlq_count"] == 3
    })
    .await;
    assert_eq!(job["sent_count"], 0, "{job}");
    for r in recipients(&server, "s", &refused, None).await {
        assert_eq!(r["status"], "dlq", "{r}");
        assert_eq!(r["attempts"], 1, "{r}");
        let e = r["last_error"].as_str().unwrap_or_default();
        assert!(e.contains("banned word") && e.contains("footer"), "{r}");
    }
    assert_eq!(
        outbox(&server, "s").await.len(),
        3,
        "nothing refused was sent"
    );
    let p = plugin(&server, &p).await;
    assert_eq!(p["counters"]["rejects"], 3, "{p}");
}
