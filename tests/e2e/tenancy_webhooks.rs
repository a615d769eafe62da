//! Webhooks kept to their session: a registration that outlives its
//! session's delete is refused, failures of one session's deliveries to a
//! URL suspend (and fill the backlog of) only that session's deliveries to
//! it, diagnostics show only the session's own, registrations beside
//! enables are all kept, and a session's webhooks are bounded.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::runtime::webhooks::{NewWebhook, WebhookError};
use switchboard_tests::TestServer;
use switchboard_tests::receiver::{
    TestReceiver, add_webhook, diagnostic, dlq, inbound, verify_v2, wait_for_diagnostic,
};

fn hook(url: &str) -> NewWebhook {
    NewWebhook {
        url: url.to_owned(),
        events: None,
        secret: None,
        signature_scheme: Default::default(),
    }
}

async fn webhooks(server: &TestServer, session: &str) -> Vec<Value> {
    let body = server
        .get(&format!("/api/v1/sessions/{session}/webhooks"))
        .await
        .expect(200);
    body["webhooks"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_that_outlives_its_sessions_delete_leaves_no_webhook() {
    let mut server = TestServer::start().await;
    server.create_session("s").await;
    let rx = TestReceiver::start().await;
    // A registration reads the session as it checks it; its address check
    // then waits (on DNS, up to seconds) while the session is deleted and
    // created again under the same id, by someone else perhaps.
    let checked = server
        .services()
        .store
        .get_session("s")
        .unwrap()
        .unwrap()
        .incarnation;
    server.delete("/api/v1/sessions/s").await.expect(200);
    let gone = server
        .services()
        .webhooks
        .register("s", checked, hook(&rx.url()))
        .await;
    assert!(
        matches!(gone, Err(WebhookError::SessionGone(_))),
        "{gone:?}"
    );
    server.create_session("s").await;
    let late = server
        .services()
        .webhooks
        .register("s", checked, hook(&rx.url()))
        .await;
    assert!(
        matches!(late, Err(WebhookError::SessionGone(_))),
        "the new session of the id is not the one checked: {late:?}"
    );
    assert!(webhooks(&server, "s").await.is_empty());
    server.restart().await;
    assert!(
        webhooks(&server, "s").await.is_empty(),
        "nothing was stored either"
    );
}

/// A gateway whose deliveries are tried once each, so every failure is one
/// step towards the spec's suspension threshold (25, unchanged).
async fn one_attempt_each() -> TestServer {
    TestServer::start_with(|c| {
        c.webhooks.max_attempts = 1;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_sessions_failures_on_a_shared_url_neither_suspend_nor_show_on_this_session() {
    let server = one_attempt_each().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    // Tenant A's receiver checks A's signature; tenant B registers A's URL
    // with a secret of its own, so every delivery of B's is refused.
    let rx = TestReceiver::start().await;
    rx.require_signature("a-secret");
    let url = rx.url();
    add_webhook(
        &server,
        "a",
        json!({ "url": url, "events": ["message"], "secret": "a-secret" }),
    )
    .await;
    add_webhook(
        &server,
        "b",
        json!({ "url": url, "events": ["message"], "secret": "not-a-secret" }),
    )
    .await;
    for n in 0..25 {
        inbound(&server, "b", &format!("b {n}")).await;
    }
    let theirs = wait_for_diagnostic(&server, "b", &url, "suspended", |d| {
        d["circuit_open"] == true
    })
    .await;
    assert_eq!(theirs["consecutive_failures"], 25, "{theirs}");

    let mine = diagnostic(&server, "a", &url).await;
    assert_eq!(mine["circuit_open"], false, "{mine}");
    assert_eq!(mine["consecutive_failures"], 0, "{mine}");
    assert_eq!(
        mine["last_error"],
        Value::Null,
        "B's error is not A's: {mine}"
    );
    let id = inbound(&server, "a", "for a").await;
    let got = rx
        .wait_for_match("A's message", |r| {
            r.json()["data"]["message_id"] == id.as_str()
        })
        .await;
    assert!(verify_v2("a-secret", &got), "signed with A's secret");
    assert!(dlq(&server, "a").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_sessions_backlog_on_a_shared_url_never_dead_letters_this_sessions_deliveries() {
    let server = TestServer::start_with(|c| {
        c.webhooks.backlog_limit = 3;
        // A failed delivery waits here for its retry: it stays pending.
        c.webhooks.retry_delays = vec![Duration::from_secs(600)];
    })
    .await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let rx = TestReceiver::start().await;
    rx.set(503.into());
    let url = rx.url();
    for session in ["a", "b"] {
        add_webhook(
            &server,
            session,
            json!({ "url": url, "events": ["message"] }),
        )
        .await;
    }
    inbound(&server, "a", "a's, oldest of all").await;
    rx.wait_for(1).await;
    for n in 0..10 {
        inbound(&server, "b", &format!("b {n}")).await;
    }
    // Past the limit, seven of the eleven pending for the URL go to a DLQ.
    let evicted = switchboard_tests::eventually("seven backlog_full entries", || async {
        let (a, b) = (dlq(&server, "a").await, dlq(&server, "b").await);
        (a.len() + b.len() >= 7).then_some((a, b))
    })
    .await;
    assert!(
        evicted.0.is_empty(),
        "B's backlog dead-lettered A's delivery: {:?}",
        evicted.0
    );
    assert!(evicted.1.iter().all(|e| e["reason"] == "backlog_full"));
    let mine = diagnostic(&server, "a", &url).await;
    assert_eq!(mine["pending"], 1, "only A's own: {mine}");
    wait_for_diagnostic(&server, "b", &url, "B's own three pending", |d| {
        d["pending"] == 3
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_made_beside_enables_are_all_kept() {
    let mut server = TestServer::start_with(|c| c.webhooks.max_per_session = 100).await;
    server.create_session("s").await;
    let rx = TestReceiver::start().await;
    let first = add_webhook(&server, "s", json!({ "url": rx.url() })).await;
    let enable = format!(
        "/api/v1/sessions/s/webhooks/{}/enable",
        first["id"].as_str().unwrap()
    );
    let server_ref = &server;
    let registers = (0..30).map(|_| async {
        add_webhook(server_ref, "s", json!({ "url": rx.url() })).await;
    });
    let enables = (0..30).map(|_| async {
        server_ref.post_empty(&enable).await.expect(200);
    });
    futures_util::future::join(
        futures_util::future::join_all(registers),
        futures_util::future::join_all(enables),
    )
    .await;
    assert_eq!(
        webhooks(&server, "s").await.len(),
        31,
        "none lost from memory"
    );
    server.restart().await;
    assert_eq!(
        webhooks(&server, "s").await.len(),
        31,
        "none lost from the store"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_past_its_webhook_limit_is_refused_naming_the_limit() {
    let server = TestServer::start_with(|c| c.webhooks.max_per_session = 2).await;
    server.create_session("s").await;
    server.create_session("t").await;
    let rx = TestReceiver::start().await;
    for _ in 0..2 {
        add_webhook(&server, "s", json!({ "url": rx.url() })).await;
    }
    let message = server
        .post("/api/v1/sessions/s/webhooks", json!({ "url": rx.url() }))
        .await
        .expect_error(409, "webhook_limit_reached");
    assert!(message.contains("MAX_WEBHOOKS_PER_SESSION"), "{message}");
    assert!(message.contains('2'), "{message}");
    assert_eq!(webhooks(&server, "s").await.len(), 2);
    // Another session's count is its own.
    add_webhook(&server, "t", json!({ "url": rx.url() })).await;
    // Deleting one makes room again.
    let id = webhooks(&server, "s").await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .delete(&format!("/api/v1/sessions/s/webhooks/{id}"))
        .await
        .expect(200);
    add_webhook(&server, "s", json!({ "url": rx.url() })).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delivery_state_exists_only_for_webhooks_and_deliveries_that_exist() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut receivers = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..5 {
        let rx = TestReceiver::start().await;
        let hook = add_webhook(
            &server,
            "s",
            json!({ "url": rx.url(), "events": ["message"] }),
        )
        .await;
        ids.push(hook["id"].as_str().unwrap().to_owned());
        receivers.push(rx);
    }
    inbound(&server, "s", "to all five").await;
    for rx in &receivers {
        rx.wait_for(1).await;
    }
    let webhooks = &server.services().webhooks;
    // Delivered: no lane is left; each registered URL keeps its circuit.
    switchboard_tests::eventually("the lanes retired", || async {
        (webhooks.held() == (0, 5)).then_some(())
    })
    .await;
    for id in &ids {
        server
            .delete(&format!("/api/v1/sessions/s/webhooks/{id}"))
            .await
            .expect(200);
    }
    assert_eq!(webhooks.held(), (0, 0), "nothing is kept for URLs gone");
    // A session's delete takes what its deliveries held too.
    let rx = TestReceiver::start().await;
    rx.set(503.into());
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    inbound(&server, "s", "pending").await;
    rx.wait_for(1).await;
    server.delete("/api/v1/sessions/s").await.expect(200);
    switchboard_tests::eventually("nothing held", || async {
        (webhooks.held() == (0, 0)).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_delivery_holds_no_secret_and_one_written_with_a_secret_still_goes_signed() {
    let mut server = TestServer::start_with(|c| {
        c.webhooks.retry_delays = vec![Duration::from_secs(600)];
    })
    .await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(503.into());
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"], "secret": "the-secret" }),
    )
    .await;
    let id = inbound(&server, "s", "pending").await;
    rx.wait_for(1).await;
    server
        .restart_after(|dir| async move {
            let store = switchboard::store::Store::open(&dir).unwrap();
            let rows = store.outbox_all().unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].delivery.secret, None, "no copy of the secret");
            // A row as the previous release wrote it: the secret inside.
            let mut old = rows[0].delivery.clone();
            old.delivery_id = "written-before-the-upgrade".into();
            old.secret = Some("the-old-copy".into());
            old.attempts = 0;
            let (tx, rx_done) = std::sync::mpsc::channel();
            store.record_event(
                switchboard::store::EventWrite {
                    seq: store.event_log_bounds().unwrap().last_seq + 1,
                    deliveries: vec![switchboard::store::NewDelivery {
                        delivery: old,
                        payload: bytes::Bytes::from_static(b"{\"old\":true}"),
                    }],
                    backlog_limit: 100,
                    dlq_capacity: 100,
                    ..Default::default()
                },
                move |_, r| tx.send(r.map(drop)).unwrap(),
            );
            rx_done.recv().unwrap().unwrap();
        })
        .await;
    rx.set(switchboard_tests::receiver::Respond::Ok);
    let old = rx
        .wait_for_match("the old row", |r| {
            r.delivery_id() == "written-before-the-upgrade"
        })
        .await;
    assert!(verify_v2("the-old-copy", &old), "signed with its own copy");
    // The pending one waits for its retry: replaying is not possible, so
    // its signature is checked on the next event instead.
    let next = inbound(&server, "s", "after").await;
    let fresh = rx
        .wait_for_match("the next event", |r| {
            r.json()["data"]["message_id"] == next.as_str()
        })
        .await;
    assert!(
        verify_v2("the-secret", &fresh),
        "signed with the webhook's secret"
    );
    assert_ne!(id, next);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_letter_keeps_the_secret_of_its_failure_after_its_webhook_is_deleted() {
    let server = one_attempt_each().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(500.into());
    let hook = add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"], "secret": "kept-for-replay" }),
    )
    .await;
    inbound(&server, "s", "fails").await;
    let entries = switchboard_tests::receiver::wait_for_dlq(&server, "s", 1).await;
    server
        .delete(&format!(
            "/api/v1/sessions/s/webhooks/{}",
            hook["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    rx.set(switchboard_tests::receiver::Respond::Ok);
    let before = rx.count();
    server
        .post_empty(&format!(
            "/api/v1/sessions/s/webhooks/dlq/{}/replay",
            entries[0]["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    let got = rx.wait_for(before + 1).await;
    assert!(verify_v2("kept-for-replay", got.last().unwrap()));
}
