//! Hostile components contained: a memory bomb stopped by the memory cap
//! and an endless loop by the CPU deadline, each failure counted, reported
//! and, after the configured number in a row, quarantined, under fail-open
//! and fail-closed bindings; a running plugin cannot be replaced by garbage
//! or a core module; a quarantine outlives a restart. Through all of it the
//! gateway keeps serving.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::plugins::{
    self, HOSTILE_LOOP, HOSTILE_MEMORY, HOSTILE_TRAP, KEYWORD_ROUTER, REDACTOR,
};
use switchboard_tests::receiver::{inbound, message_hook, wait_until_idle};
use switchboard_tests::{TestServer, eventually};

use crate::plugins_support::{
    CORE_MODULE, GARBAGE, bind, id, plugin, replace, upload, wait_plugin,
};

/// A gateway quarantining after `after` failures in a row, with an 8 MiB
/// memory cap and a CPU deadline of `deadline_ms` per call.
async fn start(after: u32, deadline_ms: u64) -> TestServer {
    TestServer::start_with(|c| {
        c.plugins.quarantine_after = after;
        c.plugins.max_memory_bytes = 8 << 20;
        c.plugins.call_timeout = Duration::from_millis(deadline_ms);
    })
    .await
}

/// A deadline no memory bomb reaches before the cap stops it, even on a
/// slow machine: what stops it must be the cap.
const GENEROUS: u64 = 5_000;

/// The gateway still does its ordinary work: lists sessions, sends a text.
async fn still_serving(server: &TestServer) {
    server.get("/api/v1/sessions").await.expect(200);
    server.get("/api/v1/plugins").await.expect(200);
    server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "+15550002222", "text": "still here" }),
        )
        .await
        .expect(200);
}

