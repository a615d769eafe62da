//! Helpers shared by the plugin tests: uploading and replacing components,
//! binding them, reading a plugin back, and waiting on its state.

use serde_json::{Value, json};
use switchboard_tests::{Resp, TOKEN, TestServer, eventually, plugins};

/// A minimal core WebAssembly module (header only): not a component.
pub const CORE_MODULE: &[u8] = b"\0asm\x01\0\0\0";

/// Bytes that are not WebAssembly at all.
pub const GARBAGE: &[u8] = b"hello, not wasm; just some garbage bytes";

/// Uploads raw bytes as a plugin; returns the response, whatever it is.
pub async fn upload_bytes(server: &TestServer, bytes: Vec<u8>) -> Resp {
    let resp = server
        .http()
        .post(format!("{}/api/v1/plugins", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "application/wasm")
        .body(bytes)
        .send()
        .await
        .unwrap();
    TestServer::read(resp).await
}

/// Uploads a component; returns the plugin.
pub async fn upload(server: &TestServer, path: &str) -> Value {
    upload_bytes(server, plugins::bytes(path)).await.expect(201)
}

/// `PUT /api/v1/plugins/{id}` with these bytes: replace in place.
pub async fn replace(server: &TestServer, plugin: &Value, bytes: Vec<u8>) -> Resp {
    let resp = server
        .http()
        .put(format!("{}/api/v1/plugins/{}", server.base(), id(plugin)))
        .bearer_auth(TOKEN)
        .header("content-type", "application/wasm")
        .body(bytes)
        .send()
        .await
        .unwrap();
    TestServer::read(resp).await
}

/// Binds a plugin; returns the binding.
pub async fn bind(server: &TestServer, plugin: &Value, hook: &str, extra: Value) -> Value {
    let mut body = json!({ "plugin_id": plugin["id"], "hook": hook });
    if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
        b.extend(e);
    }
    server
        .post("/api/v1/plugins/bindings", body)
        .await
        .expect(201)
}

/// The plugin's `id` as text (of a plugin or binding body, or an id string).
#[track_caller]
pub fn id(v: &Value) -> &str {
    v.as_str()
        .or_else(|| v["id"].as_str())
        .unwrap_or_else(|| panic!("no id in {v}"))
}

/// `GET /api/v1/plugins/{id}`, expecting 200.
pub async fn plugin(server: &TestServer, plugin_or_id: &Value) -> Value {
    server
        .get(&format!("/api/v1/plugins/{}", id(plugin_or_id)))
        .await
        .expect(200)
}

/// Waits until the plugin satisfies `pred`; returns it.
pub async fn wait_plugin(
    server: &TestServer,
    plugin_or_id: &Value,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let path = format!("/api/v1/plugins/{}", id(plugin_or_id));
    eventually(&format!("plugin {path} {what}"), || async {
        let r = server.get(&path).await;
        (r.status == 200 && pred(&r.body)).then_some(r.body)
    })
    .await
}

/// The `data` of every webhook request the receiver got, in arrival order.
pub fn datas(receiver: &switchboard_tests::receiver::TestReceiver) -> Vec<Value> {
    receiver
        .requests()
        .iter()
        .map(|r| r.json()["data"].clone())
        .collect()
}
