//! Scheduled sends that cannot go out at their time: a paused or disconnected
//! session (they wait, up to the limit) and network failures (retried, then
//! failed).

use std::time::Duration;

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

use super::scheduled::{outbox, schedule_text, soon, wait_for_scheduled};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_due_on_a_paused_session_waits_and_goes_out_after_resume() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post_empty("/api/v1/sessions/s/pause")
        .await
        .expect(200);
    let id = schedule_text(&server, "s", "after the pause", &soon()).await;
    let path = format!("/api/v1/sessions/s/scheduled/{id}");
    let waiting = eventually("the due send to wait for its session", || async {
        let item = server.get(&path).await.expect(200);
        let reason = item["last_error"].as_str().unwrap_or_default();
        (item["status"] == "scheduled" && reason.contains("paused")).then_some(item)
    })
    .await;
    assert!(
        waiting["last_error"]
            .as_str()
            .unwrap()
            .starts_with("waiting"),
        "{waiting}"
    );
    assert!(outbox(&server, "s").await.is_empty());

    server
        .post_empty("/api/v1/sessions/s/resume")
        .await
        .expect(200);
    let item = wait_for_scheduled(&server, "s", &id, "sent").await;
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["body"]["text"], "after the pause");
    assert_eq!(item["message_id"], sent[0]["message_id"]);
    assert!(item["last_error"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_due_on_a_disconnected_session_goes_out_when_it_connects() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    let id = schedule_text(&server, "s", "when you are back", &soon()).await;
    let path = format!("/api/v1/sessions/s/scheduled/{id}");
    eventually("the due send to wait for the connection", || async {
        let item = server.get(&path).await.expect(200);
        let reason = item["last_error"].as_str().unwrap_or_default();
        reason.contains("disconnected").then_some(())
    })
    .await;
    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    wait_for_scheduled(&server, "s", &id, "sent").await;
    assert_eq!(outbox(&server, "s").await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_that_waits_longer_than_the_limit_fails_and_says_why() {
    let server = TestServer::start_with(|c| c.schedule.max_wait = Duration::from_millis(300)).await;
    server.paired_session("s").await;
    server
        .post_empty("/api/v1/sessions/s/pause")
        .await
        .expect(200);
    let id = schedule_text(&server, "s", "too late", &soon()).await;
    let item = wait_for_scheduled(&server, "s", &id, "failed").await;
    let reason = item["last_error"].as_str().unwrap();
    assert!(
        reason.contains("wait limit of 0.3 s") && reason.contains("paused"),
        "{reason}"
    );
    assert!(item["finished_at"].is_string() && item["message_id"].is_null());
    assert_eq!(item["attempts"], 0);

    // Once the session is back, only what is scheduled then goes out.
    server
        .post_empty("/api/v1/sessions/s/resume")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    let next = schedule_text(&server, "s", "on time", &soon()).await;
    wait_for_scheduled(&server, "s", &next, "sent").await;
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["body"]["text"], "on time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_the_network_keeps_failing_is_retried_then_fails_with_the_error() {
    let server = TestServer::start_with(|c| {
        c.schedule.max_attempts = 2;
        c.schedule.retry_delays = vec![Duration::from_millis(100)];
    })
    .await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/faults",
            json!({ "fail_sends_to": ["15550000001"] }),
        )
        .await
        .expect(200);
    let id = schedule_text(&server, "s", "doomed", &soon()).await;
    let item = wait_for_scheduled(&server, "s", &id, "failed").await;
    assert_eq!(item["attempts"], 2);
    let reason = item["last_error"].as_str().unwrap();
    assert!(
        reason.contains("after 2 attempts") && reason.contains("simulated send failure"),
        "{reason}"
    );
    assert!(outbox(&server, "s").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_the_network_failed_once_goes_out_on_a_later_attempt() {
    let server = TestServer::start_with(|c| {
        c.schedule.retry_delays = vec![Duration::from_secs(1)];
    })
    .await;
    server.paired_session("s").await;
    server
        .post(
            "/api/v1/sim/sessions/s/faults",
            json!({ "fail_sends_to": ["15550000001"] }),
        )
        .await
        .expect(200);
    let id = schedule_text(&server, "s", "second time lucky", &soon()).await;
    let path = format!("/api/v1/sessions/s/scheduled/{id}");
    eventually("the first attempt to fail", || async {
        let item = server.get(&path).await.expect(200);
        (item["attempts"] == 1 && item["status"] == "scheduled").then_some(())
    })
    .await;
    server
        .delete("/api/v1/sim/sessions/s/faults")
        .await
        .expect(200);
    let item = wait_for_scheduled(&server, "s", &id, "sent").await;
    assert!(item["attempts"].as_u64().unwrap() >= 2, "{item}");
    assert_eq!(outbox(&server, "s").await.len(), 1);
}
