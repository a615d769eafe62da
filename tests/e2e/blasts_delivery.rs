//! The blast worker as the sim network sees it: order and pacing, one job at
//! a time, failures, retries and the dead-letter state, cancel, and a delayed
//! start.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::domain::time::parse_iso8601;
use switchboard_tests::receiver::{TestReceiver, add_webhook, unix_now};
use switchboard_tests::{TestServer, eventually};

use crate::blasts_support::{
    create, faults, jid, job, outbox, outbox_to, phones, recipients, server, text_blast, wait_job,
    wait_status,
};

fn jids(list: &[String]) -> Vec<String> {
    list.iter().map(|p| jid(p)).collect()
}

/// Waits until the outbox holds `n` messages; returns when that was seen.
async fn wait_outbox(server: &TestServer, session: &str, n: usize) -> Instant {
    eventually(&format!("{n} messages in the outbox"), || async {
        (outbox(server, session).await.len() >= n).then(Instant::now)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_go_out_once_each_in_request_order_at_least_delay_ms_apart() {
    let server = server().await;
    server.paired_session("s").await;
    let list = phones(5);
    let start = Instant::now();
    let id = create(&server, "s", text_blast(&list, json!({ "delay_ms": 150 }))).await;
    let last_seen = wait_outbox(&server, "s", 5).await;
    assert!(
        last_seen - start >= Duration::from_millis(4 * 150),
        "five sends 150 ms apart took only {:?}",
        last_seen - start
    );
    let done = wait_status(&server, "s", &id, "completed").await;
    assert_eq!(outbox_to(&server, "s").await, jids(&list));
    assert_eq!(done["sent_count"], 5);
    assert_eq!(done["failed_count"], 0);
    assert!(done["started_at"].is_string() && done["finished_at"].is_string());
    let sent = outbox(&server, "s").await;
    assert_eq!(sent[0]["body"]["text"], "hello from the blast");
    for (r, m) in recipients(&server, "s", &id, None).await.iter().zip(&sent) {
        assert_eq!(r["status"], "sent");
        assert_eq!(r["attempts"], 1);
        assert_eq!(
            r["message_id"], m["message_id"],
            "the recipient keeps the message id"
        );
    }
    let history = server.get("/api/v1/sessions/s/messages").await.expect(200);
    assert_eq!(
        history["count"], 5,
        "blast sends are recorded like any send"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jitter_only_adds_to_the_delay() {
    let server = server().await;
    server.paired_session("s").await;
    let start = Instant::now();
    let options = json!({ "delay_ms": 100, "jitter_ms": 100 });
    let id = create(&server, "s", text_blast(&phones(4), options)).await;
    let last_seen = wait_outbox(&server, "s", 4).await;
    assert!(last_seen - start >= Duration::from_millis(3 * 100));
    assert_eq!(job(&server, "s", &id).await["options"]["jitter_ms"], 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_job_at_a_time_the_older_job_finishes_before_the_next_starts() {
    let server = server().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let first = create(
        &server,
        "a",
        text_blast(&phones(4), json!({ "delay_ms": 100 })),
    )
    .await;
    let second = create(
        &server,
        "b",
        text_blast(&phones(4), json!({ "delay_ms": 100 })),
    )
    .await;
    eventually("the first job to complete", || async {
        // Read the second job before the first: if the first is still unfinished
        // after, it was unfinished when the second was read.
        let b = job(&server, "b", &second).await;
        let a = job(&server, "a", &first).await;
        if a["status"] == "completed" {
            return Some(());
        }
        assert_eq!(
            b["sent_count"], 0,
            "the second job sent while the first ran: {b}"
        );
        assert_eq!(b["status"], "pending");
        None
    })
    .await;
    wait_status(&server, "b", &second, "completed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_recipient_is_retried_on_later_passes_then_dead_lettered() {
    let server = server().await;
    server.paired_session("s").await;
    let list = phones(3);
    faults(&server, "s", json!({ "fail_sends_to": [jid(&list[1])] })).await;
    let id = create(&server, "s", text_blast(&list, json!({ "delay_ms": 10 }))).await;
    let done = wait_status(&server, "s", &id, "completed_with_failures").await;
    assert_eq!(done["sent_count"], 2);
    assert_eq!(done["failed_count"], 3, "every failed attempt counts");
    assert_eq!(done["dlq_count"], 1);
    assert_eq!(
        outbox_to(&server, "s").await,
        [jid(&list[0]), jid(&list[2])]
    );
    let dlq = recipients(&server, "s", &id, Some("dlq")).await;
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0]["recipient"], jid(&list[1]));
    assert_eq!(dlq[0]["attempts"], 3);
    assert!(
        dlq[0]["last_error"].as_str().unwrap().contains("simulated"),
        "{}",
        dlq[0]
    );

    // Retry: the dead letter goes back to pending and the job reopens.
    server
        .delete("/api/v1/sim/sessions/s/faults")
        .await
        .expect(200);
    let reopened = server
        .post_empty(&format!("/api/v1/sessions/s/blasts/{id}/retry"))
        .await
        .expect(200);
    assert_eq!(
        reopened["status"], "pending",
        "a retried job reopens as pending: {reopened}"
    );
    assert_eq!(reopened["finished_at"], Value::Null);
    assert_eq!(reopened["dlq_count"], 0);
    let done = wait_status(&server, "s", &id, "completed").await;
    assert_eq!(
        (done["sent_count"].as_u64(), done["failed_count"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(done["dlq_count"], 0);
    assert_eq!(
        outbox_to(&server, "s").await,
        jids(&[list[0].clone(), list[2].clone(), list[1].clone()])
    );
    let r = &recipients(&server, "s", &id, Some("sent")).await;
    assert_eq!(r.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_that_clears_is_sent_on_the_next_pass_after_the_others() {
    let server = server().await;
    server.paired_session("s").await;
    let list = phones(3);
    faults(&server, "s", json!({ "fail_sends_to": [jid(&list[0])] })).await;
    let id = create(&server, "s", text_blast(&list, json!({ "delay_ms": 200 }))).await;
    wait_job(&server, "s", &id, "to fail once", |j| {
        j["failed_count"] == 1
    })
    .await;
    server
        .delete("/api/v1/sim/sessions/s/faults")
        .await
        .expect(200);
    let done = wait_status(&server, "s", &id, "completed").await;
    assert_eq!(
        (done["failed_count"].as_u64(), done["dlq_count"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        outbox_to(&server, "s").await,
        jids(&[list[1].clone(), list[2].clone(), list[0].clone()])
    );
    let first = &recipients(&server, "s", &id, None).await[0];
    assert_eq!(
        (first["status"].as_str(), first["attempts"].as_u64()),
        (Some("sent"), Some(2))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_run_stops_the_worker_and_leaves_the_rest_pending_for_good() {
    let server = server().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    let hook = json!({ "url": rx.url(), "events": ["blast_completed"] });
    add_webhook(&server, "s", hook).await;
    let id = create(
        &server,
        "s",
        text_blast(&phones(10), json!({ "delay_ms": 150 })),
    )
    .await;
    wait_job(&server, "s", &id, "to send twice", |j| {
        j["sent_count"].as_u64() >= Some(2)
    })
    .await;
    let cancelled = server
        .post_empty(&format!("/api/v1/sessions/s/blasts/{id}/cancel"))
        .await
        .expect(200);
    assert_eq!(cancelled["status"], "cancelled");
    // The one worker takes the oldest job that can progress, one send at a
    // time: once a job created after the cancel has completed, a send of the
    // cancelled job that was in flight has landed, and the cancelled job,
    // were it still running, would have sent all ten first.
    server.paired_session("after").await;
    let after = create(
        &server,
        "after",
        text_blast(&phones(1), json!({ "delay_ms": 0 })),
    )
    .await;
    wait_status(&server, "after", &after, "completed").await;
    let settled = outbox(&server, "s").await.len();
    assert!(settled < 10, "the cancel stopped the run");
    let j = job(&server, "s", &id).await;
    assert_eq!(j["status"], "cancelled");
    assert_eq!(j["sent_count"], settled);
    let pending = recipients(&server, "s", &id, Some("pending")).await;
    assert_eq!(pending.len(), 10 - settled);
    assert!(pending.iter().all(|r| r["attempts"] == 0));
    let event = rx.wait_for(1).await.remove(0).json();
    assert_eq!(event["data"]["job_id"], id.as_str());
    assert_eq!(event["data"]["status"], "cancelled", "{event}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_at_holds_the_job_pending_until_its_time() {
    let server = server().await;
    server.paired_session("s").await;
    let at = unix_now() + 2;
    let send_at = time_iso(at);
    let id = create(
        &server,
        "s",
        text_blast(&phones(2), json!({ "delay_ms": 0, "send_at": send_at })),
    )
    .await;
    // What the gateway recorded shows whether it waited, however slowly
    // this test got to look: the job started, and each send went out, no
    // earlier than `send_at`.
    let done = wait_status(&server, "s", &id, "completed").await;
    assert_eq!(done["send_at"], send_at.as_str());
    let started = parse_iso8601(done["started_at"].as_str().unwrap()).unwrap();
    assert!(started >= at, "started before send_at: {done}");
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 2);
    for m in sent {
        assert!(
            m["timestamp"].as_i64().unwrap() >= at,
            "sent before send_at: {m}"
        );
    }
}

/// Unix seconds as ISO-8601 UTC.
fn time_iso(unix: i64) -> String {
    switchboard::domain::time::iso8601(unix)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_ends_a_long_pause_so_the_next_job_does_not_wait_it_out() {
    let server = server().await;
    server.paired_session("slow").await;
    server.paired_session("next").await;
    let slow = create(
        &server,
        "slow",
        text_blast(&phones(3), json!({ "delay_ms": 600_000 })),
    )
    .await;
    wait_job(&server, "slow", &slow, "to send once", |j| {
        j["sent_count"] == 1
    })
    .await;
    server
        .post_empty(&format!("/api/v1/sessions/slow/blasts/{slow}/cancel"))
        .await
        .expect(200);
    let next = create(
        &server,
        "next",
        text_blast(&phones(2), json!({ "delay_ms": 0 })),
    )
    .await;
    wait_status(&server, "next", &next, "completed").await;
    assert_eq!(outbox(&server, "slow").await.len(), 1);
}
