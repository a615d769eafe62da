//! Hot loading from the plugin directory: a manifest and its component
//! dropped into the directory load as plugin `dir-<stem>` with the
//! manifest's bindings, a changed file reloads it in place, a removed
//! manifest unloads it, and a file that does not load is reported in
//! `GET /api/v1/plugins/directory` without touching the other plugins.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::plugins::{self, KEYWORD_ROUTER, REDACTOR};
use switchboard_tests::receiver::{TestReceiver, inbound, message_hook, wait_until_idle};
use switchboard_tests::{TestServer, eventually};

use crate::plugins_support::{CORE_MODULE, GARBAGE, datas, plugin, replace};

/// A gateway watching `dir`, scanning it every 20 ms.
async fn start(dir: &Path) -> TestServer {
    let dir = dir.to_owned();
    TestServer::start_with(move |c| {
        c.plugins.dir = Some(dir);
        c.plugins.dir_poll = Duration::from_millis(20);
    })
    .await
}

/// Writes a file into the directory the way a deploy tool should: a hidden
/// temporary file renamed into place, so a scan never reads half a file.
fn put(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).expect("temporary file written");
    std::fs::rename(&tmp, dir.join(name)).expect("file renamed into place");
}

/// A manifest loading `wasm` with one event-filter binding configured by
/// `config` (an inline TOML table, e.g. `{ keywords = ["order"] }`).
fn filter_manifest(wasm: &str, config: &str) -> String {
    format!("wasm = \"{wasm}\"\n\n[[binding]]\nhook = \"event_filter\"\nconfig = {config}\n")
}

/// `GET /api/v1/plugins/directory`.
async fn directory(server: &TestServer) -> Value {
    server.get("/api/v1/plugins/directory").await.expect(200)
}

/// Waits until the directory view's entry for `manifest` satisfies `pred`.
async fn wait_file(
    server: &TestServer,
    manifest: &str,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    eventually(&format!("manifest {manifest} {what}"), || async {
        let view = directory(server).await;
        view["files"]
            .as_array()?
            .iter()
            .find(|f| f["manifest"] == manifest && pred(f))
            .cloned()
    })
    .await
}

