//! The reach-out timelock (WhatsApp's error 463) on the sim: the send that
//! meets it fails with its end, the session shows it, later sends to people
//! the account has no chat with are held as scheduled sends (visible,
//! cancellable) and go out when it ends, sends to existing chats go on, and
//! a blast sets its first contacts aside instead of dead-lettering them.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

use super::blasts_support::{create, wait_job};
use super::scheduled::{outbox, wait_for_scheduled};

/// Someone the account has a chat with (they wrote first).
const FRIEND: &str = "4915100000001";
/// People the account never exchanged a message with.
const NEW_A: &str = "4915100000002";
const NEW_B: &str = "4915100000003";

async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.blasts.offline_retry = Duration::from_millis(50);
        c.blasts.idle_poll = Duration::from_millis(200);
    })
    .await
}

/// A logged-in sim session `s` with a chat with [`FRIEND`].
async fn session_with_a_friend(server: &TestServer) {
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/inbound",
            json!({ "from": FRIEND, "text": "hello, it's me" }),
        )
        .await
        .expect(200);
    eventually("the friend's message to be stored", || async {
        (!server.inbound_messages("s").await.is_empty()).then_some(())
    })
    .await;
}

async fn timelock(server: &TestServer, seconds: u64, stated: bool) {
    server
        .post(
            "/api/v1/sim/sessions/s/timelock",
            json!({ "seconds": seconds, "stated": stated }),
        )
        .await
        .expect(200);
}

async fn text(server: &TestServer, to: &str, body: &str) -> switchboard_tests::Resp {
    server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": to, "text": body }),
        )
        .await
}

