//! Creating blasts: the create rules (normalised recipients, defaults,
//! duplicates, `send_at` inside the body) and every refusal.

use serde_json::{Value, json};
use switchboard_tests::TestServer;
use switchboard_tests::receiver::is_uuid;

use crate::blasts_support::{
    create, jid, job, phones, recipients, server, text_blast, wait_status,
};

/// A start far enough ahead that the worker leaves the job alone during a test.
const LATER: &str = "2999-01-01T00:00:00Z";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_is_created_pending_with_normalised_recipients_and_default_options() {
    let server = server().await;
    server.paired_session("s").await;
    let resp = server
        .post(
            "/api/v1/sessions/s/blast",
            text_blast(
                &["+49 (30) 000-001".into(), "4930000002@s.service.net".into()],
                json!({ "send_at": LATER }),
            ),
        )
        .await
        .expect(201);
    assert_eq!(resp["total"], 2);
    assert_eq!(resp["skipped_dup"], 0);
    assert_eq!(resp["status"], "pending");
    let id = resp["job_id"].as_str().unwrap();
    assert!(is_uuid(id), "{id}");
    let j = job(&server, "s", id).await;
    assert_eq!(j["id"], id);
    assert_eq!(j["session_id"], "s");
    assert_eq!(j["endpoint"], "text");
    assert_eq!(j["status"], "pending");
    assert_eq!(
        j["options"],
        json!({"delay_ms": 1000, "jitter_ms": 0, "max_attempts": 3, "dedup_across_jobs": false})
    );
    for counter in [
        "sent_count",
        "failed_count",
        "dlq_count",
        "skipped_dup_count",
    ] {
        assert_eq!(j[counter], 0, "{counter}");
    }
    assert_eq!(j["send_at"], "2999-01-01T00:00:00Z");
    assert!(j["created_at"].as_str().unwrap().ends_with('Z'), "{j}");
    assert_eq!(j["started_at"], Value::Null);
    assert_eq!(j["finished_at"], Value::Null);
    let rs = recipients(&server, "s", id, None).await;
    let got: Vec<(&str, &str)> = rs
        .iter()
        .map(|r| {
            (
                r["recipient"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("4930000001@s.whatsapp.net", "pending"),
            ("4930000002@s.whatsapp.net", "pending")
        ]
    );
    assert_eq!(rs[0]["id"], 1);
    assert_eq!(rs[0]["attempts"], 0);
    assert_eq!(rs[0]["last_error"], Value::Null);
    assert_eq!(rs[0]["message_id"], Value::Null);
    assert!(rs[0]["updated_at"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_in_the_request_keep_the_first_and_are_recorded_as_skipped_dup() {
    let server = server().await;
    server.paired_session("s").await;
    let p = phones(3);
    let list = vec![
        p[0].clone(),
        p[1].clone(),
        jid(&p[0]),
        format!("+{}", p[1]),
        p[2].clone(),
    ];
    let resp = server
        .post(
            "/api/v1/sessions/s/blast",
            text_blast(&list, json!({ "send_at": LATER })),
        )
        .await
        .expect(201);
    assert_eq!(
        (resp["total"].as_u64(), resp["skipped_dup"].as_u64()),
        (Some(3), Some(2))
    );
    let id = resp["job_id"].as_str().unwrap();
    assert_eq!(job(&server, "s", id).await["skipped_dup_count"], 2);
    let statuses: Vec<String> = recipients(&server, "s", id, None)
        .await
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        statuses,
        [
            "pending",
            "pending",
            "skipped_dup",
            "skipped_dup",
            "pending"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_create_is_refused_and_writes_nothing() {
    let server = TestServer::start_with(|c| c.blasts.max_recipients = 5).await;
    server.paired_session("s").await;
    let ok = || text_blast(&phones(2), json!({}));
    let with = |key: &str, value: Value| {
        let mut b = ok();
        b[key] = value;
        b
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (with("recipients", json!([])), "invalid_field", "recipients"),
        (
            with("recipients", json!(["4930000001", "not a phone"])),
            "invalid_field",
            "recipients[1]",
        ),
        (
            with("recipients", json!(["4930000001", 42])),
            "invalid_field",
            "recipients[1]",
        ),
        (
            with("recipients", json!(["4930000001", "x@unknown.server"])),
            "invalid_field",
            "recipients[1]",
        ),
        (
            with("recipients", json!(phones(6))),
            "invalid_field",
            "recipients",
        ),
        (with("endpoint", json!("fax")), "invalid_field", "endpoint"),
        (with("body", json!("hi")), "invalid_field", "body"),
        (
            with("body", json!({"to": "4930000000"})),
            "invalid_field",
            "body.text",
        ),
        (
            with("body", json!({"text": "hi"})),
            "invalid_field",
            "body.to",
        ),
        (
            with(
                "body",
                json!({"to": "4930000000", "text": "hi", "colour": 1}),
            ),
            "invalid_field",
            "body",
        ),
        (
            with("max_attempts", json!(0)),
            "invalid_field",
            "max_attempts",
        ),
        (with("delay_ms", json!(-1)), "invalid_field", "delay_ms"),
        (
            with("jitter_ms", json!("soon")),
            "invalid_field",
            "jitter_ms",
        ),
        (
            with("send_at", json!("next tuesday")),
            "invalid_field",
            "send_at",
        ),
        (
            with("dedup_across_jobs", json!("yes")),
            "invalid_field",
            "dedup_across_jobs",
        ),
        (with("surprise", json!(true)), "invalid_field", "surprise"),
        (
            json!({"body": {"to": "4930000000", "text": "hi"}, "recipients": ["4930000001"]}),
            "invalid_field",
            "endpoint",
        ),
        (
            json!({"endpoint": "text", "recipients": ["4930000001"]}),
            "invalid_field",
            "body",
        ),
        (
            json!({"endpoint": "text", "body": {"to": "4930000000", "text": "hi"}}),
            "invalid_field",
            "recipients",
        ),
    ];
    for (body, code, field) in cases {
        let resp = server.post("/api/v1/sessions/s/blast", body.clone()).await;
        let message = resp.expect_error(400, code);
        assert!(
            message.contains(&format!("`{field}")),
            "{body} → {message} (expected to name `{field}`)"
        );
    }
    let listed = server.get("/api/v1/sessions/s/blasts").await.expect(200);
    assert_eq!(listed["count"], 0, "nothing was written: {listed}");
    server
        .post("/api/v1/sessions/nobody/blast", ok())
        .await
        .expect_error(404, "session_not_found");
    server.create_session("unpaired").await;
    server
        .post("/api/v1/sessions/unpaired/blast", ok())
        .await
        .expect_error(409, "invalid_session_state");
    assert_eq!(server.get("/api/v1/blasts").await.expect(200)["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_at_inside_the_body_is_ignored_and_the_job_starts_at_once() {
    let server = server().await;
    server.paired_session("s").await;
    let mut body = text_blast(&phones(1), json!({ "delay_ms": 0 }));
    body["body"]["send_at"] = json!(LATER);
    let id = create(&server, "s", body).await;
    wait_status(&server, "s", &id, "completed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_placeholder_to_in_the_body_is_taken_and_each_recipient_gets_the_message() {
    let server = server().await;
    server.paired_session("s").await;
    let mut body = text_blast(&phones(2), json!({ "delay_ms": 0 }));
    body["body"]["to"] = json!("{{recipient}}");
    let id = create(&server, "s", body).await;
    wait_status(&server, "s", &id, "completed").await;
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let to: Vec<&str> = outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["to"].as_str().unwrap())
        .collect();
    assert_eq!(to, [jid(&phones(2)[0]), jid(&phones(2)[1])], "{outbox}");
}
