//! Per-URL suspension after repeated failures: skipped events, the single
//! probe, doubling suspensions with a cap, re-enable, and replay while open.
//!
//! Every test uses a threshold of 3 and one attempt per event, so three failed
//! events open the circuit.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::Config;
use switchboard_tests::TestServer;
use switchboard_tests::receiver::{
    Respond, TestReceiver, add_webhook, diagnostic, dlq, inbound, message_hook, ms,
    wait_for_diagnostic, wait_for_dlq,
};

const THRESHOLD: usize = 3;

fn suspending(c: &mut Config, base: Duration, max: Duration) {
    c.webhooks.max_attempts = 1;
    c.webhooks.suspend_threshold = THRESHOLD as u32;
    c.webhooks.suspend_base = base;
    c.webhooks.suspend_max = max;
}

fn retry_in(d: &Value) -> f64 {
    d["retry_in_seconds"]
        .as_f64()
        .unwrap_or_else(|| panic!("retry_in_seconds is a number while suspended: {d}"))
}

fn failures(d: &Value) -> u64 {
    d["consecutive_failures"].as_u64().unwrap_or_default()
}

/// Sends failing events one at a time until the URL's circuit opens; returns
/// its diagnostics then.
async fn trip(server: &TestServer, rx: &TestReceiver) -> Value {
    for i in 1..=THRESHOLD {
        inbound(server, "s", &format!("failure {i}")).await;
        rx.wait_for(i).await;
        if i < THRESHOLD {
            wait_for_diagnostic(server, "s", &rx.url(), "the failure counted", |d| {
                failures(d) >= i as u64
            })
            .await;
        }
    }
    wait_for_diagnostic(server, "s", &rx.url(), "the circuit open", |d| {
        d["circuit_open"] == true
    })
    .await
}

/// Sleeps until the suspension reported in `d` is surely over. A probe goes
/// only with an event posted after the suspension ends, and the gateway
/// reports nothing that ends it, so this waits for the configured time to
/// pass (reported as `retry_in_seconds`; reading it late only waits longer).
async fn outwait(d: &Value) {
    tokio::time::sleep(Duration::from_secs_f64(retry_in(d)) + ms(200)).await;
}