fn reason(p: &Value) -> &str {
    p["quarantined_reason"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_is_stopped_by_the_cap_fails_open_and_is_quarantined() {
    let server = start(3, GENEROUS).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let bomb = upload(&server, HOSTILE_MEMORY).await;
    bind(&server, &bomb, "event_filter", json!({ "order": 0 })).await;
    // A well-behaved filter after it in the chain still runs.
    let redactor = upload(&server, REDACTOR).await;
    bind(&server, &redactor, "event_filter", json!({ "order": 1 })).await;

    for i in 0..5 {
        inbound(&server, "s", &format!("m{i} call 4915112345678")).await;
    }
    let got = receiver.wait_for(5).await;
    for r in &got {
        let text = r.json()["data"]["text"].as_str().unwrap().to_owned();
        assert!(
            text.ends_with("call *************"),
            "fail-open, then redacted: {text}"
        );
    }
    let p = plugin(&server, &bomb).await;
    assert_eq!(p["status"], "quarantined", "{p}");
    assert_eq!(
        p["counters"]["traps"], 3,
        "not called once quarantined: {p}"
    );
    assert_eq!(
        p["counters"]["timeouts"], 0,
        "the cap stopped it, not the clock: {p}"
    );
    assert!(reason(&p).contains("3 failed calls"), "{p}");
    assert!(
        reason(&p).contains("out of memory") && reason(&p).contains("cap of 8 MiB"),
        "the reason names the cause: {p}"
    );
    let r = plugin(&server, &redactor).await;
    assert_eq!(r["status"], "active", "{r}");
    assert_eq!(r["counters"]["traps"], 0, "{r}");
    still_serving(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_under_a_fail_closed_binding_drops_events_until_fixed_and_re_enabled() {
    let server = start(2, GENEROUS).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let bomb = upload(&server, HOSTILE_MEMORY).await;
    bind(
        &server,
        &bomb,
        "event_filter",
        json!({ "failure_policy": "fail_closed", "config": { "keywords": ["order"] } }),
    )
    .await;
    for text in ["an order", "another order", "a third order"] {
        inbound(&server, "s", text).await;
    }
    // Quarantined after the second trap; the third event is dropped unseen.
    let p = eventually(
        "the bomb to be quarantined and all three dropped",
        || async {
            let p = plugin(&server, &bomb).await;
            (p["status"] == "quarantined" && p["counters"]["drops"] == 3).then_some(p)
        },
    )
    .await;
    assert_eq!(p["counters"]["traps"], 2, "{p}");
    assert_eq!(
        p["counters"]["drops"], 3,
        "fail-closed, also while quarantined: {p}"
    );
    still_serving(&server).await;

    // The operator ships a fixed version: it stays quarantined until enabled.
    let fixed = replace(&server, &bomb, plugins::bytes(KEYWORD_ROUTER))
        .await
        .expect(200);
    assert_eq!(fixed["status"], "quarantined", "{fixed}");
    // Filters run when intake publishes the event (once its record is
    // committed), so wait for this one's drop before enabling the plugin.
    let drops = fixed["counters"]["drops"].as_u64().unwrap_or(0);
    inbound(&server, "s", "an order while still quarantined").await;
    eventually("the quarantined filter to drop the event", || async {
        let p = plugin(&server, &bomb).await;
        (p["counters"]["drops"].as_u64() > Some(drops)).then_some(())
    })
    .await;
    let enabled = server
        .post_empty(&format!("/api/v1/plugins/{}/enable", id(&bomb)))
        .await
        .expect(200);
    assert_eq!(enabled["status"], "active", "{enabled}");
    inbound(&server, "s", "no keyword here").await;
    let kept = inbound(&server, "s", "an order at last").await;
    // The kept message was published last: once it has arrived and nothing
    // is pending, a dropped one that got through would be here too.
    receiver
        .wait_for_match("the kept message", |r| {
            r.json()["data"]["message_id"] == kept.as_str()
        })
        .await;
    wait_until_idle(&server, "s", &receiver.url()).await;
    let got = receiver.requests();
    assert_eq!(receiver.count(), 1, "only the fixed filter's keep");
    assert_eq!(got[0].json()["data"]["message_id"], kept.as_str());
    let p = plugin(&server, &bomb).await;
    assert_eq!(p["counters"]["traps"], 2, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_is_cut_at_the_deadline_fails_open_and_is_quarantined() {
    let server = start(3, 20).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let looping = upload(&server, HOSTILE_LOOP).await;
    bind(&server, &looping, "event_filter", json!({})).await;
    for i in 0..4 {
        inbound(&server, "s", &format!("m{i}")).await;
    }
    receiver.wait_for(4).await;
    let p = plugin(&server, &looping).await;
    assert_eq!(p["status"], "quarantined", "{p}");
    assert_eq!(p["counters"]["timeouts"], 3, "{p}");
    assert_eq!(p["counters"]["traps"], 0, "{p}");
    assert!(reason(&p).contains("timed out"), "{p}");
    still_serving(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_or_a_core_module_cannot_replace_a_running_plugin_which_keeps_filtering() {
    let server = start(3, GENEROUS).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, KEYWORD_ROUTER).await;
    bind(
        &server,
        &p,
        "event_filter",
        json!({ "config": { "keywords": ["order"] } }),
    )
    .await;
    let m = replace(&server, &p, GARBAGE.to_vec())
        .await
        .expect_error(400, "not_a_component");
    assert!(m.contains("not WebAssembly"), "{m}");
    let m = replace(&server, &p, CORE_MODULE.to_vec())
        .await
        .expect_error(400, "not_a_component");
    assert!(m.contains("core WebAssembly module"), "{m}");
    // A component of the wrong shape: it no longer implements a bound hook.
    let footer = replace(&server, &p, plugins::bytes(plugins::FOOTER))
        .await
        .expect_error(400, "incompatible_world");
    assert!(footer.contains("event_filter"), "{footer}");

    let after = plugin(&server, &p).await;
    assert_eq!(after["sha256"], p["sha256"], "{after}");
    assert_eq!(after["version"], p["version"], "{after}");
    inbound(&server, "s", "dropped").await;
    let kept = inbound(&server, "s", "an order").await;
    // The kept message was published last: once it has arrived and nothing
    // is pending, a dropped one that got through would be here too.
    receiver
        .wait_for_match("the kept message", |r| {
            r.json()["data"]["message_id"] == kept.as_str()
        })
        .await;
    wait_until_idle(&server, "s", &receiver.url()).await;
    let got = receiver.requests();
    assert_eq!(receiver.count(), 1);
    assert_eq!(got[0].json()["data"]["message_id"], kept.as_str());
    still_serving(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quarantine_survives_a_restart_and_the_plugin_is_not_called_after_it() {
    let mut server = start(1, GENEROUS).await;
    server.paired_session("s").await;
    let p = upload(&server, HOSTILE_TRAP).await;
    bind(&server, &p, "event_filter", json!({})).await;
    inbound(&server, "s", "trips it").await;
    wait_plugin(&server, &p, "quarantined", |q| q["status"] == "quarantined").await;

    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let receiver = message_hook(&server, "s").await;
    let q = plugin(&server, &p).await;
    assert_eq!(q["status"], "quarantined", "{q}");
    assert!(reason(&q).contains("1 failed call in a row"), "{q}");
    // The panic message the plugin printed did not crash the host's side.
    assert!(
        reason(&q).contains("wasm trap"),
        "a trap of the plugin: {q}"
    );
    assert!(!reason(&q).contains("host"), "{q}");
    let m = inbound(&server, "s", "after the restart").await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].json()["data"]["message_id"], m.as_str(), "fail-open");
    let q = plugin(&server, &p).await;
    assert_eq!(q["counters"]["calls"], 0, "never called: {q}");
    still_serving(&server).await;
}