fn sent_to(outbox: &[Value], phone: &str) -> usize {
    let jid = format!("{phone}@s.whatsapp.net");
    outbox.iter().filter(|m| m["to"] == jid.as_str()).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_contact_under_a_timelock_fails_with_its_end_and_later_ones_are_held_while_chats_go_on()
 {
    let server = server().await;
    session_with_a_friend(&server).await;
    let mut events = server.open_stream("session=s").await;
    timelock(&server, 600, true).await;

    let refused = text(&server, NEW_A, "hi, we have not met").await;
    assert_eq!(refused.status.as_u16(), 429, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], "reach_out_timelock");
    let retry = refused.body["error"]["retry_after"].as_u64().unwrap();
    assert!((590..=600).contains(&retry), "{}", refused.body);
    assert_eq!(
        refused.headers["retry-after"].to_str().unwrap(),
        retry.to_string()
    );
    let msg = refused.body["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("463") && msg.contains("as WhatsApp stated"),
        "{msg}"
    );

    let announced = events.find_event("s", "reach_out_timelock").await;
    assert_eq!(announced["data"]["active"], true, "{announced}");
    assert_eq!(announced["data"]["stated"], true, "{announced}");
    let status = server.get("/api/v1/sessions/s").await.expect(200);
    let lock = &status["reach_out_timelock"];
    assert_eq!(lock["stated"], true, "{status}");
    assert!(lock["retry_after_secs"].as_i64().unwrap() > 500, "{status}");

    // Someone else new: held, not sent, as a scheduled send for the end.
    let held = text(&server, NEW_B, "held for later").await.expect(202);
    assert_eq!(held["held"], "reach_out_timelock", "{held}");
    assert_eq!(held["send_at"], lock["until"], "{held}");
    let id = held["scheduled_id"].as_str().unwrap();
    let item = server
        .get(&format!("/api/v1/sessions/s/scheduled/{id}"))
        .await
        .expect(200);
    assert_eq!(item["status"], "scheduled");
    assert!(
        item["last_error"].as_str().unwrap().starts_with("held:"),
        "{item}"
    );

    // The friend's chat is not held.
    text(&server, FRIEND, "still talking").await.expect(200);
    let out = outbox(&server, "s").await;
    assert_eq!(
        (
            sent_to(&out, FRIEND),
            sent_to(&out, NEW_A),
            sent_to(&out, NEW_B)
        ),
        (1, 0, 0)
    );

    // A held send is cancellable like any scheduled one.
    let cancelled = server
        .delete(&format!("/api/v1/sessions/s/scheduled/{id}"))
        .await
        .expect(200);
    assert_eq!(cancelled["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_send_goes_out_when_the_timelock_ends() {
    let server = server().await;
    session_with_a_friend(&server).await;
    timelock(&server, 2, true).await;
    text(&server, NEW_A, "refused")
        .await
        .expect_error(429, "reach_out_timelock");
    let held = text(&server, NEW_B, "after the lock").await.expect(202);
    let id = held["scheduled_id"].as_str().unwrap();
    let item = wait_for_scheduled(&server, "s", id, "sent").await;
    assert_eq!(item["attempts"], 1, "the hold spent no attempt: {item}");
    let out = outbox(&server, "s").await;
    assert_eq!((sent_to(&out, NEW_A), sent_to(&out, NEW_B)), (0, 1));
    let status = server.get("/api/v1/sessions/s").await.expect(200);
    assert!(status["reach_out_timelock"].is_null(), "{status}");
    // And an immediate send to someone new goes straight out again.
    text(&server, NEW_A, "now we can").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_sets_its_first_contacts_aside_during_a_timelock_and_sends_them_after() {
    let server = server().await;
    session_with_a_friend(&server).await;
    timelock(&server, 3, true).await;
    let body = json!({
        "endpoint": "text",
        "body": { "to": FRIEND, "text": "news for everyone" },
        "recipients": [NEW_A, FRIEND, NEW_B],
        "delay_ms": 10,
        "max_attempts": 1,
    });
    let job = create(&server, "s", body).await;
    let recipients = format!("/api/v1/sessions/s/blasts/{job}/recipients");

    // The friend is sent at once; the two new contacts are held, pending,
    // with no attempt spent (one attempt each would dead-letter them).
    let during = eventually("the friend sent and both others held", || async {
        let list = server.get(&recipients).await.expect(200);
        let r = list["recipients"].as_array().unwrap().clone();
        let held = r
            .iter()
            .filter(|r| r["status"] == "pending" && r["held_until"].is_string())
            .count();
        (held == 2 && r.iter().any(|r| r["status"] == "sent")).then_some(r)
    })
    .await;
    assert!(
        during
            .iter()
            .filter(|r| r["status"] == "pending")
            .all(|r| r["attempts"] == 0),
        "{during:?}"
    );
    let running = server
        .get(&format!("/api/v1/sessions/s/blasts/{job}"))
        .await
        .expect(200);
    assert_eq!(running["status"], "running", "{running}");
    assert_eq!(running["dlq_count"], 0, "{running}");

    let done = wait_job(&server, "s", &job, "to complete", |j| {
        j["status"] == "completed"
    })
    .await;
    assert_eq!(
        (done["sent_count"].as_u64(), done["dlq_count"].as_u64()),
        (Some(3), Some(0))
    );
    let out = outbox(&server, "s").await;
    assert_eq!(
        (
            sent_to(&out, NEW_A),
            sent_to(&out, FRIEND),
            sent_to(&out, NEW_B)
        ),
        (1, 1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timelock_without_a_stated_end_holds_for_the_configured_time() {
    let server =
        TestServer::start_with(|c| c.reconnect.reach_out_hold = Duration::from_secs(120)).await;
    session_with_a_friend(&server).await;
    timelock(&server, 600, false).await;
    let msg = text(&server, NEW_A, "refused")
        .await
        .expect_error(429, "reach_out_timelock");
    assert!(msg.contains("--reach-out-hold-secs"), "{msg}");
    let status = server.get("/api/v1/sessions/s").await.expect(200);
    let lock = &status["reach_out_timelock"];
    assert_eq!(lock["stated"], false, "{status}");
    let left = lock["retry_after_secs"].as_i64().unwrap();
    assert!((110..=120).contains(&left), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_learns_of_a_timelock_when_it_logs_in() {
    let server = server().await;
    session_with_a_friend(&server).await;
    timelock(&server, 600, true).await;
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    let status = eventually("the lock to be known after login", || async {
        let s = server.get("/api/v1/sessions/s").await.expect(200);
        s["reach_out_timelock"].is_object().then_some(s)
    })
    .await;
    assert_eq!(status["reach_out_timelock"]["stated"], true);
    // So the first contact is held at once, without a refused send.
    text(&server, NEW_A, "held at once").await.expect(202);
    assert_eq!(sent_to(&outbox(&server, "s").await, NEW_A), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sim_timelock_of_no_time_or_over_a_year_is_refused() {
    let server = server().await;
    server.paired_session("s").await;
    for seconds in [0u64, 400 * 24 * 3600] {
        let msg = server
            .post(
                "/api/v1/sim/sessions/s/timelock",
                json!({ "seconds": seconds }),
            )
            .await
            .expect_error(400, "invalid_field");
        assert!(msg.contains("seconds"), "{msg}");
    }
    let lifted = server
        .delete("/api/v1/sim/sessions/s/timelock")
        .await
        .expect(200);
    assert_eq!(lifted["active"], false);
}
