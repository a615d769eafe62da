//! Blasts and the world around them: dedup across a session's jobs, the
//! progress and completed events at a real webhook receiver, and what a paused
//! or logged-out session does to its blast.

use serde_json::{Value, json};
use switchboard_tests::receiver::{TestReceiver, add_webhook, wait_until_idle};

use crate::blasts_support::{
    create, jid, job, outbox, outbox_to, phones, recipients, server, text_blast, wait_job,
    wait_status,
};

fn jids(list: &[String]) -> Vec<String> {
    list.iter().map(|p| jid(p)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dedup_across_jobs_skips_recipients_an_earlier_job_sent_to() {
    let server = server().await;
    server.paired_session("s").await;
    let p = phones(3);
    let fast = json!({ "delay_ms": 0 });
    let first = create(&server, "s", text_blast(&p[..2], fast.clone())).await;
    wait_status(&server, "s", &first, "completed").await;
    let list = vec![p[1].clone(), p[2].clone(), p[2].clone()];
    let resp = server
        .post(
            "/api/v1/sessions/s/blast",
            text_blast(&list, json!({ "delay_ms": 0, "dedup_across_jobs": true })),
        )
        .await
        .expect(201);
    assert_eq!(
        (resp["total"].as_u64(), resp["skipped_dup"].as_u64()),
        (Some(1), Some(2))
    );
    let second = resp["job_id"].as_str().unwrap();
    wait_status(&server, "s", second, "completed").await;
    let third = create(&server, "s", text_blast(&p[..1], fast)).await;
    wait_status(&server, "s", &third, "completed").await;
    assert_eq!(
        outbox_to(&server, "s").await,
        jids(&[p[0].clone(), p[1].clone(), p[2].clone(), p[0].clone()]),
        "without dedup_across_jobs a recipient is sent again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_every_25_sends_and_the_completed_event_reach_a_webhook() {
    let server = server().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["blast_progress", "blast_completed"] }),
    )
    .await;
    let id = create(
        &server,
        "s",
        text_blast(&phones(60), json!({ "delay_ms": 0 })),
    )
    .await;
    // Progress is published before completion: once the completed event has
    // arrived and nothing is pending, every event of the job is here.
    rx.wait_for_match("the completed event", |r| r.event() == "blast_completed")
        .await;
    wait_until_idle(&server, "s", &rx.url()).await;
    let got = rx.requests();
    let mut events: Vec<Value> = rx.requests().iter().map(|r| r.json()).collect();
    assert_eq!(events.len(), 3, "{events:?}");
    events.sort_by_key(|e| e["data"]["sent_count"].as_u64());
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["blast_progress", "blast_progress", "blast_completed"]
    );
    assert!(got.iter().all(|r| r.header("x-webhook-event").is_some()));
    for (e, sent) in events.iter().zip([25, 50, 60]) {
        let d = &e["data"];
        assert_eq!(e["session_id"], "s");
        assert_eq!(d["job_id"], id.as_str());
        assert_eq!(d["session_id"], "s");
        assert_eq!(d["endpoint"], "text");
        assert_eq!(d["total"], 60);
        assert_eq!(d["sent_count"], sent);
        assert_eq!(d["failed_count"], 0);
        assert_eq!(d["dlq_count"], 0);
        assert_eq!(d["skipped_dup_count"], 0);
    }
    assert_eq!(events[0]["data"]["status"], "running");
    let done = &events[2]["data"];
    assert_eq!(done["status"], "completed");
    assert!(done["finished_at"].is_string() && done["started_at"].is_string());
    assert_eq!(done["reason"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_holds_its_blast_without_spending_attempts_while_others_go_on() {
    let server = server().await;
    server.paired_session("p").await;
    server.paired_session("q").await;
    let held = create(
        &server,
        "p",
        text_blast(&phones(6), json!({ "delay_ms": 100 })),
    )
    .await;
    wait_job(&server, "p", &held, "to start", |j| {
        j["sent_count"].as_u64() >= Some(1)
    })
    .await;
    server
        .post_empty("/api/v1/sessions/p/pause")
        .await
        .expect(200);
    let other = create(
        &server,
        "q",
        text_blast(&phones(3), json!({ "delay_ms": 0 })),
    )
    .await;
    wait_status(&server, "q", &other, "completed").await;
    let j = job(&server, "p", &held).await;
    assert_eq!(j["status"], "running", "{j}");
    assert_eq!(j["failed_count"], 0, "no attempt spent on a paused session");
    assert!(j["sent_count"].as_u64() < Some(6));
    server
        .post_empty("/api/v1/sessions/p/resume")
        .await
        .expect(200);
    let done = wait_status(&server, "p", &held, "completed").await;
    assert_eq!(
        (done["sent_count"].as_u64(), done["failed_count"].as_u64()),
        (Some(6), Some(0))
    );
    assert_eq!(outbox(&server, "p").await.len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_out_session_fails_its_blast_and_leaves_the_rest_failed() {
    let server = server().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["blast_completed"] }),
    )
    .await;
    let id = create(
        &server,
        "s",
        text_blast(&phones(5), json!({ "delay_ms": 200 })),
    )
    .await;
    wait_job(&server, "s", &id, "to start", |j| {
        j["sent_count"].as_u64() >= Some(1)
    })
    .await;
    server
        .post_empty("/api/v1/sessions/s/logout")
        .await
        .expect(200);
    let failed = wait_status(&server, "s", &id, "failed").await;
    assert!(failed["finished_at"].is_string());
    let sent = failed["sent_count"].as_u64().unwrap();
    let left = recipients(&server, "s", &id, Some("failed")).await;
    assert_eq!(left.len() as u64, 5 - sent);
    assert!(
        left[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("logged out"),
        "{}",
        left[0]
    );
    let event = rx.wait_for(1).await.remove(0).json();
    assert_eq!(event["data"]["status"], "failed");
    assert!(
        event["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("logged out")
    );
}
