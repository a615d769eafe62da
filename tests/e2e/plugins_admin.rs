//! Plugin administration: what the upload and the replace refuse (bytes that
//! are no component, a body over the limit) and how bindings are validated;
//! the gateway keeps serving.

use reqwest::Method;
use serde_json::json;
use switchboard_tests::TestServer;
use switchboard_tests::plugins::KEYWORD_ROUTER;

use crate::plugins_support::{plugin, replace, upload, upload_bytes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_a_core_module_and_an_empty_component_are_refused_with_a_reason() {
    let server = TestServer::start().await;
    let m = upload_bytes(&server, b"hello, not wasm".to_vec())
        .await
        .expect_error(400, "not_a_component");
    assert!(m.contains("not WebAssembly"), "{m}");
    let m = upload_bytes(&server, b"\0asm\x01\0\0\0".to_vec())
        .await
        .expect_error(400, "not_a_component");
    assert!(m.contains("core WebAssembly module"), "{m}");
    let m = upload_bytes(&server, b"\0asm\x0d\0\x01\0".to_vec())
        .await
        .expect_error(400, "incompatible_world");
    assert!(m.contains("switchboard:plugin@0.1.0"), "{m}");
    upload_bytes(&server, b"\0asm\x0d\0\x01\0\x01\xff".to_vec())
        .await
        .expect_error(400, "invalid_component");
    upload_bytes(&server, b"".to_vec())
        .await
        .expect_error(400, "not_a_component");

    let list = server.get("/api/v1/plugins").await.expect(200);
    assert_eq!(list["count"], 0, "{list}");
    // Still serving.
    server.get("/api/v1/sessions").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bindings_to_unknown_plugins_and_unknown_ids_are_refused() {
    let server = TestServer::start().await;
    let m = server
        .post(
            "/api/v1/plugins/bindings",
            json!({ "plugin_id": "nope", "hook": "event_filter" }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(m.contains("plugin_id"), "{m}");
    server
        .post(
            "/api/v1/plugins/bindings",
            json!({ "plugin_id": "nope", "hook": "teleport" }),
        )
        .await
        .expect(400);
    server
        .delete("/api/v1/plugins/bindings/nope")
        .await
        .expect_error(404, "binding_not_found");
    server
        .get("/api/v1/plugins/nope")
        .await
        .expect_error(404, "plugin_not_found");
    server
        .call(Method::POST, "/api/v1/plugins/nope/enable", None)
        .await
        .expect_error(404, "plugin_not_found");
    let b = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(b["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plugin_api_needs_the_token() {
    let server = TestServer::start().await;
    let resp = server
        .http()
        .get(format!("{}/api/v1/plugins", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_or_replace_over_the_body_limit_is_a_json_413_and_changes_nothing() {
    // Room for the keyword router (about 150 KB), not for more than a MiB.
    const LIMIT: usize = 1 << 20;
    let server = TestServer::start_with(|c| c.max_plugin_bytes = LIMIT).await;
    let too_big = || {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        bytes.resize(LIMIT + 1, 0);
        bytes
    };

    let refused = upload_bytes(&server, too_big()).await;
    assert_eq!(
        refused.headers["content-type"], "application/json",
        "{:?}",
        refused.headers
    );
    let m = refused.expect_error(413, "payload_too_large");
    assert!(m.contains("--max-plugin-bytes"), "{m}");
    let list = server.get("/api/v1/plugins").await.expect(200);
    assert_eq!(list["count"], 0, "{list}");

    let p = upload(&server, KEYWORD_ROUTER).await;
    let refused = replace(&server, &p, too_big()).await;
    assert_eq!(
        refused.headers["content-type"], "application/json",
        "{:?}",
        refused.headers
    );
    refused.expect_error(413, "payload_too_large");
    let after = plugin(&server, &p).await;
    assert_eq!(
        after["sha256"], p["sha256"],
        "the plugin is unchanged: {after}"
    );
    assert_eq!(after["status"], "active", "{after}");
}
