//! Send pacing of ordinary sends, each knob set through the configuration:
//! a send inside a session's gap (or past its per-minute cap) is refused
//! with `429 send_paced` and `Retry-After` in `refuse` mode, and waits its
//! turn in `queue` mode; message actions are paced alike; sessions do not
//! pace each other; blasts and scheduled sends are not paced; and nothing is
//! paced by default.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::Config;
use switchboard::domain::time::{iso8601, unix_now};
use switchboard::messages::PacingMode;
use switchboard_tests::{Resp, TestServer, eventually};

/// Sends a text from session `from` to `to`.
async fn text(server: &TestServer, from: &str, to: &Value, text: &str) -> Resp {
    server
        .post(
            &format!("/api/v1/sessions/{from}/messages/text"),
            json!({ "to": to, "text": text }),
        )
        .await
}

/// What reached the network from a session: its sim outbox's size.
async fn sent(server: &TestServer, session: &str) -> u64 {
    server
        .get(&format!("/api/v1/sim/sessions/{session}/outbox"))
        .await
        .expect(200)["count"]
        .as_u64()
        .expect("a count")
}

/// The `Retry-After` of an answer, in whole seconds.
#[track_caller]
fn retry_after(resp: &Resp) -> u64 {
    let value = resp
        .headers
        .get("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After; body: {}", resp.body));
    value
        .to_str()
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("Retry-After is not whole seconds: {value:?}"))
}

