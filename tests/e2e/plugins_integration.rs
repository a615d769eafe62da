//! Integration plugins end to end, with the reference bot bridge built from
//! source: a message reaches a local "bot" over `wasi:http` and its answer
//! goes back to the chat through the send core; HTTP is refused without a
//! grant and towards a private address unless the grant allows it (the
//! refusal dead-lettered with its reason after the configured attempts);
//! a bot that never answers holds back only its own binding.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use switchboard_tests::plugins::BOT_BRIDGE;
use switchboard_tests::receiver::{dlq, inbound, message_hook, wait_for_dlq};
use switchboard_tests::{TestServer, eventually};

use crate::plugins_support::{bind, upload};

/// A local bot: records each request and answers `{"reply": "echo: <text>"}`,
/// or never answers when it hangs.
struct Bot {
    url: String,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Bot {
    async fn start(hang: bool) -> Bot {
        let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
        let app =
            Router::new()
                .route(
                    "/bot",
                    post(
                        move |State(seen): State<Arc<Mutex<Vec<Value>>>>,
                              Json(body): Json<Value>| async move {
                            seen.lock().unwrap().push(body.clone());
                            if hang {
                                std::future::pending::<()>().await;
                            }
                            let text = body["text"].as_str().unwrap_or_default();
                            Json(json!({ "reply": format!("echo: {text}") }))
                        },
                    ),
                )
                .with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Bot {
            url: format!("http://{addr}/bot"),
            seen,
        }
    }

    fn authority(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/bot")
            .to_owned()
    }

    /// Outbound HTTP to this bot (on loopback, so `allow_private`), and
    /// `send` when asked.
    fn grants(&self, send: bool) -> Value {
        let mut g = json!({ "http": { "hosts": [self.authority()], "allow_private": true } });
        if send {
            g["send"] = json!(true);
        }
        g
    }

    fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

/// A gateway whose integrations retry fast and give up after two attempts.
async fn gateway() -> TestServer {
    let server = TestServer::start_with(|c| {
        c.integrations.retry_base = Duration::from_millis(20);
        c.integrations.max_attempts = 2;
    })
    .await;
    server.paired_session("s").await;
    server
}

/// Binds the bot bridge to `bot` with `grants`; returns the binding.
async fn bridge(server: &TestServer, bot: &Bot, grants: Value) -> Value {
    let p = upload(server, BOT_BRIDGE).await;
    assert_eq!(p["world"], "switchboard:plugin/integration-plugin@0.2.0");
    assert_eq!(p["hooks"], json!(["integration"]));
    bind(
        server,
        &p,
        "integration",
        json!({ "config": { "endpoint": bot.url }, "grants": grants }),
    )
    .await
}

/// The texts the session sent, from the sim's outbox.
async fn sent_texts(server: &TestServer) -> Vec<String> {
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["body"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_bridge_answers_an_incoming_message_in_its_chat() {
    let server = gateway().await;
    let bot = Bot::start(false).await;
    bridge(&server, &bot, bot.grants(true)).await;
    let id = inbound(&server, "s", "where is my order?").await;
    let texts = eventually("the bot's answer to go out", || async {
        let t = sent_texts(&server).await;
        (!t.is_empty()).then_some(t)
    })
    .await;
    assert_eq!(texts, ["echo: where is my order?"]);
    let seen = bot.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["message_id"], id.as_str());
    assert_eq!(seen[0]["session_id"], "s");
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let to = outbox["messages"][0].to_string();
    assert!(
        to.contains("15550001111"),
        "the answer went to the chat: {to}"
    );
    assert!(dlq(&server, "s").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_http_grant_the_call_is_refused_and_dead_lettered_with_the_reason() {
    let server = gateway().await;
    let bot = Bot::start(false).await;
    let binding = bridge(&server, &bot, json!({ "send": true })).await;
    inbound(&server, "s", "hello").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    let entry = entries[0].to_string();
    assert!(entry.contains("grants no outbound HTTP"), "{entry}");
    assert!(
        entry.contains(binding["id"].as_str().unwrap()),
        "the entry names the binding: {entry}"
    );
    assert!(bot.seen().is_empty(), "nothing reached the bot");
    assert!(sent_texts(&server).await.is_empty());

    // The operator grants HTTP and replays the entry: handed over again.
    server
        .call(
            reqwest::Method::PUT,
            &format!(
                "/api/v1/plugins/bindings/{}",
                binding["id"].as_str().unwrap()
            ),
            Some(json!({
                "plugin_id": binding["plugin_id"], "hook": "integration",
                "config": { "endpoint": bot.url },
                "grants": bot.grants(true),
            })),
        )
        .await
        .expect(200);
    let entry_id = entries[0]["id"].as_str().unwrap();
    server
        .post_empty(&format!(
            "/api/v1/sessions/s/webhooks/dlq/{entry_id}/replay"
        ))
        .await
        .expect(200);
    let texts = eventually("the replayed event's answer", || async {
        let t = sent_texts(&server).await;
        (!t.is_empty()).then_some(t)
    })
    .await;
    assert_eq!(texts, ["echo: hello"]);
    assert!(
        dlq(&server, "s").await.is_empty(),
        "the entry left the queue"
    );
    // Two failed attempts, one dead-lettering, one event handled after the
    // replay.
    let wanted = [
        "switchboard_integration_deliveries_total{outcome=\"failed\"} 2",
        "switchboard_integration_deliveries_total{outcome=\"dead_lettered\"} 1",
        "switchboard_integration_deliveries_total{outcome=\"handled\"} 1",
        "switchboard_integration_deliveries_total{outcome=\"backlog_full\"} 0",
    ];
    eventually("the integration counters", || async {
        let metrics = server.get_text("/metrics").await;
        wanted.iter().all(|w| metrics.contains(w)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_address_is_refused_unless_the_grant_allows_it() {
    let server = gateway().await;
    let bot = Bot::start(false).await;
    bridge(
        &server,
        &bot,
        json!({ "http": { "hosts": [bot.authority()] }, "send": true }),
    )
    .await;
    inbound(&server, "s", "hello").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    let entry = entries[0].to_string();
    assert!(entry.contains("internal address 127.0.0.1"), "{entry}");
    assert!(bot.seen().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_the_grant_does_not_list_is_refused() {
    let server = gateway().await;
    let bot = Bot::start(false).await;
    bridge(
        &server,
        &bot,
        json!({ "http": { "hosts": ["bots.example.com"], "allow_private": true }, "send": true }),
    )
    .await;
    inbound(&server, "s", "hello").await;
    let entry = wait_for_dlq(&server, "s", 1).await[0].to_string();
    assert!(entry.contains("not among the hosts"), "{entry}");
    assert!(bot.seen().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_send_grant_the_answer_is_refused_and_nothing_is_sent() {
    let server = gateway().await;
    let bot = Bot::start(false).await;
    bridge(&server, &bot, bot.grants(false)).await;
    inbound(&server, "s", "hello").await;
    let entry = wait_for_dlq(&server, "s", 1).await[0].to_string();
    assert!(entry.contains("does not grant `send`"), "{entry}");
    assert_eq!(bot.seen().len(), 2, "asked once per attempt");
    assert!(sent_texts(&server).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_sessions_owed_events_are_not_handed_to_the_plugin_again() {
    // Retries a few hundred milliseconds apart, many attempts: the event is
    // still owed when the session goes.
    let server = TestServer::start_with(|c| {
        c.integrations.retry_base = Duration::from_millis(300);
        c.integrations.max_attempts = 20;
    })
    .await;
    server.paired_session("s").await;
    let bot = Bot::start(false).await;
    // HTTP granted, `send` not: every attempt asks the bot, then fails.
    bridge(&server, &bot, bot.grants(false)).await;
    inbound(&server, "s", "hello").await;
    eventually("the first attempt", || async {
        (!bot.seen().is_empty()).then_some(())
    })
    .await;
    server.delete("/api/v1/sessions/s").await.expect(200);
    let asked = bot.seen().len();
    // Several retry periods: an owed attempt would have reached the bot.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        bot.seen().len(),
        asked,
        "nothing handed over after the deletion"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_never_answers_holds_back_only_its_own_binding() {
    let server = gateway().await;
    let hung = Bot::start(true).await;
    let quick = Bot::start(false).await;
    let grants = |bot: &Bot| json!({ "http": { "hosts": [bot.authority()], "allow_private": true, "timeout_ms": 60000 }, "send": true });
    bridge(&server, &hung, grants(&hung)).await;
    bridge(&server, &quick, grants(&quick)).await;
    let webhook = message_hook(&server, "s").await;
    for n in 0..3 {
        inbound(&server, "s", &format!("m {n}")).await;
    }
    let texts = eventually("the quick bot's three answers", || async {
        let t = sent_texts(&server).await;
        (t.len() == 3).then_some(t)
    })
    .await;
    assert_eq!(texts, ["echo: m 0", "echo: m 1", "echo: m 2"]);
    webhook.wait_for(3).await;
    assert_eq!(hung.seen().len(), 1, "the hung bot holds its first event");
    server.get("/readyz").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_and_events_belong_to_integrations_only() {
    let server = gateway().await;
    let filter = upload(&server, switchboard_tests::plugins::KEYWORD_FILTER).await;
    for extra in [
        json!({ "grants": { "send": true } }),
        json!({ "events": ["message"] }),
    ] {
        let mut body = json!({ "plugin_id": filter["id"], "hook": "event_filter" });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        server
            .post("/api/v1/plugins/bindings", body)
            .await
            .expect_error(400, "invalid_field");
    }
    let bridge = upload(&server, BOT_BRIDGE).await;
    server
        .post(
            "/api/v1/plugins/bindings",
            json!({ "plugin_id": bridge["id"], "hook": "integration", "events": ["no_such_event"] }),
        )
        .await
        .expect_error(400, "invalid_field");
    server
        .post(
            "/api/v1/plugins/bindings",
            json!({ "plugin_id": bridge["id"], "hook": "integration",
                    "grants": { "http": { "hosts": ["http://x/y"] } } }),
        )
        .await
        .expect_error(400, "invalid_field");
}
