//! The plugin platform end to end, with the example components built from
//! source: each hook's effect at a webhook receiver and in the sim outbox,
//! hostile components contained and quarantined, persistence over a restart.

use serde_json::json;
use switchboard_tests::plugins::{FOOTER, HOSTILE_LOOP, HOSTILE_TRAP, KEYWORD_ROUTER};
use switchboard_tests::receiver::{inbound, message_hook, wait_until_idle};
use switchboard_tests::{TestServer, eventually};

use crate::plugins_support::{bind, plugin, upload};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyword_router_lets_only_matching_messages_reach_a_webhook() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, KEYWORD_ROUTER).await;
    assert_eq!(p["hooks"], json!(["event_filter"]));
    bind(
        &server,
        &p,
        "event_filter",
        json!({ "config": { "keywords": ["order"], "mode": "keep" } }),
    )
    .await;
    inbound(&server, "s", "hello there").await;
    let wanted = inbound(&server, "s", "my order 42").await;
    inbound(&server, "s", "nothing to see").await;
    // The filter ran for all three once it was called three times; once
    // nothing is pending for the receiver, what reached it is all there is.
    eventually("the filter to see all three", || async {
        let p = plugin(&server, &p["id"]).await;
        (p["counters"]["calls"] == 3).then_some(())
    })
    .await;
    receiver.wait_for(1).await;
    wait_until_idle(&server, "s", &receiver.url()).await;
    let got = receiver.requests();
    assert_eq!(
        receiver.count(),
        1,
        "only the matching message is delivered"
    );
    assert_eq!(got[0].json()["data"]["message_id"], wanted.as_str());
    let p = plugin(&server, &p["id"]).await;
    assert_eq!(p["counters"]["calls"], 3, "{p}");
    assert_eq!(p["counters"]["drops"], 2, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_footer_signs_outbound_text_and_a_banned_word_is_a_422() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let p = upload(&server, FOOTER).await;
    bind(
        &server,
        &p,
        "message_transform",
        json!({ "config": { "footer": "-- Acme", "banned_words": ["password"] } }),
    )
    .await;
    server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "+15550002222", "text": "hi" }),
        )
        .await
        .expect(200);
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let text = outbox["messages"][0]["body"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("hi") && text.ends_with("-- Acme"),
        "{text}"
    );
    let m = server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "+15550002222", "text": "my password is hunter2" }),
        )
        .await
        .expect_error(422, "rejected_by_plugin");
    assert!(m.contains("password"), "{m}");
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    assert_eq!(
        outbox["count"], 1,
        "the rejected send never reached the network"
    );
    let p = plugin(&server, &p["id"]).await;
    assert_eq!(p["counters"]["rejects"], 1, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapping_filter_fails_open_is_quarantined_and_can_be_re_enabled() {
    let server = TestServer::start_with(|c| c.plugins.quarantine_after = 3).await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, HOSTILE_TRAP).await;
    bind(&server, &p, "event_filter", json!({})).await;
    for i in 0..5 {
        inbound(&server, "s", &format!("m{i}")).await;
    }
    receiver.wait_for(5).await;
    let got = plugin(&server, &p["id"]).await;
    assert_eq!(got["status"], "quarantined", "{got}");
    assert_eq!(
        got["counters"]["traps"], 3,
        "not called once quarantined: {got}"
    );
    assert!(
        got["quarantined_reason"]
            .as_str()
            .unwrap()
            .contains("3 failed calls")
    );
    let got = server
        .post_empty(&format!(
            "/api/v1/plugins/{}/enable",
            p["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    assert_eq!(got["status"], "active");
    server.get("/api/v1/sessions").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_times_out_and_a_fail_closed_binding_drops_the_event() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    let p = upload(&server, HOSTILE_LOOP).await;
    let b = bind(
        &server,
        &p,
        "event_filter",
        json!({ "failure_policy": "fail_closed" }),
    )
    .await;
    inbound(&server, "s", "lost").await;
    eventually("the filter call to time out", || async {
        let got = plugin(&server, &p["id"]).await;
        (got["counters"]["timeouts"] == 1).then_some(())
    })
    .await;
    server
        .delete(&format!(
            "/api/v1/plugins/bindings/{}",
            b["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    let kept = inbound(&server, "s", "kept").await;
    let r = receiver.wait_for(1).await;
    assert_eq!(r[0].json()["data"]["message_id"], kept.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_and_bindings_survive_a_restart() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    let p = upload(&server, FOOTER).await;
    let b = bind(
        &server,
        &p,
        "message_transform",
        json!({ "config": { "footer": "-- kept" } }),
    )
    .await;
    server.restart().await;
    let list = server.get("/api/v1/plugins").await.expect(200);
    assert_eq!(list["plugins"][0]["id"], p["id"], "{list}");
    let bindings = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(bindings["bindings"][0]["id"], b["id"]);
    server.wait_for_status("s", "logged_in").await;
    eventually("a signed send after the restart", || async {
        let r = server
            .post(
                "/api/v1/sessions/s/messages/text",
                json!({ "to": "+15550002222", "text": "hi" }),
            )
            .await;
        (r.status == 200).then_some(())
    })
    .await;
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let text = outbox["messages"][0]["body"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.ends_with("-- kept"), "{text}");
}
