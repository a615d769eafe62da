//! The durable webhook outbox seen from outside: a URL's backlog is bounded
//! (the oldest deliveries go to the DLQ as `backlog_full`, counted, never
//! dropped silently), shown in the status diagnostics and `/metrics`, and
//! pending deliveries resume after a restart with their delivery ids and
//! the attempts they have left.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::receiver::{Respond, TestReceiver, add_webhook, dlq, inbound, wait_for_dlq};
use switchboard_tests::{TOKEN, TestServer, eventually};

/// The `/metrics` text.
async fn metrics(server: &TestServer) -> String {
    server
        .http()
        .get(format!("{}/metrics", server.base()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("scrape sent")
        .text()
        .await
        .expect("a text body")
}

/// The value of the first sample line that starts with `head`.
fn sample(text: &str, head: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(head))
        .and_then(|rest| rest.trim().parse().ok())
}

fn text_of(entry: &Value) -> String {
    let envelope: Value = serde_json::from_str(entry["payload"].as_str().unwrap()).unwrap();
    envelope["data"]["text"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_past_its_backlog_limit_dead_letters_its_oldest_deliveries_as_backlog_full() {
    let server = TestServer::start_with(|c| {
        c.webhooks.backlog_limit = 3;
        c.webhooks.max_attempts = 5;
        c.webhooks.retry_delays = vec![Duration::from_secs(60)];
    })
    .await;
    server.paired_session("s").await;
    let failing = TestReceiver::start().await;
    failing.set(Respond::Status(500));
    add_webhook(
        &server,
        "s",
        json!({ "url": failing.url(), "events": ["message"] }),
    )
    .await;
    // Subscribed to something that never happens here: owed nothing.
    let idle = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": idle.url(), "events": ["presence"] }),
    )
    .await;

    for n in 0..5 {
        inbound(&server, "s", &format!("m{n}")).await;
    }
    let entries = wait_for_dlq(&server, "s", 2).await;
    assert_eq!(entries.len(), 2, "{entries:?}");
    for e in &entries {
        assert_eq!(e["reason"], "backlog_full", "{e}");
        assert!(
            e["last_error"].as_str().unwrap().contains("backlog_full"),
            "{e}"
        );
        assert_eq!(e["webhook_url"], failing.url());
    }
    let mut evicted: Vec<String> = entries.iter().map(text_of).collect();
    evicted.sort();
    assert_eq!(evicted, ["m0", "m1"], "the oldest go");

    let status = server.get("/api/v1/sessions/s/status").await.expect(200);
    let hooks = status["diagnostics"]["webhooks"]
        .as_array()
        .unwrap()
        .clone();
    let of = |url: &str| hooks.iter().find(|h| h["url"] == url).unwrap().clone();
    assert_eq!(of(&failing.url())["pending"], 3, "{status}");
    assert!(
        of(&failing.url())["oldest_pending_seconds"]
            .as_f64()
            .unwrap()
            >= 0.0
    );
    assert_eq!(of(&idle.url())["pending"], 0, "{status}");
    assert!(of(&idle.url())["oldest_pending_seconds"].is_null());

    let text = metrics(&server).await;
    let pending = format!(
        "switchboard_webhook_outbox_pending{{url=\"{}\"}}",
        failing.url()
    );
    assert_eq!(sample(&text, &pending), Some(3.0), "{text}");
    assert_eq!(
        sample(
            &text,
            "switchboard_webhook_deliveries_total{outcome=\"backlog_full\"}"
        ),
        Some(2.0),
        "{text}"
    );
    assert!(
        !text.contains(&format!("url=\"{}\"", idle.url())),
        "events nobody subscribes to are not stored for delivery"
    );
    assert!(idle.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_waiting_for_its_retry_resumes_after_a_restart_with_its_delivery_id() {
    let mut server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 3;
        c.webhooks.retry_delays = vec![Duration::from_secs(2)];
    })
    .await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(Respond::Status(500));
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    inbound(&server, "s", "owed").await;
    let first = rx.wait_for(1).await.remove(0);

    // A clean stop dead-letters nothing: the delivery stays owed.
    server
        .restart_after(|_| async { rx.set(Respond::Ok) })
        .await;
    let again = rx.wait_for(2).await.remove(1);
    assert_eq!(
        again.delivery_id(),
        first.delivery_id(),
        "the same delivery id"
    );
    assert_eq!(again.json()["data"]["text"], "owed");
    assert!(dlq(&server, "s").await.is_empty(), "nothing dead-lettered");
    let resumed = eventually("the resumed delivery counted", || async {
        sample(
            &metrics(&server).await,
            "switchboard_webhook_outbox_resumed_total",
        )
        .filter(|n| *n >= 1.0)
    })
    .await;
    assert_eq!(resumed, 1.0);
    // Delivered: nothing is pending any more, and nothing repeats.
    eventually("the backlog to empty", || async {
        let status = server.get("/api/v1/sessions/s/status").await.expect(200);
        (status["diagnostics"]["webhooks"][0]["pending"] == 0).then_some(())
    })
    .await;
    assert_eq!(rx.count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_with_first_attempts_still_queued_dead_letters_nothing_and_delivers_all_after_restart()
 {
    const EVENTS: usize = 6;
    const IN_FLIGHT: usize = 2;
    let mut server = TestServer::start_with(|c| {
        c.webhooks.concurrency_per_url = IN_FLIGHT;
        // The receiver never answers before the stop; no attempt may time
        // out and be retried meanwhile.
        c.webhooks.timeout = Duration::from_secs(300);
    })
    .await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(Respond::Hang);
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    for n in 0..EVENTS {
        inbound(&server, "s", &format!("queued {n}")).await;
    }
    // Every delivery is recorded; the lane has its two attempts in flight
    // and the rest wait for their first attempt.
    eventually("every delivery pending", || async {
        let status = server.get("/api/v1/sessions/s/status").await.expect(200);
        (status["diagnostics"]["webhooks"][0]["pending"] == EVENTS).then_some(())
    })
    .await;
    let attempted = rx.wait_for(IN_FLIGHT).await;
    assert_eq!(
        rx.count(),
        IN_FLIGHT,
        "first attempts are still queued at the stop"
    );

    // The receiver works again only once the gateway is down.
    server
        .restart_after(|_| async { rx.set(Respond::Ok) })
        .await;
    let all = rx.wait_for(IN_FLIGHT + EVENTS).await;
    eventually("the backlog to empty", || async {
        let status = server.get("/api/v1/sessions/s/status").await.expect(200);
        (status["diagnostics"]["webhooks"][0]["pending"] == 0).then_some(())
    })
    .await;
    assert!(dlq(&server, "s").await.is_empty(), "nothing dead-lettered");

    // Each event went under one delivery id across the stop: the attempts
    // cut off by it repeat with theirs, the queued ones keep theirs.
    let mut ids: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for r in rx.requests() {
        let text = r.json()["data"]["text"].as_str().unwrap().to_owned();
        ids.entry(text)
            .or_default()
            .insert(r.delivery_id().to_owned());
    }
    let want: Vec<String> = (0..EVENTS).map(|n| format!("queued {n}")).collect();
    assert_eq!(
        ids.keys().cloned().collect::<Vec<_>>(),
        want,
        "every event delivered"
    );
    for (text, of) in &ids {
        assert_eq!(of.len(), 1, "{text} went under one delivery id: {of:?}");
    }
    for first in &attempted {
        let again = all[IN_FLIGHT..]
            .iter()
            .filter(|r| r.delivery_id() == first.delivery_id())
            .count();
        assert_eq!(again, 1, "an attempt cut off by the stop goes once more");
    }
    assert_eq!(
        rx.count(),
        IN_FLIGHT + EVENTS,
        "after the restart each event went once"
    );
    assert_eq!(
        sample(
            &metrics(&server).await,
            "switchboard_webhook_outbox_resumed_total"
        ),
        Some(EVENTS as f64),
        "every delivery resumed at start"
    );
}
