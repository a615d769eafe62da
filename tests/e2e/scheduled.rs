//! Scheduled sends: `send_at` on the send endpoints, sending at the due time,
//! validation at schedule time, cancelling, listing, and the session delete
//! cascade.

use serde_json::{Value, json};
use std::time::Duration;

use switchboard::domain::time::{iso8601, parse_iso8601, unix_now, unix_now_ms};
use switchboard_tests::{TestServer, eventually};

/// ISO-8601 UTC, `secs` from now, in whole seconds: for times far in the
/// past or future, where a second either way changes nothing.
pub fn in_secs(secs: i64) -> String {
    iso8601(unix_now() + secs)
}

/// How much time a send scheduled to go out soon leaves the test to get its
/// request answered: the gateway answers `202` only while `send_at` is after
/// its own current whole second, so a loaded machine must not eat this.
pub const SOON: Duration = Duration::from_secs(2);

/// ISO-8601 UTC of the first whole second at least `margin` from now. A
/// whole-second `now + 1` can be a few milliseconds ahead; this is always at
/// least `margin` ahead and less than a second more.
pub fn due_after(margin: Duration) -> String {
    let ms = unix_now_ms() + i64::try_from(margin.as_millis()).expect("a short margin");
    iso8601((ms + 999) / 1000)
}

/// [`due_after`] [`SOON`]: a send that goes out within a few seconds.
pub fn soon() -> String {
    due_after(SOON)
}

/// Asserts a scheduled send went out no earlier than its `send_at`: read
/// from the gateway's own record, so it holds however slowly the test ran.
#[track_caller]
pub fn assert_sent_on_time(item: &Value) {
    let due = parse_iso8601(item["send_at"].as_str().expect("send_at")).expect("an ISO time");
    let sent = parse_iso8601(item["sent_at"].as_str().expect("sent_at")).expect("an ISO time");
    assert!(sent >= due, "sent before its time: {item}");
}

/// What the sim network received from a session.
pub async fn outbox(server: &TestServer, id: &str) -> Vec<Value> {
    let body = server
        .get(&format!("/api/v1/sim/sessions/{id}/outbox"))
        .await
        .expect(200);
    body["messages"].as_array().unwrap().clone()
}

/// Schedules a text; returns the scheduled id.
pub async fn schedule_text(server: &TestServer, session: &str, text: &str, at: &str) -> String {
    let resp = server
        .post(
            &format!("/api/v1/sessions/{session}/messages/text"),
            json!({ "to": "15550000001", "text": text, "send_at": at }),
        )
        .await
        .expect(202);
    resp["scheduled_id"].as_str().unwrap().to_owned()
}

/// Waits until a scheduled send has `status`; returns it.
pub async fn wait_for_scheduled(
    server: &TestServer,
    session: &str,
    id: &str,
    status: &str,
) -> Value {
    let path = format!("/api/v1/sessions/{session}/scheduled/{id}");
    eventually(&format!("scheduled send {id} to be {status}"), || async {
        let item = server.get(&path).await.expect(200);
        (item["status"] == status).then_some(item)
    })
    .await
}

