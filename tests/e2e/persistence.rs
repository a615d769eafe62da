//! What survives a restart, and what a delete removes.

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_in_session_comes_back_logged_in_after_a_restart_with_its_messages() {
    let mut server = TestServer::start().await;
    let before = server.paired_session("keep").await;
    server.create_session("idle").await;
    server
        .post(
            "/api/v1/sessions/keep/messages/text",
            json!({ "to": "15550000001", "text": "before" }),
        )
        .await
        .expect(200);
    server.restart().await;
    let after = server.wait_for_status("keep", "logged_in").await;
    assert_eq!(after["phone_number"], before["phone_number"]);
    assert_eq!(after["jid"], before["jid"]);
    let idle = server.get("/api/v1/sessions/idle").await.expect(200);
    assert_eq!(
        idle["status"], "disconnected",
        "a session never connected stays disconnected"
    );
    let history = server
        .get("/api/v1/sessions/keep/messages")
        .await
        .expect(200);
    assert_eq!(history["count"], 1);
    assert_eq!(history["messages"][0]["body"]["text"], "before");
    assert_eq!(
        server
            .get("/api/v1/sim/sessions/keep/outbox")
            .await
            .expect(200)["count"],
        1
    );
    server
        .post(
            "/api/v1/sessions/keep/messages/text",
            json!({ "to": "15550000001", "text": "after" }),
        )
        .await
        .expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnected_session_stays_disconnected_after_a_restart() {
    let mut server = TestServer::start().await;
    server.paired_session("d").await;
    server
        .post_empty("/api/v1/sessions/d/disconnect")
        .await
        .expect(200);
    server.restart().await;
    let s = server.get("/api/v1/sessions/d").await.expect(200);
    assert_eq!(s["status"], "disconnected");
    assert_eq!(s["is_logged_in"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_stays_paused_across_a_restart() {
    let mut server = TestServer::start().await;
    server.paired_session("p").await;
    server
        .post_empty("/api/v1/sessions/p/pause")
        .await
        .expect(200);
    server.restart().await;
    let s = server.get("/api/v1/sessions/p/status").await.expect(200);
    assert_eq!(s["paused"], true);
    assert_eq!(s["status"], "disconnected");
    server
        .post_empty("/api/v1/sessions/p/resume")
        .await
        .expect(200);
    server.wait_for_status("p", "logged_in").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_cascades_to_its_messages_and_outbox() {
    let mut server = TestServer::start().await;
    server.paired_session("x").await;
    server.paired_session("y").await;
    for id in ["x", "y"] {
        server
            .post(
                &format!("/api/v1/sessions/{id}/messages/text"),
                json!({ "to": "15550000001", "text": "hi" }),
            )
            .await
            .expect(200);
    }
    server
        .post(
            "/api/v1/sim/sessions/x/inbound",
            json!({ "from": "15550000002", "text": "in" }),
        )
        .await
        .expect(200);
    eventually("the inbound message stored", || async {
        (server.get("/api/v1/sessions/x/messages").await.body["count"] == 2).then_some(())
    })
    .await;
    server.delete("/api/v1/sessions/x").await.expect(200);
    server.restart().await;
    server
        .get("/api/v1/sessions/x")
        .await
        .expect_error(404, "session_not_found");
    server.create_session("x").await;
    assert_eq!(
        server.get("/api/v1/sessions/x/messages").await.expect(200)["count"],
        0
    );
    assert_eq!(
        server
            .get("/api/v1/sim/sessions/x/outbox")
            .await
            .expect(200)["count"],
        0
    );
    assert_eq!(
        server.get("/api/v1/sessions/y/messages").await.expect(200)["count"],
        1,
        "other sessions keep theirs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_users_survive_a_restart() {
    let mut server = TestServer::start().await;
    server
        .post(
            "/api/v1/sim/users",
            json!({ "phone": "15550001234", "push_name": "Kim", "lid": "777" }),
        )
        .await
        .expect(201);
    server.restart().await;
    let users = server.get("/api/v1/sim/users").await.expect(200);
    assert_eq!(users["count"], 1);
    assert_eq!(users["users"][0]["push_name"], "Kim");
    assert_eq!(users["users"][0]["lid"], "777@lid");
}
