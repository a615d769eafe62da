//! Event filters scoped to webhooks: a binding listing `webhooks` applies
//! only to deliveries to those webhooks, after the unscoped chain; every
//! other webhook receives the event as the unscoped chain left it.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::plugins::{KEYWORD_ROUTER, REDACTOR};
use switchboard_tests::receiver::{TestReceiver, add_webhook, inbound, wait_until_idle};

use crate::plugins_support::{bind, plugin, upload};

/// A receiver registered on session `s` for message events; returns it and
/// the webhook's id.
async fn hook(server: &TestServer) -> (TestReceiver, Value) {
    let rx = TestReceiver::start().await;
    let w = add_webhook(
        server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    (rx, w["id"].clone())
}

/// The delivered `data` of message `id` at the receiver.
async fn data_of(rx: &TestReceiver, id: &str) -> Value {
    rx.wait_for_match(&format!("message {id}"), |r| {
        r.json()["data"]["message_id"] == id
    })
    .await
    .json()["data"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_scoped_to_one_webhook_changes_only_what_that_webhook_receives() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let (scoped, scoped_id) = hook(&server).await;
    let (plain, _) = hook(&server).await;
    let p = upload(&server, REDACTOR).await;
    let b = bind(
        &server,
        &p,
        "event_filter",
        json!({ "webhooks": [scoped_id] }),
    )
    .await;
    assert_eq!(b["webhooks"], json!([scoped_id]), "{b}");

    let id = inbound(&server, "s", "call me on 4915112345678").await;
    let masked = data_of(&scoped, &id).await;
    let original = data_of(&plain, &id).await;
    assert_eq!(masked["text"], "call me on *************", "{masked}");
    assert!(!masked.to_string().contains("15550001111"), "{masked}");
    assert_eq!(original["text"], "call me on 4915112345678", "{original}");
    assert!(original.to_string().contains("15550001111"), "{original}");
    // Both got the one event; once nothing is pending, no second copy comes.
    wait_until_idle(&server, "s", &scoped.url()).await;
    wait_until_idle(&server, "s", &plain.url()).await;
    assert_eq!((scoped.count(), plain.count()), (1, 1), "one delivery each");
    let p = plugin(&server, &p).await;
    assert_eq!(
        p["counters"]["calls"], 1,
        "called for the scoped delivery only: {p}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_drop_skips_only_its_webhook_after_the_unscoped_chain_ran() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let (scoped, scoped_id) = hook(&server).await;
    let (plain, _) = hook(&server).await;
    // Unscoped: masks numbers for every audience, before any webhook.
    let redactor = upload(&server, REDACTOR).await;
    bind(&server, &redactor, "event_filter", json!({})).await;
    // Scoped: only orders reach the first webhook.
    let router = upload(&server, KEYWORD_ROUTER).await;
    bind(
        &server,
        &router,
        "event_filter",
        json!({ "webhooks": [scoped_id], "config": { "keywords": ["order"] } }),
    )
    .await;

    let chat = inbound(&server, "s", "hello, ring 4915112345678").await;
    let order = inbound(&server, "s", "order for 4915112345678").await;
    let at_scoped = data_of(&scoped, &order).await;
    assert_eq!(at_scoped["text"], "order for *************");
    assert_eq!(
        data_of(&plain, &chat).await["text"],
        "hello, ring *************"
    );
    assert_eq!(
        data_of(&plain, &order).await["text"],
        "order for *************"
    );
    // The order was published after the chat and has arrived at both: once
    // nothing is pending, a chat that got through would be here too.
    wait_until_idle(&server, "s", &scoped.url()).await;
    wait_until_idle(&server, "s", &plain.url()).await;
    assert_eq!(
        scoped.count(),
        1,
        "the chat message was dropped for it only"
    );
    assert_eq!(plain.count(), 2);
    let r = plugin(&server, &router).await;
    assert_eq!(r["counters"]["drops"], 1, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_scopes_are_refused_on_other_hooks_and_for_unknown_webhooks() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let (_rx, hook_id) = hook(&server).await;
    let footer = upload(&server, switchboard_tests::plugins::FOOTER).await;
    let router = upload(&server, KEYWORD_ROUTER).await;
    let cases = [
        (
            &footer,
            "message_transform",
            json!([hook_id]),
            "event filters only",
        ),
        (
            &router,
            "event_filter",
            json!(["no-such-webhook"]),
            "no-such-webhook",
        ),
        (&router, "event_filter", json!([]), "at least one"),
    ];
    for (p, hook, webhooks, why) in cases {
        let m = server
            .post(
                "/api/v1/plugins/bindings",
                json!({ "plugin_id": p["id"], "hook": hook, "webhooks": webhooks }),
            )
            .await
            .expect_error(400, "invalid_field");
        assert!(m.contains("webhooks") && m.contains(why), "{m}");
    }
    let b = server.get("/api/v1/plugins/bindings").await.expect(200);
    assert_eq!(b["count"], 0, "{b}");
}
