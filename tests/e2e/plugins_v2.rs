//! The 0.2 plugin contract end to end: the same keyword filter written in
//! Rust, Python and JavaScript against world `event-filter-plugin`, each at
//! a real webhook receiver; the typed message record it decides on; the
//! full data it asks for (as an earlier 0.1 filter in the chain left it);
//! and 0.1 and 0.2 plugins side by side in one chain.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::plugins::{
    JS_KEYWORD_FILTER, KEYWORD_FILTER, PYTHON_KEYWORD_FILTER, RECORD_ECHO, REDACTOR,
};
use switchboard_tests::receiver::{
    TestReceiver, add_webhook, inbound, message_hook, wait_until_idle,
};

use crate::plugins_support::{bind, plugin, upload};

const WORLD: &str = "switchboard:plugin/event-filter-plugin@0.2.0";

/// Sends three messages through a keyword filter bound with `config`;
/// returns what reached the receiver once the gateway owes it nothing.
async fn through_filter(path: &str, config: Value) -> (Value, Vec<Value>) {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, path).await;
    bind(&server, &p, "event_filter", json!({ "config": config })).await;
    inbound(&server, "s", "hello there").await;
    let wanted = inbound(&server, "s", "about my ORDER 42").await;
    inbound(&server, "s", "nothing to see").await;
    let got = delivered(&server, &receiver, 1).await;
    assert_eq!(got[0]["data"]["message_id"], wanted.as_str());
    let p = plugin(&server, &p["id"]).await;
    assert_eq!(p["counters"]["calls"], 3, "{p}");
    assert_eq!(p["counters"]["drops"], 2, "{p}");
    (p, got)
}

