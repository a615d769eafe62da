//! A host whose address space is limited (`ulimit -v`, systemd
//! `LimitAS=`) cannot reserve the plugin pool with 4 GiB per memory; the
//! gateway says so, reserves each memory's cap instead, and plugins run.

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::crash::Api;
use switchboard_tests::plugins::{self, KEYWORD_FILTER};
use switchboard_tests::process::GatewayProcess;
use switchboard_tests::{TOKEN, eventually};

/// 32 GiB: far above what the gateway needs, far below the ~260 GiB the
/// wide pool reserves.
const ADDRESS_SPACE_KIB: u64 = 32 << 20;

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
    assert!(
        gw.stdout
            .text()
            .contains("reserving each memory's cap instead"),
        "the fallback is logged:\n{}",
        gw.stdout.text()
    );
    let api = Api::new(&gw.base);
    api.pair("s").await;

    let uploaded = api
        .http()
        .post(format!("{}/api/v1/plugins", api.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "application/wasm")
        .body(plugins::bytes(KEYWORD_FILTER))
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status().as_u16(), 201);
    let plugin: Value = uploaded.json().await.unwrap();
    let path = format!("/api/v1/plugins/{}", plugin["id"].as_str().unwrap());
    let binding = json!({
        "plugin_id": plugin["id"], "hook": "event_filter", "config": { "keywords": ["order"] }
    });
    api.expect(Method::POST, "/api/v1/plugins/bindings", Some(binding), 201)
        .await;
    for text in ["my order", "hello"] {
        let inbound = json!({ "from": "15550001111", "text": text });
        api.expect(
            Method::POST,
            "/api/v1/sim/sessions/s/inbound",
            Some(inbound),
            200,
        )
        .await;
    }
    let counters = eventually("the filter has decided both messages", || async {
        let p = api.get(&path).await;
        (p["counters"]["calls"] == 2).then_some(p["counters"].clone())
    })
    .await;
    assert_eq!(counters["drops"], 1, "{counters}");
    assert_eq!(counters["traps"], 0, "{counters}");
    gw.stop().await;
}
