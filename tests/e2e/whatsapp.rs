//! The `whatsapp` backend with no network reachable: its websocket URL points
//! at a closed port on 127.0.0.1 and its version is fixed, so nothing tries
//! the internet. A connect fails fast with a clear error, a linked session
//! retries per its reconnect setting, and disconnect and delete still work.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;
use switchboard::domain::session::Account;
use switchboard::store::Store;
use switchboard_tests::{TestServer, eventually};

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

async fn server() -> TestServer {
    let port = closed_port();
    TestServer::start_with(move |c| {
        c.whatsapp.ws_url = Some(format!("ws://127.0.0.1:{port}/ws/chat"));
        c.whatsapp.version = Some((2, 3000, 1));
        c.reconnect.delays = vec![Duration::from_millis(50)];
    })
    .await
}

async fn create(server: &TestServer, id: &str) {
    let body = server
        .post(
            "/api/v1/sessions",
            json!({ "id": id, "network": "whatsapp" }),
        )
        .await
        .expect(201);
    assert_eq!(body["network"], "whatsapp");
    assert_eq!(body["status"], "disconnected");
}

#[tokio::test]
async fn a_whatsapp_session_that_cannot_reach_the_network_says_so_and_goes_on() {
    let server = server().await;
    create(&server, "wa").await;

    let started = Instant::now();
    let msg = server
        .post_empty("/api/v1/sessions/wa/connect")
        .await
        .expect_error(502, "network_error");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the failure is fast"
    );
    assert!(msg.contains("could not connect to WhatsApp"), "{msg}");

    let status = server.get("/api/v1/sessions/wa/status").await.expect(200);
    assert_eq!(status["status"], "disconnected", "{status}");
    assert_eq!(status["is_logged_in"], false);
    let last_error = status["last_error"].as_str().unwrap_or_default();
    assert!(
        last_error.contains("could not connect to WhatsApp"),
        "{status}"
    );

    // No QR code is shown, and the gateway still answers everything else.
    server
        .get("/api/v1/sessions/wa/qr")
        .await
        .expect_error(409, "invalid_session_state");
    server.get("/api/v1/sessions").await.expect(200);

    server
        .post_empty("/api/v1/sessions/wa/disconnect")
        .await
        .expect(200);
    let body = server.delete("/api/v1/sessions/wa").await.expect(200);
    assert_eq!(body["success"], true);
    server
        .get("/api/v1/sessions/wa")
        .await
        .expect_error(404, "session_not_found");
    server.stop().await;
}

/// Marks the stored session as linked and meant to be connected, as a
/// session that paired before a restart is.
async fn link_while_down(dir: std::path::PathBuf) {
    let store = Store::open(&dir).expect("the store opens while the server is down");
    store
        .modify_session("wa", |r| {
            r.account = Some(Account {
                jid: "15550001111@s.whatsapp.net".into(),
                phone: "15550001111".into(),
                push_name: None,
            });
            r.want_connected = true;
        })
        .expect("stored")
        .expect("the session exists");
}

#[tokio::test]
async fn a_linked_whatsapp_session_retries_per_its_reconnect_setting() {
    let mut server = server().await;
    create(&server, "wa").await;
    server.restart_after(link_while_down).await;

    // Restored on start, it fails, and auto-reconnect keeps trying.
    eventually("two failed reconnects", || async {
        let body = server.get("/api/v1/sessions/wa/reconnect").await.body;
        (body["error_count"].as_u64().unwrap_or(0) >= 2).then_some(())
    })
    .await;
    let status = server.get("/api/v1/sessions/wa/status").await.expect(200);
    assert_eq!(
        status["is_logged_in"], true,
        "the credentials are kept: {status}"
    );
    assert!(
        status["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("could not connect"),
        "{status}"
    );

    // Switched off, the retries stop.
    server
        .call(
            Method::PUT,
            "/api/v1/sessions/wa/reconnect",
            Some(json!({ "enabled": false })),
        )
        .await
        .expect(200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let settled = server
        .get("/api/v1/sessions/wa/reconnect")
        .await
        .expect(200)["error_count"]
        .clone();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        server
            .get("/api/v1/sessions/wa/reconnect")
            .await
            .expect(200)["error_count"],
        settled
    );

    server
        .post_empty("/api/v1/sessions/wa/disconnect")
        .await
        .expect(200);
    server.delete("/api/v1/sessions/wa").await.expect(200);
    server.stop().await;
}
