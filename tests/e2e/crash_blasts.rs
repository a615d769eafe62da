//! Blasts across SIGKILL: the real binary killed while a paced blast runs,
//! restarted on the same data directory. The job, its recipients and its
//! counters are stored, and the one recipient a crash can leave between
//! "sending" and "sent" has a message id chosen before the attempt, which
//! the sim can be asked about; so on the sim the spec promises every
//! recipient exactly once across crashes. After each restart the job must
//! resume and complete with:
//!
//! - every recipient in the sim's outbox exactly once (none skipped, none
//!   sent twice), in recipient order, under the message id its recipient
//!   record names;
//! - every recipient `sent`, and the job's counts matching (`sent_count` =
//!   `total` = what the network received, nothing failed or dead-lettered).
//!
//! Kill points: right after the create was answered; mid-batch, once the
//! sim shows the worker past its first batch of 25; with every send held in
//! the sim by its `send_latency_ms` fault, once the sim shows K recipients,
//! so the kill finds the next one inside the network call. One scenario runs
//! on the production worker intervals (30 s idle poll, 5 s offline retry):
//! the create has to wake the worker, or nothing is sent in time.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::crash::{Api, Intervals, Rig, until, within};

use crate::BINARY;

const SESSION: &str = "blaster";

fn phones(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("4950{i:07}")).collect()
}

/// Creates a text blast to `n` recipients paced `delay_ms` apart; returns
/// the job id and the recipients' JIDs in order.
async fn create(api: &Api, n: usize, delay_ms: u64) -> (String, Vec<String>) {
    let list = phones(n);
    let body = json!({
        "endpoint": "text",
        "body": { "to": "4950000000", "text": "crash blast" },
        "recipients": list,
        "delay_ms": delay_ms,
    });
    let created = api
        .expect(
            Method::POST,
            &format!("/api/v1/sessions/{SESSION}/blast"),
            Some(body),
            201,
        )
        .await;
    let id = created["job_id"].as_str().expect("a job id").to_owned();
    (
        id,
        list.iter().map(|p| format!("{p}@s.whatsapp.net")).collect(),
    )
}

async fn job(api: &Api, id: &str) -> Value {
    api.get(&format!("/api/v1/sessions/{SESSION}/blasts/{id}"))
        .await
}

/// Waits until the sim's outbox holds at least `k` messages of the session.
async fn sim_shows(api: &Api, k: usize) {
    until(&format!("the sim to show {k} sent"), || async {
        api.outbox_len(SESSION).await.is_some_and(|n| n >= k)
    })
    .await;
}

/// After a restart: the job completes, and every recipient reached the
/// network exactly once under its recorded id, the counts agreeing.
async fn check_completed(api: &Api, id: &str, want: &[String], kill: &str) {
    until(
        &format!("blast {id} to complete after a kill {kill}"),
        || async {
            let j = job(api, id).await;
            assert!(
                j["status"] == "running" || j["status"] == "pending" || j["status"] == "completed",
                "after a kill {kill}: the job went {}: {j}",
                j["status"]
            );
            j["status"] == "completed"
        },
    )
    .await;
    let j = job(api, id).await;
    let total = want.len() as u64;
    assert_eq!(
        (
            j["total"].as_u64(),
            j["sent_count"].as_u64(),
            j["dlq_count"].as_u64()
        ),
        (Some(total), Some(total), Some(0)),
        "after a kill {kill}: the job's counts: {j}"
    );
    let outbox = api.outbox(SESSION).await;
    let sent_to: Vec<&str> = outbox.iter().map(|m| m["to"].as_str().unwrap()).collect();
    assert_eq!(
        sent_to, want,
        "after a kill {kill}: the network got each recipient exactly once, in order"
    );
    let recipients = api
        .get(&format!(
            "/api/v1/sessions/{SESSION}/blasts/{id}/recipients?limit=1000"
        ))
        .await;
    let recipients = recipients["recipients"].as_array().expect("recipients");
    assert_eq!(recipients.len(), want.len());
    for (r, m) in recipients.iter().zip(&outbox) {
        assert_eq!(r["status"], "sent", "after a kill {kill}: {r}");
        assert_eq!(r["recipient"], m["to"], "after a kill {kill}: {r}");
        assert_eq!(
            r["message_id"], m["message_id"],
            "after a kill {kill}: the recipient's id is the one the network got: {r}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_killed_right_after_its_create_was_answered_completes_once_each_after_restart() {
    let mut rig = Rig::start(BINARY, Intervals::Fast).await;
    rig.api().pair(SESSION).await;
    let (id, want) = create(rig.api(), 20, 20).await;
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    check_completed(rig.api(), &id, &want, "right after the create").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_killed_mid_batch_resumes_and_sends_each_recipient_exactly_once() {
    let mut rig = Rig::start(BINARY, Intervals::Fast).await;
    rig.api().pair(SESSION).await;
    let (id, want) = create(rig.api(), 45, 25).await;
    // Past the worker's first batch of 25: the second batch is under way.
    sim_shows(rig.api(), 27).await;
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    check_completed(rig.api(), &id, &want, "mid-batch").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_killed_while_a_send_is_held_inside_the_network_skips_and_repeats_no_recipient() {
    let mut rig = Rig::start(BINARY, Intervals::Fast).await;
    rig.api().pair(SESSION).await;
    // Every send waits 300 ms in the sim before the network takes it; with
    // no pacing, the next send starts at once, so a kill as soon as the sim
    // shows 4 finds the 5th inside the network call (recipient `sending`).
    // The fault is the network's memory: the restart clears it.
    rig.api()
        .faults(SESSION, json!({ "send_latency_ms": 300 }))
        .await;
    let (id, want) = create(rig.api(), 10, 0).await;
    sim_shows(rig.api(), 4).await;
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    check_completed(rig.api(), &id, &want, "while a send was held in the sim").await;
}

/// The idle poll an operator gets (`SWITCHBOARD_BLAST_IDLE_POLL_MS`); a test
/// of the wake-up must see the work done well within it.
const PRODUCTION_IDLE_POLL: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_production_intervals_a_create_wakes_the_worker_and_a_killed_blast_still_completes() {
    let mut rig = Rig::start(BINARY, Intervals::Production).await;
    rig.api().pair(SESSION).await;
    // The worker started with nothing to do and sleeps for the idle poll:
    // only the create's wake-up gets the first sends out within half of it.
    let (id, want) = create(rig.api(), 12, 100).await;
    let api = rig.api().clone();
    let took = within(
        "the first 4 sends of a new blast",
        PRODUCTION_IDLE_POLL / 2,
        || async { api.outbox_len(SESSION).await.is_some_and(|n| n >= 4) },
    )
    .await;
    eprintln!("crash_blasts: the create woke the worker: 4 sent after {took:?}");
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    let api = rig.api().clone();
    within(
        "the killed blast to complete after the restart",
        PRODUCTION_IDLE_POLL / 2,
        || async { job(&api, &id).await["status"] == "completed" },
    )
    .await;
    check_completed(rig.api(), &id, &want, "on production intervals").await;
}
