//! Helpers of the group tests: paired sessions, creating a group, paths and
//! reading roles.

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::{Resp, TestServer};

/// The JID of a session's account.
pub fn jid(session: &Value) -> String {
    session["jid"]
        .as_str()
        .expect("a paired session")
        .to_owned()
}

/// `/api/v1/sessions/{id}/groups/{group}{rest}`.
pub fn path(id: &str, group: &str, rest: &str) -> String {
    format!("/api/v1/sessions/{id}/groups/{group}{rest}")
}

/// Creates a group as `owner` with `participants`; returns its JID.
pub async fn create(server: &TestServer, owner: &str, name: &str, participants: &[&str]) -> String {
    let body = server
        .post(
            &format!("/api/v1/sessions/{owner}/groups"),
            json!({ "name": name, "participants": participants }),
        )
        .await
        .expect(201);
    body["group_jid"].as_str().expect("a group jid").to_owned()
}

/// Get Group Info as `id` (must succeed).
pub async fn info(server: &TestServer, id: &str, group: &str) -> Value {
    server.get(&path(id, group, "/info")).await.expect(200)
}

/// The role of `member` in a group info, if it is a participant.
pub fn role(info: &Value, member: &str) -> Option<String> {
    info["participants"]
        .as_array()?
        .iter()
        .find(|p| p["jid"] == member)
        .map(|p| p["role"].as_str().unwrap_or_default().to_owned())
}

/// A request with a JSON body and any method.
pub async fn send(server: &TestServer, method: Method, path: &str, body: Value) -> Resp {
    server.call(method, path, Some(body)).await
}

/// PUT with a JSON body.
pub async fn put(server: &TestServer, path: &str, body: Value) -> Resp {
    send(server, Method::PUT, path, body).await
}

/// The statuses of an add or remove answer, in order.
pub fn statuses(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Registers an outside user of the simulated network.
pub async fn register_user(server: &TestServer, phone: &str) {
    server
        .post("/api/v1/sim/users", json!({ "phone": phone }))
        .await
        .expect(201);
}