fn text(r: &switchboard_tests::receiver::Received) -> String {
    r.json()["data"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_is_suspended_after_consecutive_failures_and_skipped_events_are_counted() {
    let server = TestServer::start_with(|c| {
        suspending(c, Duration::from_secs(60), Duration::from_secs(600))
    })
    .await;
    server.paired_session("s").await;
    let failing = TestReceiver::start().await;
    failing.set(Respond::Status(500));
    let healthy = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": failing.url(), "events": ["message"] }),
    )
    .await;
    add_webhook(
        &server,
        "s",
        json!({ "url": healthy.url(), "events": ["message"] }),
    )
    .await;

    let d = trip(&server, &failing).await;
    assert_eq!(d["consecutive_failures"], THRESHOLD, "{d}");
    let r = retry_in(&d);
    assert!(r > 0.0 && r <= 60.0, "{d}");
    assert!(
        d["last_error"].as_str().unwrap_or_default().contains("500"),
        "{d}"
    );
    assert_eq!(d["skipped_while_suspended"], 0, "{d}");
    let hooks = server.get("/api/v1/sessions/s/webhooks").await.expect(200);
    for h in hooks["webhooks"].as_array().unwrap() {
        assert_eq!(h["enabled"], true, "suspension never disables: {h}");
    }
    wait_for_dlq(&server, "s", THRESHOLD).await;

    inbound(&server, "s", "skipped 1").await;
    inbound(&server, "s", "skipped 2").await;
    healthy.wait_for(THRESHOLD + 2).await;
    wait_for_diagnostic(&server, "s", &failing.url(), "two skipped events", |d| {
        d["skipped_while_suspended"] == 2
    })
    .await;
    // Counted as skipped is the gateway's decision not to attempt them, and
    // the healthy URL got both: the failing URL never will.
    assert_eq!(
        failing.count(),
        THRESHOLD,
        "nothing is attempted while suspended"
    );
    assert_eq!(
        dlq(&server, "s").await.len(),
        THRESHOLD,
        "skipped events are not queued"
    );
    let d = diagnostic(&server, "s", &failing.url()).await;
    assert_eq!(d["circuit_open"], true, "{d}");
    let h = diagnostic(&server, "s", &healthy.url()).await;
    assert_eq!(h["circuit_open"], false, "suspension is per URL: {h}");
    assert_eq!(h["consecutive_failures"], 0, "{h}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_probe_after_the_suspension_resumes_normal_delivery() {
    let server = TestServer::start_with(|c| suspending(c, ms(300), Duration::from_secs(60))).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(500));
    let d = trip(&server, &rx).await;

    rx.set(Respond::Ok);
    outwait(&d).await;
    inbound(&server, "s", "probe").await;
    let probe = rx.wait_for(THRESHOLD + 1).await.remove(THRESHOLD);
    assert_eq!(text(&probe), "probe");
    let d = wait_for_diagnostic(&server, "s", &rx.url(), "delivering again", |d| {
        d["circuit_open"] == false && d["consecutive_failures"] == 0
    })
    .await;
    assert_eq!(d["skipped_while_suspended"], 0, "{d}");

    inbound(&server, "s", "after 1").await;
    inbound(&server, "s", "after 2").await;
    let got = rx.wait_for(THRESHOLD + 3).await;
    let mut texts: Vec<String> = got[THRESHOLD + 1..].iter().map(text).collect();
    texts.sort();
    assert_eq!(texts, ["after 1", "after 2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_one_probe_is_in_flight_when_the_suspension_elapses() {
    let server = TestServer::start_with(|c| suspending(c, ms(300), Duration::from_secs(60))).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(500));
    let d = trip(&server, &rx).await;

    rx.set(Respond::Ok);
    rx.push_answers([Respond::Slow(ms(1500), 200)]);
    outwait(&d).await;
    inbound(&server, "s", "probe").await;
    let probe = rx.wait_for(THRESHOLD + 1).await.remove(THRESHOLD);
    assert_eq!(text(&probe), "probe");
    inbound(&server, "s", "while probing").await;
    wait_for_diagnostic(&server, "s", &rx.url(), "the probe succeeded", |d| {
        d["circuit_open"] == false && d["consecutive_failures"] == 0
    })
    .await;
    inbound(&server, "s", "after the probe").await;
    rx.wait_for_match("the event after the probe", |r| {
        text(r) == "after the probe"
    })
    .await;

    for r in &rx.requests()[THRESHOLD + 1..] {
        assert_eq!(
            r.unanswered_before,
            0,
            "`{}` was sent while the probe was still out",
            text(r)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_probe_suspends_again_for_double_the_time_capped_at_the_maximum() {
    // base 2 s, cap 3.5 s: the first failed probe would double to 4 s, the
    // second to 8 s; both are capped at 3.5 s. The suspension began after
    // the probe arrived and before the diagnostics were read, so
    // `retry_in_seconds` plus the time since the probe arrived is at least
    // its whole length, whenever the test gets to read it.
    let server = TestServer::start_with(|c| suspending(c, Duration::from_secs(2), ms(3500))).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    rx.set(Respond::Status(500));
    let d = trip(&server, &rx).await;
    let first = retry_in(&d);
    assert!(
        first > 0.0 && first <= 2.0,
        "the first suspension is the base: {d}"
    );

    let mut d = d;
    for probe in 1..=2u64 {
        outwait(&d).await;
        inbound(&server, "s", &format!("probe {probe}")).await;
        let arrived =
            rx.wait_for(THRESHOLD + probe as usize).await[THRESHOLD + probe as usize - 1].at;
        d = wait_for_diagnostic(&server, "s", &rx.url(), "the failed probe counted", |d| {
            failures(d) > THRESHOLD as u64 + probe - 1
        })
        .await;
        let since_probe = arrived.elapsed().as_secs_f64();
        assert_eq!(
            d["circuit_open"], true,
            "a failed probe suspends again: {d}"
        );
        let r = retry_in(&d);
        assert!(r <= 3.5, "probe {probe}: capped at the maximum: {d}");
        assert!(
            r + since_probe >= 3.5,
            "probe {probe}: suspended for the cap, longer than the base \
             ({since_probe:.3} s since the probe): {d}"
        );
        assert_eq!(
            rx.count(),
            THRESHOLD + probe as usize,
            "exactly one probe per elapsed suspension"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabling_a_webhook_clears_the_suspension_of_its_url_at_once() {
    let server = TestServer::start_with(|c| {
        suspending(c, Duration::from_secs(60), Duration::from_secs(600))
    })
    .await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(Respond::Status(500));
    let hook = add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    trip(&server, &rx).await;

    let answer = server
        .post_empty(&format!(
            "/api/v1/sessions/s/webhooks/{}/enable",
            hook["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    assert_eq!(answer["success"], true, "{answer}");
    assert!(
        !answer["message"].as_str().unwrap_or_default().is_empty(),
        "{answer}"
    );
    let d = diagnostic(&server, "s", &rx.url()).await;
    assert_eq!(d["circuit_open"], false, "cleared at once: {d}");

    rx.set(Respond::Ok);
    inbound(&server, "s", "welcome back").await;
    let got = rx.wait_for(THRESHOLD + 1).await;
    assert_eq!(text(&got[THRESHOLD]), "welcome back");
    wait_for_diagnostic(&server, "s", &rx.url(), "delivering", |d| {
        d["circuit_open"] == false && d["consecutive_failures"] == 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_while_the_circuit_is_open_is_refused_and_the_entry_stays() {
    let server = TestServer::start_with(|c| {
        suspending(c, Duration::from_secs(60), Duration::from_secs(600))
    })
    .await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    rx.set(Respond::Status(500));
    let hook = add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    trip(&server, &rx).await;
    let entries = wait_for_dlq(&server, "s", THRESHOLD).await;
    let entry = &entries[0];
    let replay = format!(
        "/api/v1/sessions/s/webhooks/dlq/{}/replay",
        entry["id"].as_str().unwrap()
    );

    server
        .post_empty(&replay)
        .await
        .expect_error(400, "circuit_open");
    let still = dlq(&server, "s").await;
    assert_eq!(still.len(), THRESHOLD);
    assert!(
        still.iter().any(|e| e["id"] == entry["id"]),
        "the entry stays"
    );
    rx.set(Respond::Ok);
    server
        .post_empty(&format!(
            "/api/v1/sessions/s/webhooks/{}/enable",
            hook["id"].as_str().unwrap()
        ))
        .await
        .expect(200);
    server.post_empty(&replay).await.expect(200);
    let left = dlq(&server, "s").await;
    assert_eq!(left.len(), THRESHOLD - 1);
    assert!(left.iter().all(|e| e["id"] != entry["id"]));
    // One URL's deliveries go out in order: once an event sent after the
    // accepted replay has arrived, a refused replay that had gone out anyway
    // would have arrived too.
    inbound(&server, "s", "after the replay").await;
    rx.wait_for_match("the event after the replay", |r| {
        text(r) == "after the replay"
    })
    .await;
    let got = rx.requests();
    assert_eq!(
        got.len(),
        THRESHOLD + 2,
        "the refused replay sent nothing, the accepted one sent once"
    );
    assert_eq!(
        got[THRESHOLD].body,
        entry["payload"].as_str().unwrap().as_bytes()
    );
}
