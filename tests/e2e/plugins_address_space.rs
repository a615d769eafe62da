//! A host whose address space is limited (`ulimit -v`, systemd
//! `LimitAS=`) cannot reserve the plugin pool with 4 GiB per memory; the
//! gateway says so, reserves each memory's cap instead, and plugins run.

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::plugins::{self, KEYWORD_FILTER};
use switchboard_tests::process::GatewayProcess;
use switchboard_tests::{TOKEN, eventually, http_client};

/// 32 GiB: far above what the gateway needs, far below the ~260 GiB the
/// wide pool reserves.
const ADDRESS_SPACE_KIB: u64 = 32 << 20;

async fn call(base: &str, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = http_client()
        .request(method, format!("{base}{path}"))
        .bearer_auth(TOKEN);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("the gateway answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_limited_address_space_the_gateway_falls_back_to_a_narrower_pool_and_runs_plugins() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" serve --listen 127.0.0.1:0 --network sim --data-dir \"$1\""
        ))
        .arg(crate::BINARY)
        .arg(dir.path())
        .env("API_TOKEN", TOKEN);
    let gw = GatewayProcess::start(cmd).await;
    let base = gw.base.clone();
    assert!(
        gw.stdout
            .text()
            .contains("reserving each memory's cap instead"),
        "the fallback is logged:\n{}",
        gw.stdout.text()
    );

    let (s, _) = call(
        &base,
        Method::POST,
        "/api/v1/sessions",
        Some(json!({ "id": "s" })),
    )
    .await;
    assert_eq!(s, 201);
    let (s, _) = call(&base, Method::POST, "/api/v1/sessions/s/connect", None).await;
    assert_eq!(s, 200);
    eventually("the session logs in", || {
        let base = base.clone();
        async move {
            let (_, v) = call(&base, Method::GET, "/api/v1/sessions/s", None).await;
            (v["status"] == "logged_in").then_some(())
        }
    })
    .await;

    let uploaded = http_client()
        .post(format!("{base}/api/v1/plugins"))
        .bearer_auth(TOKEN)
        .header("content-type", "application/wasm")
        .body(plugins::bytes(KEYWORD_FILTER))
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status().as_u16(), 201);
    let plugin: Value = uploaded.json().await.unwrap();
    let id = plugin["id"].as_str().unwrap().to_owned();
    let binding = json!({
        "plugin_id": id, "hook": "event_filter", "config": { "keywords": ["order"] }
    });
    let (s, _) = call(
        &base,
        Method::POST,
        "/api/v1/plugins/bindings",
        Some(binding),
    )
    .await;
    assert_eq!(s, 201);
    for text in ["my order", "hello"] {
        let inbound = json!({ "from": "15550001111", "text": text });
        let (s, _) = call(
            &base,
            Method::POST,
            "/api/v1/sim/sessions/s/inbound",
            Some(inbound),
        )
        .await;
        assert_eq!(s, 200);
    }
    let counters = eventually("the filter has decided both messages", || {
        let (base, id) = (base.clone(), id.clone());
        async move {
            let (_, p) = call(&base, Method::GET, &format!("/api/v1/plugins/{id}"), None).await;
            (p["counters"]["calls"] == 2).then_some(p["counters"].clone())
        }
    })
    .await;
    assert_eq!(counters["drops"], 1, "{counters}");
    assert_eq!(counters["traps"], 0, "{counters}");
    gw.stop().await;
}
