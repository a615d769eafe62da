//! Helpers shared by the blast tests: a fast-waking server, distinct phone
//! numbers that belong to no session, and waits on a job's state.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::{TestServer, eventually};

/// A server whose blast worker looks at offline sessions again every 50 ms.
pub async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.blasts.offline_retry = Duration::from_millis(50);
        c.blasts.idle_poll = Duration::from_millis(500);
    })
    .await
}

/// `n` distinct phone numbers (digits only) owned by no session.
pub fn phones(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("4930{i:07}")).collect()
}

/// The canonical JID of a phone number.
pub fn jid(phone: &str) -> String {
    format!("{phone}@s.whatsapp.net")
}

/// A text blast body to these recipients with these extra options.
pub fn text_blast(recipients: &[String], options: Value) -> Value {
    let mut body = json!({
        "endpoint": "text",
        "body": { "to": "4930000000", "text": "hello from the blast" },
        "recipients": recipients,
    });
    if let (Some(b), Some(o)) = (body.as_object_mut(), options.as_object()) {
        b.extend(o.clone());
    }
    body
}

/// Creates a blast, expecting 201; returns the job id.
pub async fn create(server: &TestServer, session: &str, body: Value) -> String {
    let created = server
        .post(&format!("/api/v1/sessions/{session}/blast"), body)
        .await
        .expect(201);
    assert_eq!(created["status"], "pending", "{created}");
    created["job_id"].as_str().expect("a job id").to_owned()
}

/// The job, expecting 200.
pub async fn job(server: &TestServer, session: &str, id: &str) -> Value {
    server
        .get(&format!("/api/v1/sessions/{session}/blasts/{id}"))
        .await
        .expect(200)
}

/// Waits until the job satisfies `pred`; returns it.
pub async fn wait_job(
    server: &TestServer,
    session: &str,
    id: &str,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    eventually(&format!("blast {id} {what}"), || async {
        let j = job(server, session, id).await;
        pred(&j).then_some(j)
    })
    .await
}

/// Waits until the job has `status`; returns it.
pub async fn wait_status(server: &TestServer, session: &str, id: &str, status: &str) -> Value {
    wait_job(server, session, id, &format!("to be {status}"), |j| {
        j["status"] == status
    })
    .await
}

/// The job's recipients (up to 1000), optionally of one status.
pub async fn recipients(
    server: &TestServer,
    session: &str,
    id: &str,
    status: Option<&str>,
) -> Vec<Value> {
    let filter = status.map(|s| format!("&status={s}")).unwrap_or_default();
    let body = server
        .get(&format!(
            "/api/v1/sessions/{session}/blasts/{id}/recipients?limit=1000{filter}"
        ))
        .await
        .expect(200);
    let list = body["recipients"].as_array().cloned().expect("recipients");
    assert_eq!(body["count"], list.len(), "{body}");
    list
}

/// The `to` of every message the sim network received from the session, oldest first.
pub async fn outbox_to(server: &TestServer, session: &str) -> Vec<String> {
    outbox(server, session)
        .await
        .iter()
        .map(|m| m["to"].as_str().expect("to").to_owned())
        .collect()
}

/// The sim outbox of the session, oldest first.
pub async fn outbox(server: &TestServer, session: &str) -> Vec<Value> {
    let body = server
        .get(&format!("/api/v1/sim/sessions/{session}/outbox"))
        .await
        .expect(200);
    body["messages"].as_array().cloned().expect("messages")
}

/// Sets the sim's send faults of a session.
pub async fn faults(server: &TestServer, session: &str, faults: Value) {
    server
        .post(&format!("/api/v1/sim/sessions/{session}/faults"), faults)
        .await
        .expect(200);
}