fn ids(listing: &Value) -> Vec<String> {
    listing["scheduled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scheduled_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_without_send_at_or_with_a_null_or_past_one_goes_out_at_once() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let past = [
        None,
        Some(Value::Null),
        Some(json!(in_secs(-60))),
        Some(json!("2001-01-01T00:00:00+02:00")),
    ];
    for send_at in past {
        let mut body = json!({ "to": "15550000001", "text": "now" });
        if let Some(at) = send_at {
            body["send_at"] = at;
        }
        let sent = server
            .post("/api/v1/sessions/s/messages/text", body)
            .await
            .expect(200);
        assert!(sent["message_id"].is_string(), "{sent}");
        assert!(sent.get("scheduled_id").is_none(), "{sent}");
    }
    assert_eq!(outbox(&server, "s").await.len(), 4);
    let listed = server.get("/api/v1/sessions/s/scheduled").await.expect(200);
    assert_eq!(listed["count"], 0, "nothing was scheduled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_future_send_at_is_accepted_with_202_and_sent_at_that_time_through_the_send_core() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let at = soon();
    let resp = server
        .post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "+1 555 000 0001", "text": "later", "send_at": at }),
        )
        .await
        .expect(202);
    assert_eq!(resp["status"], "scheduled");
    assert_eq!(resp["send_at"], at.as_str());
    let id = resp["scheduled_id"].as_str().unwrap().to_owned();

    // A send an hour away shows the record as it waits; the one due soon
    // may already be out by the time a slow test reads it.
    let parked = schedule_text(&server, "s", "in an hour", &in_secs(3600)).await;
    let item = server
        .get(&format!("/api/v1/sessions/s/scheduled/{parked}"))
        .await
        .expect(200);
    assert_eq!(item["status"], "scheduled");
    assert_eq!(item["attempts"], 0);
    assert!(item["message_id"].is_null() && item["sent_at"].is_null());

    let item = server
        .get(&format!("/api/v1/sessions/s/scheduled/{id}"))
        .await
        .expect(200);
    assert_eq!(item["scheduled_id"], id.as_str());
    assert_eq!(item["session_id"], "s");
    assert_eq!(item["kind"], "text");
    assert_eq!(item["to"], "15550000001@s.whatsapp.net");
    assert_eq!(item["send_at"], at.as_str());
    assert_eq!(item["body"], json!({ "text": "later" }));
    assert!(item["created_at"].is_string());

    let delivered = eventually("the scheduled send in the outbox", || async {
        outbox(&server, "s").await.first().cloned()
    })
    .await;
    assert_eq!(delivered["to"], "15550000001@s.whatsapp.net");
    assert_eq!(delivered["body"]["text"], "later");
    let item = wait_for_scheduled(&server, "s", &id, "sent").await;
    assert_sent_on_time(&item);
    assert_eq!(item["message_id"], delivered["message_id"]);
    assert_eq!(item["attempts"], 1);
    assert!(item["sent_at"].is_string() && item["finished_at"].is_string());
    assert!(item["last_error"].is_null());
    let history = server.get("/api/v1/sessions/s/messages").await.expect(200);
    assert_eq!(history["messages"][0]["direction"], "outbound");
    assert_eq!(
        history["messages"][0]["message_id"],
        delivered["message_id"]
    );
    assert_eq!(outbox(&server, "s").await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_is_validated_in_full_when_it_is_scheduled() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let at = in_secs(3600);
    let send = |path: &'static str, body: Value| server.post(path, body);
    let msg = send(
        "/api/v1/sessions/s/messages/text",
        json!({ "to": "15550000001", "send_at": at }),
    )
    .await
    .expect_error(400, "invalid_field");
    assert!(msg.contains("`text`"), "{msg}");
    let msg = send(
        "/api/v1/sessions/s/messages/poll",
        json!({ "to": "15550000001", "question": "?", "options": ["only one"], "send_at": at }),
    )
    .await
    .expect_error(400, "invalid_field");
    assert!(msg.contains("`options`"), "{msg}");
    for bad in [json!("tomorrow"), json!("2030-01-01 10:00:00"), json!(17)] {
        let msg = send(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": "15550000001", "text": "hi", "send_at": bad }),
        )
        .await
        .expect_error(400, "invalid_field");
        assert!(msg.contains("`send_at`"), "{msg}");
    }
    send(
        "/api/v1/sessions/ghost/messages/text",
        json!({ "to": "15550000001", "text": "hi", "send_at": at }),
    )
    .await
    .expect_error(404, "session_not_found");
    send(
        "/api/v1/sessions/s/messages/fax",
        json!({ "to": "15550000001", "text": "hi", "send_at": at }),
    )
    .await
    .expect_error(404, "unknown_send_kind");
    let fleet = server.get("/api/v1/scheduled").await.expect(200);
    assert_eq!(fleet["count"], 0, "a refused request stores nothing");

    // Scheduling needs no connection: the session's state counts at send time.
    server.create_session("idle").await;
    schedule_text(&server, "idle", "for later", &at).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_cancelled_before_its_time_is_never_sent_and_one_already_sent_cannot_be_cancelled() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    // The cancel must land before the dropped send is due, so it gets more
    // room than `SOON`; the kept send is due a second after it, so once the
    // kept one is out the scheduler has been past the dropped one's time.
    let dropped_at = due_after(SOON * 3);
    let dropped = schedule_text(&server, "s", "cancel me", &dropped_at).await;
    let kept_at = iso8601(parse_iso8601(&dropped_at).unwrap() + 1);
    let kept = schedule_text(&server, "s", "keep me", &kept_at).await;
    let cancelled = server
        .delete(&format!("/api/v1/sessions/s/scheduled/{dropped}"))
        .await
        .expect(200);
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled["finished_at"].is_string());

    let item = wait_for_scheduled(&server, "s", &kept, "sent").await;
    assert_sent_on_time(&item);
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["body"]["text"], "keep me");
    let item = wait_for_scheduled(&server, "s", &dropped, "cancelled").await;
    assert_eq!(item["attempts"], 0);
    assert!(item["message_id"].is_null());

    let msg = server
        .delete(&format!("/api/v1/sessions/s/scheduled/{dropped}"))
        .await
        .expect_error(400, "not_cancellable");
    assert!(msg.contains("cancelled"), "{msg}");
    let msg = server
        .delete(&format!("/api/v1/sessions/s/scheduled/{kept}"))
        .await
        .expect_error(400, "not_cancellable");
    assert!(msg.contains("sent"), "{msg}");
    server
        .delete("/api/v1/sessions/s/scheduled/no-such-id")
        .await
        .expect_error(404, "scheduled_send_not_found");
    server
        .delete(&format!("/api/v1/sessions/ghost/scheduled/{kept}"))
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_sends_are_listed_newest_first_filtered_by_status_paged_and_fleet_wide() {
    let server = TestServer::start().await;
    server.create_session("a").await;
    server.create_session("b").await;
    let at = in_secs(3600);
    let a1 = schedule_text(&server, "a", "a1", &at).await;
    let a2 = schedule_text(&server, "a", "a2", &at).await;
    let a3 = schedule_text(&server, "a", "a3", &at).await;
    let b1 = schedule_text(&server, "b", "b1", &at).await;
    server
        .delete(&format!("/api/v1/sessions/a/scheduled/{a2}"))
        .await
        .expect(200);

    let all = server.get("/api/v1/sessions/a/scheduled").await.expect(200);
    assert_eq!(all["count"], 3);
    assert_eq!(
        (all["limit"].clone(), all["offset"].clone()),
        (json!(100), json!(0))
    );
    assert_eq!(ids(&all), [a3.as_str(), a2.as_str(), a1.as_str()]);
    let get = |q: &'static str| server.get(q);
    let cancelled = get("/api/v1/sessions/a/scheduled?status=cancelled")
        .await
        .expect(200);
    assert_eq!(ids(&cancelled), [a2.as_str()]);
    let waiting = get("/api/v1/sessions/a/scheduled?status=scheduled")
        .await
        .expect(200);
    assert_eq!(ids(&waiting), [a3.as_str(), a1.as_str()]);
    let both = get("/api/v1/sessions/a/scheduled?status=scheduled,cancelled")
        .await
        .expect(200);
    assert_eq!(both["count"], 3);
    let paged = get("/api/v1/sessions/a/scheduled?limit=1&offset=1")
        .await
        .expect(200);
    assert_eq!(ids(&paged), [a2.as_str()]);
    assert_eq!(
        (paged["limit"].clone(), paged["offset"].clone()),
        (json!(1), json!(1))
    );
    let clamped = get("/api/v1/sessions/a/scheduled?limit=0")
        .await
        .expect(200);
    assert_eq!(
        (clamped["count"].clone(), clamped["limit"].clone()),
        (json!(1), json!(1))
    );
    let msg = get("/api/v1/sessions/a/scheduled?status=pending")
        .await
        .expect_error(400, "invalid_query");
    assert!(
        msg.contains("pending") && msg.contains("scheduled"),
        "{msg}"
    );
    get("/api/v1/sessions/ghost/scheduled")
        .await
        .expect_error(404, "session_not_found");
    server
        .get(&format!("/api/v1/sessions/b/scheduled/{a1}"))
        .await
        .expect_error(404, "scheduled_send_not_found");

    let fleet = get("/api/v1/scheduled").await.expect(200);
    assert_eq!(
        ids(&fleet),
        [b1.as_str(), a3.as_str(), a2.as_str(), a1.as_str()]
    );
    assert_eq!(fleet["scheduled"][0]["session_id"], "b");
    let only_a = get("/api/v1/scheduled?session=a").await.expect(200);
    assert_eq!(ids(&only_a), [a3.as_str(), a2.as_str(), a1.as_str()]);
    let b_waiting = get("/api/v1/scheduled?session=b&status=scheduled")
        .await
        .expect(200);
    assert_eq!(ids(&b_waiting), [b1.as_str()]);
    let fleet_cancelled = get("/api/v1/scheduled?status=cancelled").await.expect(200);
    assert_eq!(ids(&fleet_cancelled), [a2.as_str()]);
    let fleet_page = get("/api/v1/scheduled?limit=2&offset=1").await.expect(200);
    assert_eq!(ids(&fleet_page), [a3.as_str(), a2.as_str()]);
    let nobody = get("/api/v1/scheduled?session=ghost").await.expect(200);
    assert_eq!(nobody["count"], 0);
    get("/api/v1/scheduled?status=nope")
        .await
        .expect_error(400, "invalid_query");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_deletes_its_scheduled_sends() {
    let server = TestServer::start().await;
    server.create_session("a").await;
    server.create_session("b").await;
    schedule_text(&server, "a", "soon", &soon()).await;
    schedule_text(&server, "a", "later", &in_secs(3600)).await;
    let kept = schedule_text(&server, "b", "b's", &in_secs(3600)).await;
    server.delete("/api/v1/sessions/a").await.expect(200);
    let fleet = server.get("/api/v1/scheduled").await.expect(200);
    assert_eq!(ids(&fleet), [kept.as_str()]);
    server.create_session("a").await;
    let again = server.get("/api/v1/sessions/a/scheduled").await.expect(200);
    assert_eq!(
        again["count"], 0,
        "a new session of the same id starts empty"
    );
}
