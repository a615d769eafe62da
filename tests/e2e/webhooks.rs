//! The webhook registry: register, list, delete, re-enable; request
//! validation; the status diagnostics; what a session delete removes.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::receiver::{
    Respond, TestReceiver, add_webhook, diagnostics, dlq, inbound, is_uuid, message_hook, ms,
    wait_for_dlq, wait_until_idle,
};

const HOOKS: &str = "/api/v1/sessions/s/webhooks";

fn find<'a>(list: &'a Value, id: &Value) -> &'a Value {
    list["webhooks"]
        .as_array()
        .unwrap_or_else(|| panic!("no webhooks array: {list}"))
        .iter()
        .find(|h| &h["id"] == id)
        .unwrap_or_else(|| panic!("webhook {id} is not listed: {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_webhook_answers_201_defaults_to_all_events_and_is_listed() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let plain = server
        .post(HOOKS, json!({ "url": "http://127.0.0.1:9/plain" }))
        .await
        .expect(201);
    assert!(is_uuid(plain["id"].as_str().unwrap()), "{plain}");
    assert_eq!(plain["url"], "http://127.0.0.1:9/plain");
    assert_eq!(plain["events"], json!(["all"]), "events default to all");
    assert_eq!(plain["enabled"], true);

    let signed = server
        .post(
            HOOKS,
            json!({
                "url": "https://127.0.0.1:9/signed",
                "events": ["message", "connected"],
                "secret": "s3cret"
            }),
        )
        .await
        .expect(201);
    assert_eq!(signed["events"], json!(["message", "connected"]));
    assert_ne!(signed["id"], plain["id"]);

    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(list["count"], 2, "{list}");
    let p = find(&list, &plain["id"]);
    assert_eq!(p["url"], "http://127.0.0.1:9/plain");
    assert_eq!(p["events"], json!(["all"]));
    assert_eq!(p["secret"], Value::Null, "an unset secret lists as null");
    assert_eq!(p["enabled"], true);
    let s = find(&list, &signed["id"]);
    assert_eq!(s["secret"], "s3cret");
    assert_eq!(s["events"], json!(["message", "connected"]));
    assert_eq!(s["enabled"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_refuses_bad_urls_unknown_events_and_empty_event_lists() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    // A missing `url` is the whole body not fitting: like every endpoint that
    // deserializes its body (pair's `{}` is `invalid_body`), either code is
    // fine as long as the message names the field.
    let missing = server.post(HOOKS, json!({})).await;
    assert_eq!(missing.status.as_u16(), 400, "{}", missing.body);
    let code = missing.body["error"]["code"].as_str().unwrap_or_default();
    assert!(
        ["invalid_body", "invalid_field"].contains(&code),
        "{}",
        missing.body
    );
    let message = missing.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("url"), "{message}");

    let cases = [
        (json!({ "url": 5 }), "url"),
        (json!({ "url": "ftp://127.0.0.1:9/x" }), "url"),
        (json!({ "url": "not a url" }), "url"),
        (json!({ "url": "http://" }), "url"),
        (
            json!({ "url": "http://127.0.0.1:9/x", "events": ["hologram"] }),
            "events",
        ),
        (
            json!({ "url": "http://127.0.0.1:9/x", "events": ["message", "hologram"] }),
            "events",
        ),
        (
            json!({ "url": "http://127.0.0.1:9/x", "events": [] }),
            "events",
        ),
    ];
    for (body, field) in cases {
        let message = server
            .post(HOOKS, body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(
            message.contains(field),
            "the message for {body} should name `{field}`: {message}"
        );
    }
    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(
        list["count"], 0,
        "a refused request changes nothing: {list}"
    );

    server
        .post(
            "/api/v1/sessions/nobody/webhooks",
            json!({ "url": "http://127.0.0.1:9/x" }),
        )
        .await
        .expect_error(404, "session_not_found");
    server
        .get("/api/v1/sessions/nobody/webhooks")
        .await
        .expect_error(404, "session_not_found");
    server
        .get("/api/v1/sessions/nobody/webhooks/dlq")
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn internal_urls_are_refused_unless_private_targets_are_allowed() {
    let server = TestServer::start_with(|c| c.webhooks.allow_private = false).await;
    server.paired_session("s").await;
    for url in [
        "http://127.0.0.1:9/x",
        "http://[::1]:9/x",
        "http://localhost:9/x",
        "http://10.1.2.3/x",
        "http://192.168.0.10/x",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let message = server
            .post(HOOKS, json!({ "url": url }))
            .await
            .expect_error(400, "invalid_field");
        assert!(message.contains("url"), "{url}: {message}");
    }
    assert_eq!(server.get(HOOKS).await.expect(200)["count"], 0);
    // A public address literal is fine (nothing is sent: no event happens).
    add_webhook(&server, "s", json!({ "url": "https://1.1.1.1/hook" })).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_routes_need_the_bearer_token() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let resp = server
        .http()
        .get(format!("{}{HOOKS}", server.base()))
        .send()
        .await
        .expect("request sent");
    TestServer::read(resp)
        .await
        .expect_error(401, "unauthorized");
    let resp = server
        .http()
        .post(format!("{}{HOOKS}", server.base()))
        .json(&json!({ "url": "http://127.0.0.1:9/x" }))
        .send()
        .await
        .expect("request sent");
    TestServer::read(resp)
        .await
        .expect_error(401, "unauthorized");
    assert_eq!(server.get(HOOKS).await.expect(200)["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_webhook_gets_no_more_events_and_deleting_it_again_is_a_404() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let gone = TestReceiver::start().await;
    let kept = TestReceiver::start().await;
    let hook = add_webhook(&server, "s", json!({ "url": gone.url() })).await;
    add_webhook(&server, "s", json!({ "url": kept.url() })).await;
    let id = hook["id"].as_str().unwrap();

    let deleted = server.delete(&format!("{HOOKS}/{id}")).await.expect(200);
    assert_eq!(deleted["success"], true, "{deleted}");
    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(list["count"], 1);
    assert_eq!(list["webhooks"][0]["url"], kept.url());
    server
        .delete(&format!("{HOOKS}/{id}"))
        .await
        .expect_error(404, "webhook_not_found");
    server
        .post_empty(&format!("{HOOKS}/{id}/enable"))
        .await
        .expect_error(404, "webhook_not_found");

    inbound(&server, "s", "after the delete").await;
    kept.wait_for(1).await;
    // The same URL registered again gets only what comes after: once a
    // later event has reached it and nothing is pending for the URL, a
    // delivery the deleted webhook still had would have arrived too.
    add_webhook(
        &server,
        "s",
        json!({ "url": gone.url(), "events": ["message"] }),
    )
    .await;
    inbound(&server, "s", "marker").await;
    gone.wait_for(1).await;
    wait_until_idle(&server, "s", &gone.url()).await;
    let texts: Vec<Value> = gone
        .requests()
        .iter()
        .map(|r| r.json()["data"]["text"].clone())
        .collect();
    assert_eq!(texts, [json!("marker")], "a deleted webhook is not called");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_reports_one_diagnostics_entry_per_distinct_webhook_url() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    assert_eq!(
        diagnostics(&server, "s").await,
        Vec::<Value>::new(),
        "no webhooks, no diagnostics"
    );
    let a = TestReceiver::start().await;
    let b = TestReceiver::start().await;
    add_webhook(&server, "s", json!({ "url": a.url() })).await;
    add_webhook(
        &server,
        "s",
        json!({ "url": a.url(), "events": ["message"] }),
    )
    .await;
    add_webhook(&server, "s", json!({ "url": b.url(), "secret": "x" })).await;

    let diags = diagnostics(&server, "s").await;
    assert_eq!(diags.len(), 2, "one entry per distinct url: {diags:?}");
    let mut urls: Vec<&str> = diags.iter().map(|d| d["url"].as_str().unwrap()).collect();
    urls.sort();
    let mut want = [a.url(), b.url()];
    want.sort();
    assert_eq!(urls, want);
    for d in &diags {
        assert_eq!(d["circuit_open"], false, "{d}");
        assert_eq!(d["consecutive_failures"], 0, "{d}");
        assert_eq!(d["retry_in_seconds"], Value::Null, "{d}");
        assert_eq!(d["last_error"], Value::Null, "{d}");
        assert_eq!(d["skipped_while_suspended"], 0, "{d}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabling_a_healthy_webhook_succeeds_and_changes_nothing() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    let hook = add_webhook(&server, "s", json!({ "url": rx.url() })).await;
    let id = hook["id"].as_str().unwrap();
    let enabled = server
        .post_empty(&format!("{HOOKS}/{id}/enable"))
        .await
        .expect(200);
    assert_eq!(enabled["success"], true, "{enabled}");
    assert!(
        !enabled["message"].as_str().unwrap_or_default().is_empty(),
        "{enabled}"
    );
    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(list["webhooks"][0]["enabled"], true);
    inbound(&server, "s", "still delivered").await;
    assert_eq!(rx.wait_for(1).await[0].event(), "message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_an_unknown_dead_letter_entry_is_a_404() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post_empty(&format!(
            "{HOOKS}/dlq/00000000-0000-4000-8000-000000000000/replay"
        ))
        .await
        .expect_error(404, "dlq_entry_not_found");
    server
        .post_empty(
            "/api/v1/sessions/nobody/webhooks/dlq/00000000-0000-4000-8000-000000000000/replay",
        )
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_session_removes_its_webhooks_and_dead_letters() {
    let server = TestServer::start_with(|c| c.webhooks.max_attempts = 1).await;
    server.paired_session("s").await;
    let old = TestReceiver::start().await;
    old.set(Respond::Status(500));
    add_webhook(
        &server,
        "s",
        json!({ "url": old.url(), "events": ["message"], "secret": "old" }),
    )
    .await;
    inbound(&server, "s", "dead-lettered").await;
    wait_for_dlq(&server, "s", 1).await;

    server.delete("/api/v1/sessions/s").await.expect(200);
    server.paired_session("s").await;
    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(list["count"], 0, "webhooks went with the session: {list}");
    assert!(dlq(&server, "s").await.is_empty(), "so did the DLQ");
    assert!(diagnostics(&server, "s").await.is_empty());

    let fresh = message_hook(&server, "s").await;
    inbound(&server, "s", "new life").await;
    fresh.wait_for(1).await;
    // The old URL registered in the new session gets only what comes
    // after: once a later event has reached it and nothing is pending for
    // it, `new life` would be there had the old webhook survived.
    old.set(Respond::Ok);
    add_webhook(
        &server,
        "s",
        json!({ "url": old.url(), "events": ["message"] }),
    )
    .await;
    inbound(&server, "s", "marker").await;
    old.wait_for(2).await;
    wait_until_idle(&server, "s", &old.url()).await;
    let texts: Vec<Value> = old
        .requests()
        .iter()
        .map(|r| r.json()["data"]["text"].clone())
        .collect();
    assert_eq!(
        texts,
        [json!("dead-lettered"), json!("marker")],
        "the old webhook is gone for good"
    );
    assert!(dlq(&server, "s").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_still_pending_when_the_session_is_deleted_leaves_no_dead_letter_behind() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![ms(400)];
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(500));
    inbound(&server, "s", "in flight").await;
    rx.wait_for(1).await;

    // The first attempt failed; its retry is waiting. Delete and re-create.
    server.delete("/api/v1/sessions/s").await.expect(200);
    server.paired_session("s").await;
    // The same URL in the new session, failing the same way: its event is
    // dead-lettered after its own retry, which is due after the old one, so
    // by then the old retry, had it survived, would have been dead-lettered.
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    inbound(&server, "s", "marker").await;
    wait_for_dlq(&server, "s", 1).await;
    wait_until_idle(&server, "s", &rx.url()).await;
    let entries = dlq(&server, "s").await;
    assert_eq!(
        entries.len(),
        1,
        "the old session's delivery must not surface in the new session's DLQ: {entries:?}"
    );
    let payload: Value = serde_json::from_str(entries[0]["payload"].as_str().unwrap()).unwrap();
    assert_eq!(payload["data"]["text"], "marker", "{payload}");
}
