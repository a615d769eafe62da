//! Integration deliveries across a crash: the real binary, with the bot
//! bridge bound to a local bot that fails every request, handles five
//! messages (each tried at least once, all still owed), and is killed with
//! SIGKILL. The bot recovers, the gateway restarts on the same data
//! directory, and every message is answered exactly once: nothing the
//! outbox owed was lost, and no answer went out twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::TOKEN;
use switchboard_tests::crash::{Intervals, Rig, until};
use switchboard_tests::plugins::{BOT_BRIDGE, bytes};

use crate::BINARY;

/// A bot that answers 503 until it is healthy, and counts what it saw.
#[derive(Default)]
struct Bot {
    healthy: AtomicBool,
    seen: std::sync::Mutex<Vec<Value>>,
}

async fn answer(State(bot): State<Arc<Bot>>, Json(body): Json<Value>) -> Response {
    bot.seen.lock().unwrap().push(body.clone());
    if !bot.healthy.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let text = body["text"].as_str().unwrap_or_default();
    Json(json!({ "reply": format!("echo: {text}") })).into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_kill_every_owed_event_reaches_the_integration_and_is_answered_once() {
    let bot = Arc::new(Bot::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/bot", post(answer))
        .with_state(bot.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let mut rig = Rig::start_with_env(
        BINARY,
        Intervals::Fast,
        &[
            ("SWITCHBOARD_INTEGRATION_RETRY_BASE_MS", "100"),
            ("SWITCHBOARD_INTEGRATION_MAX_ATTEMPTS", "100"),
        ],
    )
    .await;
    rig.api().pair("s").await;
    let api = rig.api().clone();
    let plugin: Value = api
        .http()
        .post(format!("{}/api/v1/plugins", api.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "application/wasm")
        .body(bytes(BOT_BRIDGE))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    api.expect(
        Method::POST,
        "/api/v1/plugins/bindings",
        Some(json!({
            "plugin_id": plugin["id"], "hook": "integration",
            "config": { "endpoint": format!("http://{addr}/bot") },
            "grants": { "http": { "hosts": [addr.to_string()], "allow_private": true }, "send": true },
        })),
        201,
    )
    .await;
    for n in 0..5 {
        api.expect(
            Method::POST,
            "/api/v1/sim/sessions/s/inbound",
            Some(json!({ "from": "15550001111", "text": format!("m {n}") })),
            200,
        )
        .await;
    }
    // Handed over in order, one binding at a time: once the last message
    // was tried, every one of them failed at least once and is still owed.
    until("every message to be tried", || async {
        bot.seen.lock().unwrap().iter().any(|b| b["text"] == "m 4")
    })
    .await;
    rig.kill().await;
    bot.healthy.store(true, Ordering::SeqCst);
    rig.restart(&["s"]).await;

    let api = rig.api().clone();
    until("the five answers", || async {
        api.outbox("s").await.len() >= 5
    })
    .await;
    // Any repeat would have been sent by now: the owed rows are gone.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let mut texts: Vec<String> = api
        .outbox("s")
        .await
        .iter()
        .filter_map(|m| m["body"]["text"].as_str().map(str::to_owned))
        .collect();
    texts.sort();
    let want: Vec<String> = (0..5).map(|n| format!("echo: m {n}")).collect();
    assert_eq!(texts, want, "each owed event answered exactly once");
    // The restarted gateway counts the five it found owed, and five handled.
    let metrics = api
        .http()
        .get(format!("{}/metrics", api.base()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "switchboard_integration_outbox_resumed_total 5",
        "switchboard_integration_deliveries_total{outcome=\"handled\"} 5",
    ] {
        assert!(metrics.contains(line), "{line} in:\n{metrics}");
    }
}
