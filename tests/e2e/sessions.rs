//! The session lifecycle on the simulated network: create, pair by QR code or
//! pair code, disconnect, reconnect, logout, pause, resume, delete.

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

async fn manual_pairing() -> TestServer {
    TestServer::start_with(|c| c.sim.auto_pair = false).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_created_without_an_id_gets_one_and_starts_disconnected() {
    let server = TestServer::start().await;
    let s = server.post_empty("/api/v1/sessions").await.expect(201);
    let id = s["id"].as_str().unwrap();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    assert_eq!(s["status"], "disconnected");
    assert_eq!(s["is_logged_in"], false);
    assert_eq!(s["paused"], false);
    assert_eq!(s["network"], "sim");
    assert!(s["phone_number"].is_null());
    let list = server.get("/api/v1/sessions").await.expect(200);
    assert_eq!(list["count"], 1);
    assert_eq!(list["sessions"][0]["id"], id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connecting_shows_rotating_qr_codes_until_a_scan_logs_the_session_in() {
    let server = manual_pairing().await;
    server
        .post(
            "/api/v1/sessions",
            json!({ "id": "q", "phone": "+49 151 1234 5678" }),
        )
        .await
        .expect(201);
    server
        .get("/api/v1/sessions/q/qr")
        .await
        .expect_error(409, "invalid_session_state");
    server
        .post_empty("/api/v1/sessions/q/connect")
        .await
        .expect(200);
    server.wait_for_status("q", "waiting_for_qr").await;
    let first = server.get("/api/v1/sessions/q/qr").await.expect(200);
    assert!(first["qr"].as_str().unwrap().starts_with("2@"));
    assert!(first["expires_at"].as_i64().unwrap() > 0);
    eventually("a new QR code", || async {
        let now = server.get("/api/v1/sessions/q/qr").await.body;
        (now["qr"] != first["qr"]).then_some(())
    })
    .await;
    let scanned = server
        .post_empty("/api/v1/sim/sessions/q/scan")
        .await
        .expect(200);
    assert_eq!(scanned["phone_number"], "4915112345678");
    let status = server.wait_for_status("q", "logged_in").await;
    assert_eq!(status["is_logged_in"], true);
    assert_eq!(status["phone_number"], "4915112345678");
    assert_eq!(status["jid"], "4915112345678@s.whatsapp.net");
    server
        .get("/api/v1/sessions/q/qr")
        .await
        .expect_error(409, "invalid_session_state");
    server
        .post_empty("/api/v1/sim/sessions/q/scan")
        .await
        .expect_error(409, "invalid_session_state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_by_code_links_the_given_number() {
    let server = manual_pairing().await;
    server.create_session("c").await;
    let pair = server
        .post(
            "/api/v1/sessions/c/pair",
            json!({ "phone_number": "+1 (555) 010-2030" }),
        )
        .await
        .expect(200);
    let code = pair["pair_code"].as_str().unwrap();
    assert_eq!(code.len(), 9, "{code}");
    server.wait_for_status("c", "waiting_for_pair_code").await;
    server
        .post_empty("/api/v1/sim/sessions/c/scan")
        .await
        .expect(200);
    let status = server.wait_for_status("c", "logged_in").await;
    assert_eq!(status["phone_number"], "15550102030");
    server
        .post(
            "/api/v1/sessions/c/pair",
            json!({ "phone_number": "15550102030" }),
        )
        .await
        .expect_error(409, "invalid_session_state");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_validates_the_phone_number_and_refuses_one_in_use() {
    let server = manual_pairing().await;
    server
        .post(
            "/api/v1/sessions",
            json!({ "id": "a", "phone": "15550000001" }),
        )
        .await
        .expect(201);
    server.create_session("b").await;
    server
        .post(
            "/api/v1/sessions/b/pair",
            json!({ "phone_number": "call me" }),
        )
        .await
        .expect_error(400, "invalid_field");
    let msg = server
        .post("/api/v1/sessions/b/pair", json!({}))
        .await
        .expect_error(400, "invalid_field");
    assert!(msg.contains("`phone_number` is required"), "{msg}");
    server
        .post(
            "/api/v1/sessions/b/pair",
            json!({ "phone_number": "15550000001" }),
        )
        .await
        .expect_error(409, "phone_taken");
    server
        .post(
            "/api/v1/sessions",
            json!({ "id": "c", "phone": "1 555 000 0001" }),
        )
        .await
        .expect_error(409, "phone_taken");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_session_reconnects_without_a_new_qr_and_logout_unlinks_it() {
    let server = TestServer::start().await;
    let first = server.paired_session("r").await;
    let disc = server
        .post_empty("/api/v1/sessions/r/disconnect")
        .await
        .expect(200);
    assert_eq!(disc["status"], "disconnected");
    assert_eq!(
        disc["is_logged_in"], true,
        "credentials survive a disconnect"
    );
    server
        .post_empty("/api/v1/sessions/r/connect")
        .await
        .expect(200);
    let again = server.wait_for_status("r", "logged_in").await;
    assert_eq!(again["phone_number"], first["phone_number"]);

    let out = server
        .post_empty("/api/v1/sessions/r/logout")
        .await
        .expect(200);
    assert_eq!(out["status"], "disconnected");
    assert_eq!(out["is_logged_in"], false);
    assert!(out["phone_number"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_out_then_connecting_asks_for_a_qr_code_again() {
    let server = TestServer::start_with(|c| c.sim.auto_pair = false).await;
    server.create_session("l").await;
    server
        .post_empty("/api/v1/sessions/l/connect")
        .await
        .expect(200);
    server.wait_for_status("l", "waiting_for_qr").await;
    server
        .post_empty("/api/v1/sim/sessions/l/scan")
        .await
        .expect(200);
    server.wait_for_status("l", "logged_in").await;
    server
        .post_empty("/api/v1/sessions/l/logout")
        .await
        .expect(200);
    server
        .post_empty("/api/v1/sessions/l/connect")
        .await
        .expect(200);
    server.wait_for_status("l", "waiting_for_qr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_takes_a_session_offline_and_resume_brings_it_back() {
    let server = TestServer::start().await;
    server.paired_session("p").await;
    assert_eq!(
        server
            .post_empty("/api/v1/sessions/p/pause")
            .await
            .expect(200),
        json!({ "paused": true })
    );
    let status = server.get("/api/v1/sessions/p/status").await.expect(200);
    assert_eq!(status["paused"], true);
    assert_eq!(status["status"], "disconnected");
    assert_eq!(status["is_logged_in"], true, "a pause keeps the account");
    server
        .post_empty("/api/v1/sessions/p/connect")
        .await
        .expect_error(409, "session_paused");
    assert_eq!(
        server
            .post_empty("/api/v1/sessions/p/resume")
            .await
            .expect(200),
        json!({ "paused": false })
    );
    let status = server.wait_for_status("p", "logged_in").await;
    assert_eq!(status["paused"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_removes_it_from_the_list() {
    let server = TestServer::start().await;
    server.paired_session("gone").await;
    server.create_session("kept").await;
    server.delete("/api/v1/sessions/gone").await.expect(200);
    let list = server.get("/api/v1/sessions").await.expect(200);
    assert_eq!(list["count"], 1);
    assert_eq!(list["sessions"][0]["id"], "kept");
    server
        .get("/api/v1/sessions/gone")
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sim_session_created_with_a_phone_gets_that_number() {
    let server = TestServer::start().await;
    server
        .post(
            "/api/v1/sessions",
            json!({ "id": "n", "phone": "+44 7700 900123", "name": "Support" }),
        )
        .await
        .expect(201);
    server
        .post_empty("/api/v1/sessions/n/connect")
        .await
        .expect(200);
    let s = server.wait_for_status("n", "logged_in").await;
    assert_eq!(s["phone_number"], "447700900123");
    assert_eq!(s["push_name"], "Support");
    server
        .post("/api/v1/sessions", json!({ "phone": "not a phone" }))
        .await
        .expect_error(400, "invalid_field");
}