/// Sends refused at once, with this gap between two of one session.
fn refusing_with_gap(gap: Duration) -> impl FnOnce(&mut Config) {
    move |c| {
        c.send_pacing.min_gap = gap;
        c.send_pacing.mode = PacingMode::Refuse;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_inside_the_gap_is_refused_with_429_and_retry_after_and_nothing_reaches_the_network()
{
    let server = TestServer::start_with(refusing_with_gap(Duration::from_secs(60))).await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let first = text(&server, "bob", &alice["jid"], "first")
        .await
        .expect(200);

    let refused = text(&server, "bob", &alice["jid"], "second").await;
    let wait = retry_after(&refused);
    assert!((1..=60).contains(&wait), "Retry-After {wait}");
    let message = refused.expect_error(429, "send_paced");
    assert!(message.contains("`bob`"), "{message}");
    assert!(message.contains(&format!("{wait} s")), "{message}");

    // An action that goes out as a message is paced as a send is.
    let revoke = server
        .post(
            "/api/v1/sessions/bob/messages/revoke",
            json!({ "to": alice["jid"], "message_id": first["message_id"] }),
        )
        .await;
    assert!((1..=60).contains(&retry_after(&revoke)));
    revoke.expect_error(429, "send_paced");

    assert_eq!(sent(&server, "bob").await, 1);
    let bobs = server
        .get("/api/v1/sessions/bob/messages")
        .await
        .expect(200);
    assert_eq!(bobs["count"], 1, "a refused send leaves no record: {bobs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_send_waits_out_the_gap_and_both_sends_arrive() {
    let gap = Duration::from_millis(1000);
    let server = TestServer::start_with(|c| c.send_pacing.min_gap = gap).await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;

    let started = Instant::now();
    let (first, second) = tokio::join!(
        text(&server, "bob", &alice["jid"], "one"),
        text(&server, "bob", &alice["jid"], "two"),
    );
    let elapsed = started.elapsed();
    first.expect(200);
    second.expect(200);
    // The later of the two went out at least the gap after the earlier;
    // both were asked for after `started`. Only a lower bound: a slow
    // machine may take longer, never shorter.
    assert!(elapsed >= gap, "both answered after {elapsed:?}");

    assert_eq!(sent(&server, "bob").await, 2);
    eventually("both texts at alice", || async {
        let texts: Vec<Value> = server
            .inbound_messages("alice")
            .await
            .into_iter()
            .map(|m| m["body"]["text"].clone())
            .collect();
        (texts.contains(&json!("one")) && texts.contains(&json!("two"))).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_minute_cap_refuses_the_send_past_it() {
    let server = TestServer::start_with(|c| {
        c.send_pacing.per_minute = 2;
        c.send_pacing.mode = PacingMode::Refuse;
    })
    .await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    for n in ["one", "two"] {
        text(&server, "bob", &alice["jid"], n).await.expect(200);
    }
    let refused = text(&server, "bob", &alice["jid"], "three").await;
    assert!((1..=60).contains(&retry_after(&refused)));
    refused.expect_error(429, "send_paced");
    assert_eq!(sent(&server, "bob").await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_past_the_cap_goes_again_once_the_window_moves_on() {
    let server = TestServer::start_with(|c| {
        c.send_pacing.per_minute = 2;
        c.send_pacing.mode = PacingMode::Refuse;
        // The window is a minute in production; shorter here so the test
        // sees it slide.
        c.send_pacing.window = Duration::from_millis(500);
    })
    .await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    for n in ["one", "two"] {
        text(&server, "bob", &alice["jid"], n).await.expect(200);
    }
    text(&server, "bob", &alice["jid"], "early")
        .await
        .expect_error(429, "send_paced");
    // Refused sends take no slot, so asking again and again does not hold
    // the session back.
    eventually("a send admitted again", || async {
        let resp = text(&server, "bob", &alice["jid"], "three").await;
        match resp.status.as_u16() {
            200 => Some(()),
            _ => {
                resp.expect_error(429, "send_paced");
                None
            }
        }
    })
    .await;
    assert_eq!(sent(&server, "bob").await, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_send_that_would_wait_longer_than_the_maximum_is_refused() {
    let server = TestServer::start_with(|c| {
        c.send_pacing.per_minute = 1;
        c.send_pacing.max_wait = Duration::from_secs(30);
    })
    .await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    text(&server, "bob", &alice["jid"], "one").await.expect(200);
    // The next slot is a minute after the first: past the 30 s it may wait.
    let refused = text(&server, "bob", &alice["jid"], "two").await;
    let wait = retry_after(&refused);
    assert!((30..=60).contains(&wait), "Retry-After {wait}");
    refused.expect_error(429, "send_paced");
    assert_eq!(sent(&server, "bob").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_do_not_pace_each_other() {
    let server = TestServer::start_with(refusing_with_gap(Duration::from_secs(60))).await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    text(&server, "bob", &alice["jid"], "from bob")
        .await
        .expect(200);
    text(&server, "alice", &bob["jid"], "from alice")
        .await
        .expect(200);
    // Each is paced on its own.
    text(&server, "bob", &alice["jid"], "again")
        .await
        .expect_error(429, "send_paced");
    text(&server, "alice", &bob["jid"], "again")
        .await
        .expect_error(429, "send_paced");
    assert_eq!(sent(&server, "alice").await, 1);
    assert_eq!(sent(&server, "bob").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blasts_and_scheduled_sends_are_not_paced() {
    let server = TestServer::start_with(refusing_with_gap(Duration::from_secs(60))).await;
    server.paired_session("bob").await;
    text(&server, "bob", &json!("4930000001"), "ordinary")
        .await
        .expect(200);
    // A send for later is accepted, not refused, and goes out when due.
    server
        .post(
            "/api/v1/sessions/bob/messages/text",
            json!({ "to": "4930000002", "text": "later", "send_at": iso8601(unix_now() + 2) }),
        )
        .await
        .expect(202);
    server
        .post(
            "/api/v1/sessions/bob/blast",
            json!({
                "endpoint": "text",
                "recipients": ["4930000003", "4930000004"],
                "body": { "to": "{{recipient}}", "text": "from the blast" },
                "delay_ms": 0,
            }),
        )
        .await
        .expect(201);
    eventually("the blast and the scheduled send out", || async {
        (sent(&server, "bob").await == 4).then_some(())
    })
    .await;
    // Ordinary sends are still paced.
    text(&server, "bob", &json!("4930000001"), "again")
        .await
        .expect_error(429, "send_paced");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_are_not_paced_by_default() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let sent = text(&server, "bob", &alice["jid"], &format!("text {n}"))
            .await
            .expect(200);
        ids.push(sent["message_id"].clone());
    }
    server
        .post(
            "/api/v1/sessions/bob/messages/revoke",
            json!({ "to": alice["jid"], "message_id": ids[0] }),
        )
        .await
        .expect(200);
    assert_eq!(sent(&server, "bob").await, 6);
}
