//! The `whatsapp` backend with no network reachable: its websocket URL points
//! at a closed port on 127.0.0.1 and its version is fixed, so nothing tries
//! the internet. A connect fails fast with a clear error, a linked session
//! retries per its reconnect setting, and disconnect and delete still work.

use std::time::Duration;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whatsapp_session_that_cannot_reach_the_network_says_so_and_goes_on() {
    let server = server().await;
    create(&server, "wa").await;

    // The deadline only keeps a hanging connect from hanging the suite.
    let msg = tokio::time::timeout(
        Duration::from_secs(120),
        server.post_empty("/api/v1/sessions/wa/connect"),
    )
    .await
    .expect("the connect answers")
    .expect_error(502, "network_error");
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

/// Marks the stored sessions `wa` and `wb` as linked and meant to be
/// connected, as sessions that paired before a restart are.
async fn link_while_down(dir: std::path::PathBuf) {
    let store = Store::open(&dir).expect("the store opens while the server is down");
    for (id, phone) in [("wa", "15550001111"), ("wb", "15550002222")] {
        store
            .modify_session(id, |r| {
                r.account = Some(Account {
                    jid: format!("{phone}@s.whatsapp.net"),
                    phone: phone.into(),
                    push_name: None,
                });
                r.want_connected = true;
            })
            .expect("stored")
            .expect("the session exists");
    }
}

/// A session's failed automatic reconnects so far.
async fn failed_reconnects(server: &TestServer, id: &str) -> u64 {
    server
        .get(&format!("/api/v1/sessions/{id}/reconnect"))
        .await
        .expect(200)["error_count"]
        .as_u64()
        .expect("a count")
}

/// Waits until `wb`, which keeps retrying, has failed `more` further
/// reconnects: time for as many retries of any other session to show.
async fn control_retries(server: &TestServer, more: u64) {
    let from = failed_reconnects(server, "wb").await;
    eventually("the control session to retry", || async {
        (failed_reconnects(server, "wb").await >= from + more).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_whatsapp_session_retries_per_its_reconnect_setting() {
    let mut server = server().await;
    create(&server, "wa").await;
    create(&server, "wb").await;
    server.restart_after(link_while_down).await;

    // Restored on start, it fails, and auto-reconnect keeps trying.
    eventually("two failed reconnects", || async {
        (failed_reconnects(&server, "wa").await >= 2).then_some(())
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

    // Switched off, the retries stop. `wb` keeps retrying on the same
    // schedule: once it has retried a few times, an attempt of `wa` already
    // under way has ended, and once it has retried a few times more, `wa`
    // would have retried too were it still on.
    let off = server
        .call(
            Method::PUT,
            "/api/v1/sessions/wa/reconnect",
            Some(json!({ "enabled": false })),
        )
        .await
        .expect(200);
    assert_eq!(off["enabled"], false, "{off}");
    control_retries(&server, 3).await;
    let settled = failed_reconnects(&server, "wa").await;
    control_retries(&server, 3).await;
    assert_eq!(
        failed_reconnects(&server, "wa").await,
        settled,
        "no retries once switched off"
    );

    for id in ["wa", "wb"] {
        server
            .post_empty(&format!("/api/v1/sessions/{id}/disconnect"))
            .await
            .expect(200);
        server
            .delete(&format!("/api/v1/sessions/{id}"))
            .await
            .expect(200);
    }
    server.stop().await;
}
