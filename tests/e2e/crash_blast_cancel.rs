//! A cancelled blast across SIGKILL: the real binary killed while the send to
//! one recipient of a job that was cancelled meanwhile is held inside the
//! sim's network call, then restarted on the same data directory.
//!
//! What the docs promise (docs/api.md, "Restarts and crashes: sent once"
//! and "Cancel"): a cancel stops the job before its next send; a
//! crash-interrupted recipient of a cancelled job is resolved like any other
//! (`sent` if the network has its message id, else left `pending`); a
//! cancelled job stays cancelled and its unprocessed recipients are never
//! picked up again. The sim's outbox is the record of what the network got.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::crash::{Api, Intervals, Rig, until};

use crate::BINARY;

const SESSION: &str = "canceller";

/// The pause after each send: long enough that the test sets the sim's
/// latency fault after the first send and before the second begins.
const PACING: Duration = Duration::from_secs(3);

/// How long the sim holds each send once the fault is set: far longer than
/// the test takes to cancel and kill, so the kill finds the send still held.
const HELD: Duration = Duration::from_secs(120);

fn phones(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("4960{i:07}")).collect()
}

/// Creates a text blast to `recipients` paced `delay` apart; returns the job id.
async fn create(api: &Api, recipients: &[String], delay: Duration, text: &str) -> String {
    let body = json!({
        "endpoint": "text",
        "body": { "to": "4960000000", "text": text },
        "recipients": recipients,
        "delay_ms": delay.as_millis() as u64,
        "jitter_ms": 0,
    });
    let created = api
        .expect(
            Method::POST,
            &format!("/api/v1/sessions/{SESSION}/blast"),
            Some(body),
            201,
        )
        .await;
    created["job_id"].as_str().expect("a job id").to_owned()
}

async fn job(api: &Api, id: &str) -> Value {
    api.get(&format!("/api/v1/sessions/{SESSION}/blasts/{id}"))
        .await
}

async fn recipients(api: &Api, id: &str) -> Vec<Value> {
    let body = api
        .get(&format!(
            "/api/v1/sessions/{SESSION}/blasts/{id}/recipients?limit=1000"
        ))
        .await;
    body["recipients"].as_array().cloned().expect("recipients")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_blast_killed_while_a_send_is_held_stays_cancelled_and_sends_nobody_else() {
    let mut rig = Rig::start(BINARY, Intervals::Fast).await;
    rig.api().pair(SESSION).await;
    let list = phones(5);
    let id = create(rig.api(), &list, PACING, "cancelled blast").await;

    // The first send goes at once and reaches the network; the worker then
    // pauses before the second. Every later send is held in the sim.
    until("the sim to show the first send", || async {
        rig.api().outbox_len(SESSION).await == Some(1)
    })
    .await;
    rig.api()
        .faults(
            SESSION,
            json!({ "send_latency_ms": HELD.as_millis() as u64 }),
        )
        .await;
    until("the second recipient's send to be under way", || async {
        recipients(rig.api(), &id).await[1]["status"] == "sending"
    })
    .await;
    let held = recipients(rig.api(), &id).await[1].clone();
    let held_id = held["message_id"]
        .as_str()
        .expect("a message id chosen before the attempt")
        .to_owned();

    let cancelled = rig
        .api()
        .expect(
            Method::POST,
            &format!("/api/v1/sessions/{SESSION}/blasts/{id}/cancel"),
            None,
            200,
        )
        .await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    // Still held: the network has not taken the second message.
    assert_eq!(
        rig.api().outbox_len(SESSION).await,
        Some(1),
        "the send was still held at the cancel"
    );
    let before_kill = rig.api().outbox(SESSION).await;
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    let api = rig.api().clone();

    // The interrupted recipient is resolved: the network lacks its message,
    // so it is left pending under the message id it had.
    until("the interrupted recipient to be resolved", || async {
        recipients(&api, &id).await[1]["status"] != "sending"
    })
    .await;

    // The worker ran after the restart: a new job, created after the
    // cancelled one, completes. Had the cancelled job been picked up again,
    // the worker (oldest job first) would have sent it before this one.
    let marker_to = vec!["4960999999".to_owned()];
    let marker = create(&api, &marker_to, Duration::ZERO, "marker").await;
    until("the marker blast to complete", || async {
        job(&api, &marker).await["status"] == "completed"
    })
    .await;

    let j = job(&api, &id).await;
    assert_eq!(j["status"], "cancelled", "the job stays cancelled: {j}");
    assert_eq!(
        (
            j["total"].as_u64(),
            j["sent_count"].as_u64(),
            j["dlq_count"].as_u64()
        ),
        (Some(5), Some(1), Some(0)),
        "only the first recipient counts as sent: {j}"
    );

    let outbox = api.outbox(SESSION).await;
    let sent_to: Vec<&str> = outbox.iter().map(|m| m["to"].as_str().unwrap()).collect();
    assert_eq!(
        sent_to,
        [
            format!("{}@s.whatsapp.net", list[0]),
            format!("{}@s.whatsapp.net", marker_to[0]),
        ],
        "the network got the first recipient and the marker, nobody else"
    );
    assert_eq!(outbox[0], before_kill[0], "the first send is unchanged");
    assert!(
        outbox.iter().all(|m| m["message_id"] != held_id.as_str()),
        "the held send never reached the network: {outbox:?}"
    );

    let after = recipients(&api, &id).await;
    assert_eq!(after.len(), 5);
    assert_eq!(after[0]["status"], "sent", "{}", after[0]);
    assert_eq!(
        after[0]["message_id"], outbox[0]["message_id"],
        "the first recipient's id is the one the network got"
    );
    assert_eq!(
        after[1]["status"], "pending",
        "the interrupted recipient of a cancelled job is left pending: {}",
        after[1]
    );
    assert_eq!(
        after[1]["message_id"], held_id,
        "and keeps the message id chosen for it"
    );
    for r in &after[2..] {
        assert_eq!(r["status"], "pending", "never picked up: {r}");
    }
}
