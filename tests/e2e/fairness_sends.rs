//! Background sends are fair between sessions and bounded in time: the
//! scheduler hands several sessions' due sends to the network at once, so
//! one session's send held inside the network does not hold another's; a
//! scheduled or blast send that runs past its time bound is abandoned and
//! retried under the same message id, and goes out once. Sends are held by
//! the sim's `send_latency_ms` fault, which keeps them inside the network
//! call.

use std::time::Duration;

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

use crate::blasts_support::{self, faults, phones, text_blast};
use crate::scheduled::{outbox, schedule_text, soon, wait_for_scheduled};

/// Holds every send of a session inside the network for an hour.
fn held() -> serde_json::Value {
    json!({ "send_latency_ms": 3_600_000 })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_held_inside_the_network_does_not_hold_another_sessions_send() {
    let server = TestServer::start().await;
    server.paired_session("slow").await;
    server.paired_session("quick").await;
    faults(&server, "slow", held()).await;
    let slow = schedule_text(&server, "slow", "held", &soon()).await;
    wait_for_scheduled(&server, "slow", &slow, "sending").await;

    // Due after the held one, from another session: it goes out meanwhile.
    let quick = schedule_text(&server, "quick", "not held", &soon()).await;
    let sent = wait_for_scheduled(&server, "quick", &quick, "sent").await;
    assert_eq!(outbox(&server, "quick").await.len(), 1, "{sent}");
    let item = server
        .get(&format!("/api/v1/sessions/slow/scheduled/{slow}"))
        .await
        .expect(200);
    assert_eq!(item["status"], "sending", "still held: {item}");
    assert!(outbox(&server, "slow").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_past_its_time_bound_is_abandoned_lets_the_next_go_and_goes_out_once_later()
 {
    let server = TestServer::start_with(|c| {
        // One send at a time: only the bound lets the next one through.
        c.schedule.concurrency = 1;
        c.schedule.send_timeout = Duration::from_secs(1);
        // Longer than the next send takes to come due and go out.
        c.schedule.retry_delays = vec![Duration::from_secs(6)];
        c.schedule.max_attempts = 5;
    })
    .await;
    server.paired_session("slow").await;
    server.paired_session("quick").await;
    faults(&server, "slow", held()).await;
    let slow = schedule_text(&server, "slow", "held", &soon()).await;
    wait_for_scheduled(&server, "slow", &slow, "sending").await;
    let quick = schedule_text(&server, "quick", "next", &soon()).await;
    wait_for_scheduled(&server, "quick", &quick, "sent").await;

    let path = format!("/api/v1/sessions/slow/scheduled/{slow}");
    let abandoned = eventually("the held send to be abandoned", || async {
        let item = server.get(&path).await.expect(200);
        (item["status"] == "scheduled").then_some(item)
    })
    .await;
    assert!(abandoned["attempts"].as_u64() >= Some(1), "{abandoned}");
    let why = abandoned["last_error"].as_str().unwrap_or_default();
    assert!(
        why.contains("time bound of 1 s") && why.contains("same message id"),
        "{abandoned}"
    );
    assert!(outbox(&server, "slow").await.is_empty());

    // The network answers again: the retry goes out, once, under its id.
    faults(&server, "slow", json!({})).await;
    let sent = wait_for_scheduled(&server, "slow", &slow, "sent").await;
    let went = outbox(&server, "slow").await;
    assert_eq!(went.len(), 1, "{went:?}");
    assert_eq!(went[0]["message_id"], sent["message_id"], "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_send_held_inside_the_network_is_abandoned_at_its_bound_and_the_worker_goes_on() {
    let server = TestServer::start_with(|c| {
        c.blasts.offline_retry = Duration::from_millis(50);
        c.blasts.idle_poll = Duration::from_millis(500);
        c.blasts.send_timeout = Duration::from_secs(1);
    })
    .await;
    server.paired_session("slow").await;
    server.paired_session("quick").await;
    faults(&server, "slow", held()).await;
    let to = phones(1);
    let slow = blasts_support::create(
        &server,
        "slow",
        text_blast(&to, json!({ "delay_ms": 0, "max_attempts": 2 })),
    )
    .await;
    let recipient = eventually("the held send to be abandoned", || async {
        let all = blasts_support::recipients(&server, "slow", &slow, None).await;
        let r = all.first()?.clone();
        (r["attempts"].as_u64() >= Some(1)).then_some(r)
    })
    .await;
    assert!(
        recipient["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("time bound of 1 s")),
        "{recipient}"
    );

    // Another session's blast, created while the first is held: the one
    // worker keeps the spec's order (the older job first), and the bound
    // ends the older job's attempts, so this one completes.
    let quick = blasts_support::create(&server, "quick", text_blast(&to, json!({}))).await;
    blasts_support::wait_status(&server, "quick", &quick, "completed").await;
    let done = blasts_support::wait_status(&server, "slow", &slow, "completed_with_failures").await;
    assert_eq!(done["dlq_count"], 1, "{done}");
    let all = blasts_support::recipients(&server, "slow", &slow, None).await;
    assert_eq!(all[0]["status"], "dlq", "{all:?}");
    assert_eq!(
        all[0]["attempts"], 2,
        "both abandoned attempts count: {all:?}"
    );
    assert!(blasts_support::outbox(&server, "slow").await.is_empty());

    // Once the network answers, a retry sends it once, under its id.
    faults(&server, "slow", json!({})).await;
    server
        .post_empty(&format!("/api/v1/sessions/slow/blasts/{slow}/retry"))
        .await
        .expect(200);
    let done = blasts_support::wait_status(&server, "slow", &slow, "completed").await;
    assert_eq!(done["sent_count"], 1, "{done}");
    let went = blasts_support::outbox(&server, "slow").await;
    assert_eq!(went.len(), 1, "{went:?}");
    assert_eq!(went[0]["message_id"], all[0]["message_id"], "{all:?}");
}