/// Waits for `n` deliveries and for the gateway to owe the receiver
/// nothing more; returns the bodies received.
async fn delivered(server: &TestServer, receiver: &TestReceiver, n: usize) -> Vec<Value> {
    receiver.wait_for(n).await;
    wait_until_idle(server, "s", &receiver.url()).await;
    let got: Vec<Value> = receiver.requests().iter().map(|r| r.json()).collect();
    assert_eq!(got.len(), n, "{got:?}");
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_keyword_filter_decides_on_the_typed_record_and_reports_its_world() {
    let (p, got) = through_filter(KEYWORD_FILTER, json!({ "keywords": ["order"] })).await;
    assert_eq!(p["world"], WORLD);
    assert_eq!(p["hooks"], json!(["event_filter"]));
    assert_eq!(p["name"], "keyword-filter");
    assert!(got[0]["data"].get("matched_keyword").is_none(), "untagged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_keyword_filter_behaves_as_the_rust_one() {
    let (p, got) = through_filter(
        PYTHON_KEYWORD_FILTER,
        json!({ "keywords": ["order"], "tag": true }),
    )
    .await;
    assert_eq!(p["world"], WORLD);
    assert_eq!(got[0]["data"]["matched_keyword"], "order");
    assert_eq!(got[0]["data"]["text"], "about my ORDER 42");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_keyword_filter_behaves_as_the_rust_one() {
    let (p, got) = through_filter(
        JS_KEYWORD_FILTER,
        json!({ "keywords": ["refund", "order"], "tag": true }),
    )
    .await;
    assert_eq!(p["world"], WORLD);
    assert_eq!(got[0]["data"]["matched_keyword"], "order");
    assert_eq!(got[0]["data"]["text"], "about my ORDER 42");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tagging_filter_gets_the_data_an_earlier_0_1_filter_rewrote() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let redactor = upload(&server, REDACTOR).await;
    assert_eq!(redactor["world"], "switchboard:plugin@0.1.0");
    let filter = upload(&server, KEYWORD_FILTER).await;
    bind(
        &server,
        &redactor,
        "event_filter",
        json!({ "order": 0, "config": {} }),
    )
    .await;
    bind(
        &server,
        &filter,
        "event_filter",
        json!({ "order": 1, "config": { "keywords": ["card"], "tag": true } }),
    )
    .await;
    inbound(&server, "s", "my card is 4111111111111111").await;
    inbound(&server, "s", "no keyword here 4111111111111111").await;
    let got = delivered(&server, &receiver, 1).await;
    let data = &got[0]["data"];
    assert_eq!(data["matched_keyword"], "card", "{data}");
    let text = data["text"].as_str().unwrap();
    assert!(text.starts_with("my card is "), "{text}");
    assert!(
        !text.contains("4111111111111111"),
        "the 0.2 filter read the data the redactor left: {text}"
    );
    // The rest of the data came through `event-data` whole, masked as the
    // redactor masks phones.
    assert_eq!(data["message_type"], "text", "{data}");
    assert_eq!(data["is_group"], false, "{data}");
    assert!(data["from_phone"].as_str().unwrap().contains('*'), "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_keywords_a_0_2_filter_keeps_every_event() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, KEYWORD_FILTER).await;
    bind(&server, &p, "event_filter", json!({ "config": {} })).await;
    inbound(&server, "s", "one").await;
    inbound(&server, "s", "two").await;
    let got = delivered(&server, &receiver, 2).await;
    let mut texts: Vec<&str> = got
        .iter()
        .map(|b| b["data"]["text"].as_str().unwrap())
        .collect();
    // Deliveries to one URL may overlap, so they can arrive in either order.
    texts.sort_unstable();
    assert_eq!(texts, ["one", "two"]);
}

/// The texts that reached `receiver`, sorted (deliveries to one URL may
/// overlap, so they can arrive in any order).
fn texts(receiver: &TestReceiver) -> Vec<String> {
    let mut texts: Vec<String> = receiver
        .requests()
        .iter()
        .map(|r| {
            r.json()["data"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    texts.sort_unstable();
    texts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_decides_under_each_binding_s_configuration_and_a_changed_one() {
    let server = TestServer::start().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let to_a = message_hook(&server, "a").await;
    let to_b = message_hook(&server, "b").await;
    let p = upload(&server, KEYWORD_FILTER).await;
    let bound_a = bind(
        &server,
        &p,
        "event_filter",
        json!({ "sessions": ["a"], "config": { "keywords": ["apple"] } }),
    )
    .await;
    bind(
        &server,
        &p,
        "event_filter",
        json!({ "sessions": ["b"], "config": { "keywords": ["berry"] } }),
    )
    .await;
    // Alternating, so the one instance switches configuration on each call.
    for s in ["a", "b"] {
        inbound(&server, s, "an apple").await;
        inbound(&server, s, "a berry").await;
    }
    to_a.wait_for(1).await;
    to_b.wait_for(1).await;
    wait_until_idle(&server, "a", &to_a.url()).await;
    wait_until_idle(&server, "b", &to_b.url()).await;
    assert_eq!(texts(&to_a), ["an apple"]);
    assert_eq!(texts(&to_b), ["a berry"]);

    // The same binding, now configured for berries.
    server
        .put(
            &format!(
                "/api/v1/plugins/bindings/{}",
                bound_a["id"].as_str().unwrap()
            ),
            json!({
                "plugin_id": p["id"], "hook": "event_filter", "sessions": ["a"],
                "config": { "keywords": ["berry"] }
            }),
        )
        .await
        .expect(200);
    inbound(&server, "a", "another apple").await;
    inbound(&server, "a", "another berry").await;
    to_a.wait_for(2).await;
    wait_until_idle(&server, "a", &to_a.url()).await;
    assert_eq!(texts(&to_a), ["an apple", "another berry"]);
}

/// The envelopes `receiver` got, by message id.
fn by_message_id(receiver: &TestReceiver) -> std::collections::HashMap<String, Value> {
    receiver
        .requests()
        .iter()
        .map(|r| r.json())
        .map(|b| {
            let id = b["data"]["message_id"]
                .as_str()
                .or_else(|| b["data"]["record"]["message"]["message_id"].as_str())
                .unwrap_or_default()
                .to_owned();
            (id, b)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_field_of_the_typed_record_reaches_a_0_2_filter_as_the_event_carries_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let plain = message_hook(&server, "s").await;
    let echoed = TestReceiver::start().await;
    let hook = add_webhook(
        &server,
        "s",
        json!({ "url": echoed.url(), "events": ["message"] }),
    )
    .await;
    let p = upload(&server, RECORD_ECHO).await;
    // Scoped to the second webhook only: the first gets the data as it was.
    bind(
        &server,
        &p,
        "event_filter",
        json!({ "webhooks": [hook["id"]] }),
    )
    .await;
    let sent = [
        json!({
            "from": "15550001111", "chat": "120363000000000001@g.us",
            "text": "zwölf Äpfel 🍏, \"quoted\"", "push_name": "Ann Ö",
            "quoted_message_id": "QUOTED1", "forwarded": true, "offline": true,
        }),
        json!({
            "from": "15550002222", "message_type": "image", "caption": "a caption",
            "media": { "data": "aGk=", "mimetype": "image/png" }, "media_mimetype": "image/png",
        }),
        json!({ "from": "15550003333", "location": { "latitude": 52.5, "longitude": 13.4 } }),
    ];
    let mut ids = Vec::new();
    for body in sent {
        let r = server
            .post("/api/v1/sim/sessions/s/inbound", body)
            .await
            .expect(200);
        ids.push(r["message_id"].as_str().unwrap().to_owned());
    }
    plain.wait_for(ids.len()).await;
    echoed.wait_for(ids.len()).await;
    wait_until_idle(&server, "s", &plain.url()).await;
    wait_until_idle(&server, "s", &echoed.url()).await;
    let (plain, echoed) = (by_message_id(&plain), by_message_id(&echoed));
    for id in &ids {
        let env = &plain[id];
        let data = &env["data"];
        let record = &echoed[id]["data"]["record"];
        let m = &record["message"];
        assert_eq!(record["session_id"], env["session_id"], "{record}");
        assert_eq!(record["event"], "message", "{record}");
        assert_eq!(record["timestamp"], env["timestamp"], "{record}");
        assert_eq!(record.get("offline"), env.get("offline"), "{record} {env}");
        for (field, key) in [
            ("message_id", "message_id"),
            ("from", "from"),
            ("from_phone", "from_phone"),
            ("chat", "chat"),
            ("chat_phone", "chat_phone"),
            ("participant", "participant"),
            ("message_type", "message_type"),
            ("text", "text"),
            ("caption", "caption"),
            ("is_group", "is_group"),
            ("is_from_me", "is_from_me"),
            ("push_name", "push_name"),
            ("quoted_id", "quoted_message_id"),
            ("media_mimetype", "media_mimetype"),
        ] {
            assert_eq!(m[field], data[key], "`{field}` of {m} against {data}");
        }
        assert_eq!(
            m["forwarded"],
            data["forwarded"].as_bool().unwrap_or(false),
            "{m}"
        );
    }
    // The cases the record must tell apart were really sent.
    let first = &plain[&ids[0]];
    assert_eq!(first["data"]["is_group"], true, "{first}");
    assert_eq!(first["offline"], true, "{first}");
    assert_eq!(plain[&ids[1]]["data"]["media_mimetype"], "image/png");
    assert!(plain[&ids[2]]["data"]["text"].is_null(), "no text");
}