/// Injects messages with `text` until one arrives at the receiver looking
/// as `pred` wants: the barrier that a reload took effect. Returns its data.
async fn until_delivered(
    server: &TestServer,
    receiver: &TestReceiver,
    text: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    eventually(
        &format!("a message `{text}` delivered as wanted"),
        || async {
            inbound(server, "s", text).await;
            datas(receiver).into_iter().find(|d| pred(d))
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_dropped_into_the_directory_loads_its_plugin_and_removing_it_unloads_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let view = directory(&server).await;
    assert_eq!(view["path"], dir.path().display().to_string(), "{view}");
    assert_eq!(view["poll_ms"], 20, "{view}");
    assert_eq!(view["files"], json!([]), "{view}");

    put(dir.path(), "router.wasm", plugins::bytes(KEYWORD_ROUTER));
    let manifest = filter_manifest("router.wasm", r#"{ keywords = ["order"] }"#);
    put(
        dir.path(),
        "router.toml",
        format!("name = \"router\"\n{manifest}"),
    );
    let file = wait_file(&server, "router.toml", "loaded", |f| {
        f["status"] == "loaded"
    })
    .await;
    assert_eq!(file["plugin_id"], "dir-router", "{file}");
    let p = plugin(&server, &json!("dir-router")).await;
    assert_eq!(p["name"], "router", "the manifest names it: {p}");
    assert_eq!(p["source"], "directory", "{p}");
    assert_eq!(p["manifest"], "router.toml", "{p}");
    assert_eq!(p["hooks"], json!(["event_filter"]), "{p}");
    let bindings = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(bindings["count"], 1, "{bindings}");
    assert_eq!(bindings["bindings"][0]["plugin_id"], "dir-router");
    assert_eq!(bindings["bindings"][0]["source"], "directory");

    inbound(&server, "s", "hello there").await;
    let wanted = inbound(&server, "s", "my order 42").await;
    // The kept message was published last: once it has arrived and nothing
    // is pending, a dropped one that got through would be here too.
    receiver
        .wait_for_match("the kept message", |r| {
            r.json()["data"]["message_id"] == wanted.as_str()
        })
        .await;
    wait_until_idle(&server, "s", &receiver.url()).await;
    let got = receiver.requests();
    assert_eq!(
        receiver.count(),
        1,
        "the manifest's filter dropped the rest"
    );
    assert_eq!(got[0].json()["data"]["message_id"], wanted.as_str());

    // The files are the truth: the API cannot replace or delete the plugin.
    replace(&server, &p, plugins::bytes(REDACTOR))
        .await
        .expect_error(409, "managed_by_directory");
    server
        .delete("/api/v1/plugins/dir-router")
        .await
        .expect_error(409, "managed_by_directory");

    std::fs::remove_file(dir.path().join("router.toml")).unwrap();
    eventually("the removed manifest to unload its plugin", || async {
        let gone = server.get("/api/v1/plugins/dir-router").await.status == 404;
        let view = directory(&server).await;
        (gone && view["files"] == json!([])).then_some(())
    })
    .await;
    let bindings = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(
        bindings["count"], 0,
        "its bindings went with it: {bindings}"
    );
    let unfiltered = inbound(&server, "s", "hello again").await;
    let got = receiver.wait_for(2).await;
    assert_eq!(got[1].json()["data"]["message_id"], unfiltered.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_the_component_or_the_manifest_reloads_the_plugin_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    put(dir.path(), "filter.wasm", plugins::bytes(KEYWORD_ROUTER));
    put(
        dir.path(),
        "filter.toml",
        filter_manifest("filter.wasm", "{}"),
    );
    wait_file(&server, "filter.toml", "loaded", |f| {
        f["status"] == "loaded"
    })
    .await;
    let before = plugin(&server, &json!("dir-filter")).await;
    assert_eq!(before["name"], "keyword-router", "{before}");
    let phone = "4915112345678";
    let kept = until_delivered(&server, &receiver, &format!("call {phone}"), |_| true).await;
    assert_eq!(
        kept["text"],
        format!("call {phone}"),
        "a router without keywords keeps all"
    );

    // A new component under the same manifest: the redactor masks numbers.
    put(dir.path(), "filter.wasm", plugins::bytes(REDACTOR));
    let masked = until_delivered(&server, &receiver, &format!("now {phone}"), |d| {
        d["text"] == "now *************"
    })
    .await;
    assert!(!masked.to_string().contains(phone), "{masked}");
    let after = plugin(&server, &json!("dir-filter")).await;
    assert_eq!(after["id"], "dir-filter");
    assert_eq!(after["name"], "redactor", "{after}");
    assert_ne!(after["sha256"], before["sha256"], "{after}");
    assert_eq!(
        after["created_at"], before["created_at"],
        "reloaded, not recreated"
    );

    // A new configuration in the manifest, same component.
    put(
        dir.path(),
        "filter.toml",
        filter_manifest("filter.wasm", r##"{ mask = "#", keep_last = 2 }"##),
    );
    until_delivered(&server, &receiver, &format!("then {phone}"), |d| {
        d["text"] == "then ###########78"
    })
    .await;
    let bindings = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(bindings["count"], 1, "{bindings}");
    assert_eq!(
        bindings["bindings"][0]["config"],
        json!({ "mask": "#", "keep_last": 2 })
    );
    // And it holds: every later message gets the new configuration.
    let last = inbound(&server, "s", &format!("last {phone}")).await;
    let got = receiver
        .wait_for_match("the last message", |r| {
            r.json()["data"]["message_id"] == last.as_str()
        })
        .await;
    assert_eq!(got.json()["data"]["text"], "last ###########78");
    let view = directory(&server).await;
    assert_eq!(view["files"][0]["status"], "loaded", "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_manifests_and_components_are_reported_and_the_good_plugin_keeps_running() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let d = dir.path();
    put(d, "router.wasm", plugins::bytes(KEYWORD_ROUTER));
    put(
        d,
        "good.toml",
        filter_manifest("router.wasm", r#"{ keywords = ["order"] }"#),
    );
    put(d, "garbage.wasm", GARBAGE);
    put(d, "garbage.toml", "wasm = \"garbage.wasm\"\n");
    put(d, "core.wasm", CORE_MODULE);
    put(d, "core.toml", "wasm = \"core.wasm\"\n");
    put(
        d,
        "broken.toml",
        "wasm = \"router.wasm\"\ncolour = \"blue\"\n",
    );
    put(d, "escape.toml", "wasm = \"../router.wasm\"\n");
    put(d, "missing.toml", "wasm = \"nowhere.wasm\"\n");
    put(d, "bad name.toml", "wasm = \"router.wasm\"\n");
    put(
        d,
        "hookless.toml",
        "wasm = \"router.wasm\"\n[[binding]]\nhook = \"message_transform\"\n",
    );

    let expected = [
        ("garbage.toml", "not WebAssembly"),
        ("core.toml", "core WebAssembly module"),
        ("broken.toml", "colour"),
        ("escape.toml", "inside the plugin directory"),
        ("missing.toml", "nowhere.wasm"),
        ("bad name.toml", "file name"),
        ("hookless.toml", "message_transform"),
    ];
    wait_file(&server, "good.toml", "loaded", |f| f["status"] == "loaded").await;
    for (manifest, why) in expected {
        let f = wait_file(&server, manifest, "reported", |f| f["status"] == "error").await;
        let error = f["error"].as_str().unwrap_or_default();
        assert!(error.contains(why), "{manifest}: `{why}` in {f}");
    }
    let list = server.get("/api/v1/plugins").await.expect(200);
    assert_eq!(list["count"], 1, "only the good plugin runs: {list}");
    assert_eq!(list["plugins"][0]["id"], "dir-good");

    inbound(&server, "s", "dropped by the good filter").await;
    let kept = inbound(&server, "s", "an order").await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].json()["data"]["message_id"], kept.as_str());

    // A good manifest changed into a bad one: reported, the last good
    // version keeps running.
    put(d, "good.toml", "wasm = \"garbage.wasm\"\n");
    let f = wait_file(&server, "good.toml", "stale", |f| f["status"] == "stale").await;
    assert!(
        f["error"].as_str().unwrap().contains("not WebAssembly"),
        "{f}"
    );
    inbound(&server, "s", "still dropped").await;
    let kept = inbound(&server, "s", "another order").await;
    // The kept message was published last: once it has arrived and nothing
    // is pending, a dropped one that got through would be here too.
    receiver
        .wait_for_match("the kept message", |r| {
            r.json()["data"]["message_id"] == kept.as_str()
        })
        .await;
    wait_until_idle(&server, "s", &receiver.url()).await;
    let got = receiver.requests();
    assert_eq!(receiver.count(), 2, "the old filter still applies");
    assert_eq!(got[1].json()["data"]["message_id"], kept.as_str());

    // Fixing a component loads the manifests that name it.
    put(d, "garbage.wasm", plugins::bytes(REDACTOR));
    wait_file(&server, "garbage.toml", "loaded", |f| {
        f["status"] == "loaded"
    })
    .await;
    wait_file(&server, "good.toml", "loaded", |f| f["status"] == "loaded").await;
    server.get("/api/v1/sessions").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_already_in_the_directory_are_in_place_when_the_gateway_answers() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "redactor.wasm", plugins::bytes(REDACTOR));
    put(
        dir.path(),
        "redactor.toml",
        filter_manifest("redactor.wasm", "{}"),
    );
    let server = start(dir.path()).await;
    // No waiting: the first scan ran before the API started serving.
    let p = plugin(&server, &json!("dir-redactor")).await;
    assert_eq!(p["status"], "active", "{p}");
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    inbound(&server, "s", "ring 4915112345678").await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].json()["data"]["text"], "ring *************");
}
