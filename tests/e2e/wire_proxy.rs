//! A session's proxy on the real network, through real proxies (`pproxy`,
//! SOCKS5 and HTTP, each asking for a username and password) in front of
//! the wire server: the session links, logs in and sends media through
//! its proxy, a change reconnects it through the new one, a dead proxy is
//! a connect error that names it with nothing going direct, and the
//! proxy's password is never answered nor kept in plain text.

use base64::Engine as _;
use serde_json::{Value, json};
use switchboard_tests::proxy::{PASSWORD, Proxies, USERNAME, free_port};
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};
use switchboard_tests::{PATIENCE, eventually};

const CUSTOMER: &str = "15550000961";

/// `host:port` of the wire's chat socket.
fn chat_address(w: &Wired) -> String {
    w.wire
        .ws_url()
        .trim_start_matches("ws://")
        .trim_end_matches("/ws/chat")
        .to_owned()
}

/// Creates `id` with `proxy`, connects it, has the phone scan its QR code
/// and waits until it is logged in.
async fn link_through(w: &Wired, id: &str, proxy: Value) {
    let created = w
        .server
        .post(
            "/api/v1/sessions",
            json!({ "id": id, "network": "whatsapp", "proxy": proxy }),
        )
        .await
        .expect(201);
    assert!(
        !created.to_string().contains(PASSWORD),
        "the answer holds no password: {created}"
    );
    w.server
        .post_empty(&format!("/api/v1/sessions/{id}/connect"))
        .await
        .expect(200);
    let path = format!("/api/v1/sessions/{id}/qr");
    let qr = eventually("a QR code", || async {
        let r = w.server.get(&path).await;
        (r.status == 200).then(|| r.body["qr"].as_str().unwrap_or_default().to_owned())
    })
    .await;
    w.wire
        .scan(GATEWAY_PHONE, &qr)
        .expect("the phone scans the QR code");
    w.logged_in(id).await;
}

/// Whether any file of the data directory holds `needle`.
fn data_dir_holds(dir: &std::path::Path, needle: &[u8]) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                return true;
            }
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_behind_a_socks5_proxy_links_and_sends_media_through_it_and_a_change_moves_it_to_an_http_proxy()
 {
    let proxies = Proxies::start().await;
    let w = Wired::start().await;
    let customer = w.customer(CUSTOMER, "Noor").await;
    let chat = chat_address(&w);
    let before = w.wire.accepted_connections();

    link_through(
        &w,
        "wa",
        json!({
            "url": format!("socks5://127.0.0.1:{}", proxies.socks5),
            "username": USERNAME,
            "password": PASSWORD,
        }),
    )
    .await;
    assert!(
        proxies.carried("socks5", &chat) >= 1,
        "the chat socket went through the SOCKS5 proxy: {}",
        proxies.log.text()
    );
    assert_eq!(
        w.wire.accepted_connections() - before,
        proxies.carried("socks5", &chat) as u64,
        "every connection the session made came through the proxy"
    );

    let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    w.server
        .post(
            "/api/v1/sessions/wa/messages/document",
            json!({
                "to": format!("+{CUSTOMER}"),
                "data": base64::engine::general_purpose::STANDARD.encode(&bytes),
                "filename": "report.bin",
            }),
        )
        .await
        .expect(200);
    let media = w.wire.media_host();
    assert!(
        proxies.carried("socks5", &media) >= 1,
        "the upload went through the SOCKS5 proxy: {}",
        proxies.log.text()
    );
    let _ = &customer;

    let shown = w.server.get("/api/v1/sessions/wa/proxy").await.expect(200);
    assert_eq!(
        shown["proxy"],
        json!({ "url": format!("socks5://127.0.0.1:{}", proxies.socks5), "credentials": true }),
        "{shown}"
    );
    assert_eq!(shown["source"], "session", "{shown}");
    assert!(!shown.to_string().contains(PASSWORD), "{shown}");
    assert!(
        !data_dir_holds(w.server.data_dir(), PASSWORD.as_bytes()),
        "no file of the data directory holds the password in plain text"
    );

    let moved = w
        .server
        .put(
            "/api/v1/sessions/wa/proxy",
            json!({
                "url": format!("http://{USERNAME}:{PASSWORD}@127.0.0.1:{}", proxies.http),
            }),
        )
        .await
        .expect(200);
    assert_eq!(moved["reconnected"], true, "{moved}");
    assert_eq!(
        moved["effective"]["url"],
        format!("http://127.0.0.1:{}", proxies.http)
    );
    assert!(!moved.to_string().contains(PASSWORD), "{moved}");
    w.logged_in("wa").await;
    assert!(
        proxies.carried("http", &chat) >= 1,
        "the new connection went through the HTTP proxy: {}",
        proxies.log.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_proxy_is_a_connect_error_naming_it_and_nothing_goes_to_whatsapp_directly() {
    let w = Wired::start().await;
    let dead = free_port();
    w.server
        .post(
            "/api/v1/sessions",
            json!({
                "id": "wa",
                "network": "whatsapp",
                "proxy": { "url": format!("socks5://127.0.0.1:{dead}"), "username": "u", "password": PASSWORD },
            }),
        )
        .await
        .expect(201);
    let out = w.server.post_empty("/api/v1/sessions/wa/connect").await;
    let text = out.body.to_string();
    assert!(
        out.status.as_u16() >= 400,
        "a connect through a dead proxy fails: {} {text}",
        out.status
    );
    assert!(
        text.contains(&format!("socks5://127.0.0.1:{dead}")),
        "the error names the proxy: {text}"
    );
    assert!(!text.contains(PASSWORD), "{text}");
    let status = w.server.get("/api/v1/sessions/wa/status").await.expect(200);
    assert_eq!(status["status"], "disconnected", "{status}");
    tokio::time::sleep(PATIENCE / 10).await;
    assert_eq!(
        w.wire.accepted_connections(),
        0,
        "nothing fell back to a direct connection"
    );

    // A proxy that refuses the credentials is as clear.
    let proxies = Proxies::start().await;
    w.server
        .put(
            "/api/v1/sessions/wa/proxy",
            json!({ "url": format!("socks5://127.0.0.1:{}", proxies.socks5), "username": USERNAME, "password": "wrong" }),
        )
        .await
        .expect(200);
    let refused = w.server.post_empty("/api/v1/sessions/wa/connect").await;
    assert!(refused.status.as_u16() >= 400, "{:?}", refused.body);
    assert!(
        refused.body.to_string().contains("through the proxy"),
        "{}",
        refused.body
    );
    assert_eq!(w.wire.accepted_connections(), 0);
}
