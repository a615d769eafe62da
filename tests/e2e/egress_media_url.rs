//! Media named by `url` in a send, checked by the egress guard before any
//! backend sees it: a URL that leads to an internal address (an IP literal,
//! `localhost`, a name whose DNS answer is internal) is refused with a 400
//! naming `url` and the knob that opens it, alike on every backend; here on
//! the sim, which never fetches, so a listener on 127.0.0.1 shows that
//! nothing reached it and the sim's outbox that nothing was sent. A
//! scheduled send or a blast is refused when it is made, and a scheduled
//! send whose URL turned inward since meets the same refusal when it goes
//! out. The operator
//! opens private addresses on purpose with `MEDIA_URL_ALLOW_PRIVATE`. (The
//! whatsapp backend's own fetch is tested against local listeners in
//! `host/egress/src/fetch.rs`.)

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use switchboard::webhooks::target::StaticHosts;
use switchboard_tests::TestServer;
use tokio::net::TcpListener;

use crate::scheduled::{outbox, soon, wait_for_scheduled};

/// A listener on 127.0.0.1 that counts the connections it accepts.
struct Listener {
    port: u16,
    reached: Arc<AtomicUsize>,
}

impl Listener {
    async fn start() -> Listener {
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let reached = Arc::new(AtomicUsize::new(0));
        let count = reached.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        Listener { port, reached }
    }

    fn reached(&self) -> usize {
        self.reached.load(Ordering::SeqCst)
    }
}

/// A public-looking name the test's DNS table answers with 127.0.0.1.
const INWARD: &str = "media.example.com";

/// A sim gateway resolving names through `hosts`, private media URLs
/// allowed or not, with a paired session `s`.
async fn gateway(hosts: &StaticHosts, allow_private: bool) -> TestServer {
    let hosts = hosts.clone();
    let server = TestServer::start_with(move |c| {
        c.media_urls.static_hosts = Some(hosts);
        c.media_urls.allow_private = allow_private;
    })
    .await;
    server.paired_session("s").await;
    server
}

fn image(url: &str) -> Value {
    json!({ "to": "+1 555 000 0001", "url": url, "caption": "inside" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_media_url_on_an_internal_address_is_refused_before_any_request_and_nothing_is_sent() {
    let hosts = StaticHosts::new();
    hosts.set(INWARD, [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    let server = gateway(&hosts, false).await;
    let listener = Listener::start().await;
    let port = listener.port;
    for (kind, url, says) in [
        (
            "image",
            format!("http://127.0.0.1:{port}/cat.jpg"),
            "internal address 127.0.0.1",
        ),
        (
            "document",
            format!("http://[::ffff:127.0.0.1]:{port}/r.pdf"),
            "internal address",
        ),
        (
            "audio",
            format!("http://localhost:{port}/a.ogg"),
            "host `localhost` resolves only to internal addresses",
        ),
        (
            "video",
            format!("https://{INWARD}:{port}/v.mp4"),
            "host `media.example.com` resolves only to internal addresses (127.0.0.1)",
        ),
    ] {
        let mut body = image(&url);
        match kind {
            "document" => body["filename"] = json!("r.pdf"),
            "audio" => drop(body.as_object_mut().and_then(|b| b.remove("caption"))),
            _ => {}
        }
        let message = server
            .post(&format!("/api/v1/sessions/s/messages/{kind}"), body)
            .await
            .expect_error(400, "invalid_field");
        assert!(message.contains("`url`"), "{kind}: {message}");
        assert!(message.contains(says), "{kind}: {message}");
        assert!(
            message.contains("MEDIA_URL_ALLOW_PRIVATE"),
            "{kind}: {message}"
        );
    }
    assert!(outbox(&server, "s").await.is_empty(), "nothing was sent");
    assert_eq!(listener.reached(), 0, "the listener was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_or_blast_with_an_inward_media_url_is_refused_when_it_is_made() {
    let hosts = StaticHosts::new();
    let server = gateway(&hosts, false).await;
    let listener = Listener::start().await;
    let url = format!("http://127.0.0.1:{}/cat.jpg", listener.port);
    let mut body = image(&url);
    body["send_at"] = json!(soon());
    let message = server
        .post("/api/v1/sessions/s/messages/image", body)
        .await
        .expect_error(400, "invalid_field");
    assert!(message.contains("internal address 127.0.0.1"), "{message}");
    let message = server
        .post(
            "/api/v1/sessions/s/blast",
            json!({ "endpoint": "image", "body": image(&url), "recipients": ["15550000001", "15550000002"] }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(message.contains("internal address 127.0.0.1"), "{message}");
    let listed = server.get("/api/v1/sessions/s/scheduled").await.expect(200);
    assert_eq!(listed["count"], 0, "nothing was scheduled");
    assert_eq!(listener.reached(), 0, "the listener was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_whose_media_url_turns_inward_by_its_time_fails_with_the_refusal() {
    let hosts = StaticHosts::new();
    hosts.set(INWARD, [IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34))]);
    let server = gateway(&hosts, false).await;
    let mut body = image(&format!("https://{INWARD}/cat.jpg"));
    body["send_at"] = json!(soon());
    let scheduled = server
        .post("/api/v1/sessions/s/messages/image", body)
        .await
        .expect(202);
    let id = scheduled["scheduled_id"].as_str().expect("a scheduled id");
    // The record changes before the send is due, as DNS rebinding would.
    hosts.set(INWARD, [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    let item = wait_for_scheduled(&server, "s", id, "failed").await;
    let error = item["last_error"].as_str().expect("a last_error");
    assert!(
        error.contains("resolves only to internal addresses (127.0.0.1)"),
        "the scheduled send says why: {error}"
    );
    assert!(outbox(&server, "s").await.is_empty(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_opens_private_media_urls_on_purpose() {
    let hosts = StaticHosts::new();
    hosts.set(INWARD, [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    let server = gateway(&hosts, true).await;
    for url in [
        "http://127.0.0.1:9/cat.jpg".to_owned(),
        format!("https://{INWARD}/cat.jpg"),
    ] {
        server
            .post("/api/v1/sessions/s/messages/image", image(&url))
            .await
            .expect(200);
    }
    assert_eq!(outbox(&server, "s").await.len(), 2, "both were sent");
}
