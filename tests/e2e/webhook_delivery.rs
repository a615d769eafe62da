//! Delivery of events to webhooks: the envelope and headers, retries and
//! their pauses, timeouts, 4xx rules, isolation of a hanging target, and
//! subscription filters.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::receiver::{
    Received, Respond, TestReceiver, add_webhook, diagnostic, inbound, message_hook, ms, unix_now,
    wait_for_diagnostic, wait_for_dlq, wait_until_idle,
};

const SIGNATURE_HEADERS: [&str; 3] = [
    "x-webhook-timestamp",
    "x-webhook-signature",
    "x-webhook-signature-version",
];

fn entry_for<'a>(entries: &'a [Value], url: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["webhook_url"] == url)
        .unwrap_or_else(|| panic!("no DLQ entry for {url}: {entries:?}"))
}

fn same_delivery(requests: &[Received]) {
    let first = requests[0].delivery_id();
    assert!(!first.is_empty(), "a delivery id header");
    for r in requests {
        assert_eq!(r.delivery_id(), first, "a retry keeps the delivery id");
        assert_eq!(r.body, requests[0].body, "a retry sends the same body");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_is_posted_as_the_envelope_with_event_and_delivery_id_headers() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    add_webhook(&server, "s", json!({ "url": rx.url() })).await;

    let before = unix_now();
    let message_id = inbound(&server, "s", "hi").await;
    let got = rx.wait_for(1).await.remove(0);
    assert_eq!(got.method, "POST");
    assert_eq!(got.path, "/hook");
    let content_type = got.header("content-type").unwrap_or_default();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert_eq!(got.event(), "message");
    assert!(
        switchboard_tests::receiver::is_uuid(got.delivery_id()),
        "delivery id: {:?}",
        got.delivery_id()
    );
    for h in SIGNATURE_HEADERS {
        assert_eq!(got.header(h), None, "no secret, no {h}");
    }
    let envelope = got.json();
    assert_eq!(envelope["session_id"], "s");
    assert_eq!(envelope["event"], "message");
    let ts = envelope["timestamp"].as_i64().expect("integer timestamp");
    assert!(ts >= before - 1 && ts <= unix_now() + 1, "timestamp {ts}");
    assert_eq!(envelope["offline"], false, "a live arrival");
    let data = &envelope["data"];
    assert_eq!(data["text"], "hi");
    assert_eq!(data["message_id"], message_id.as_str());
    assert_eq!(data["from"], "15550001111@s.whatsapp.net");
    assert_eq!(data["message_type"], "text");
    for key in envelope.as_object().unwrap().keys() {
        assert!(
            ["session_id", "event", "timestamp", "data", "offline"].contains(&key.as_str()),
            "unexpected envelope field {key}: {envelope}"
        );
    }

    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    let disconnected = rx
        .wait_for_match("a disconnected event", |r| r.event() == "disconnected")
        .await;
    let envelope = disconnected.json();
    assert_eq!(envelope["event"], "disconnected");
    assert_eq!(envelope["session_id"], "s");
    assert!(
        envelope.get("offline").is_none(),
        "offline is for messages only: {envelope}"
    );
    assert_ne!(
        disconnected.delivery_id(),
        got.delivery_id(),
        "each event has its own delivery id"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_delivery_is_retried_then_dead_lettered() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 3;
        c.webhooks.retry_delays = vec![ms(100), ms(200)];
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(500));

    let before = unix_now();
    inbound(&server, "s", "doomed").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    let got = rx.requests();
    assert_eq!(got.len(), 3, "max_attempts in all, then no more");
    same_delivery(&got);
    assert!(got[1].at - got[0].at >= ms(100), "first pause");
    assert!(got[2].at - got[1].at >= ms(200), "second pause");

    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    assert!(
        switchboard_tests::receiver::is_uuid(e["id"].as_str().unwrap()),
        "{e}"
    );
    assert_eq!(e["session_id"], "s");
    assert_eq!(e["webhook_url"], rx.url());
    assert_eq!(e["event"], "message");
    assert_eq!(e["attempts"], 3);
    let last_error = e["last_error"].as_str().expect("a reason");
    assert!(last_error.contains("500"), "{last_error}");
    let failed_at = e["failed_at"].as_i64().expect("integer seconds");
    assert!(failed_at >= before - 1 && failed_at <= unix_now() + 1);
    let payload = e["payload"].as_str().expect("the envelope as a string");
    assert_eq!(payload.as_bytes(), got[0].body.as_slice(), "verbatim");

    let d = diagnostic(&server, "s", &rx.url()).await;
    assert_eq!(d["consecutive_failures"], 3, "{d}");
    assert_eq!(d["circuit_open"], false, "below the threshold: {d}");
    assert!(
        d["last_error"].as_str().unwrap_or_default().contains("500"),
        "{d}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_succeeds_on_a_retry_is_not_dead_lettered() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 3;
        c.webhooks.retry_delays = vec![ms(50)];
    })
    .await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.push_answers([500, 503]);
    add_webhook(&server, "s", json!({ "url": rx.url() })).await;

    inbound(&server, "s", "third time lucky").await;
    let got = rx.wait_for(3).await;
    same_delivery(&got);
    wait_for_diagnostic(&server, "s", &rx.url(), "the success counted", |d| {
        d["consecutive_failures"] == 0
    })
    .await;
    wait_until_idle(&server, "s", &rx.url()).await;
    assert_eq!(rx.count(), 3, "no attempt after the success");
    assert!(
        switchboard_tests::receiver::dlq(&server, "s")
            .await
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_never_answers_times_out_and_is_dead_lettered_as_timed_out() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![ms(100)];
        c.webhooks.timeout = ms(300);
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Hang);

    inbound(&server, "s", "into the void").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    let got = rx.requests();
    assert_eq!(got.len(), 2);
    same_delivery(&got);
    assert!(
        got[1].at - got[0].at >= ms(300),
        "the retry waits for the timeout"
    );
    let e = &entries[0];
    assert_eq!(e["attempts"], 2);
    let last_error = e["last_error"].as_str().unwrap_or_default().to_lowercase();
    assert!(last_error.contains("timed out"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_retry_on_4xx_off_a_404_is_dead_lettered_at_once_but_408_and_429_are_retried() {
    let server = TestServer::start_with(|c| {
        c.webhooks.retry_on_4xx = false;
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![ms(50)];
    })
    .await;
    server.paired_session("s").await;
    let mut receivers = Vec::new();
    for status in [404u16, 408, 429] {
        let rx = TestReceiver::start().await;
        rx.set(Respond::Status(status));
        add_webhook(
            &server,
            "s",
            json!({ "url": rx.url(), "events": ["message"] }),
        )
        .await;
        receivers.push((status, rx));
    }

    inbound(&server, "s", "4xx").await;
    let entries = wait_for_dlq(&server, "s", 3).await;
    for (status, rx) in &receivers {
        let e = entry_for(&entries, &rx.url());
        let want = if *status == 404 { 1 } else { 2 };
        assert_eq!(e["attempts"], want, "{status}: {e}");
        assert_eq!(rx.count(), want, "{status}: requests");
        let last_error = e["last_error"].as_str().unwrap_or_default();
        assert!(last_error.contains(&status.to_string()), "{status}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_retry_on_4xx_on_a_404_is_retried() {
    let server = TestServer::start_with(|c| {
        c.webhooks.retry_on_4xx = true;
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![ms(50)];
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(404));

    inbound(&server, "s", "404").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    assert_eq!(entries[0]["attempts"], 2);
    assert!(
        entries[0]["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("404")
    );
    same_delivery(&rx.requests());
    assert_eq!(rx.count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_webhook_does_not_delay_a_healthy_one_of_the_same_session() {
    // The timeout outlasts the test's patience: if the healthy webhook waited
    // for the hanging one, it would never see its events in time.
    let server =
        TestServer::start_with(|c| c.webhooks.timeout = std::time::Duration::from_secs(120)).await;
    server.paired_session("s").await;
    let hanging = TestReceiver::start().await;
    hanging.set(Respond::Hang);
    let healthy = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": hanging.url(), "events": ["message"] }),
    )
    .await;
    add_webhook(
        &server,
        "s",
        json!({ "url": healthy.url(), "events": ["message"] }),
    )
    .await;

    inbound(&server, "s", "one").await;
    let stuck = hanging.wait_for(1).await.remove(0);
    inbound(&server, "s", "two").await;
    let got = healthy.wait_for(2).await;
    assert!(
        got[1].at > stuck.at,
        "the healthy webhook got the second event after the first was stuck"
    );
    assert!(
        hanging.unanswered() >= 1,
        "…and while the hanging request was still open"
    );
    let texts: Vec<Value> = got
        .iter()
        .map(|r| r.json()["data"]["text"].clone())
        .collect();
    assert_eq!(texts.len(), 2);
    assert!(
        texts.contains(&json!("one")) && texts.contains(&json!("two")),
        "{texts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_gets_only_the_events_it_subscribed_to() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let all = TestReceiver::start().await;
    let messages = TestReceiver::start().await;
    let connection = TestReceiver::start().await;
    add_webhook(&server, "s", json!({ "url": all.url(), "events": ["all"] })).await;
    add_webhook(
        &server,
        "s",
        json!({ "url": messages.url(), "events": ["message"] }),
    )
    .await;
    add_webhook(
        &server,
        "s",
        json!({ "url": connection.url(), "events": ["connected", "disconnected"] }),
    )
    .await;

    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    server.wait_for_status("s", "disconnected").await;
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    inbound(&server, "s", "hello").await;

    let events = |rx: &TestReceiver| {
        let mut names: Vec<String> = rx
            .requests()
            .iter()
            .map(|r| {
                assert_eq!(r.json()["event"], r.event(), "header matches the envelope");
                r.event().to_owned()
            })
            .collect();
        names.sort();
        names
    };
    all.wait_for(3).await;
    messages.wait_for(1).await;
    connection.wait_for(2).await;
    // `message` was the last event: once nothing is pending for any of the
    // three, what each got is all it gets.
    for rx in [&all, &messages, &connection] {
        wait_until_idle(&server, "s", &rx.url()).await;
    }
    assert_eq!(events(&all), ["connected", "disconnected", "message"]);
    assert_eq!(events(&messages), ["message"]);
    assert_eq!(events(&connection), ["connected", "disconnected"]);
}
