//! The webhook SSRF guard at delivery time. A host name that looked public
//! at registration and resolves inward when the delivery goes (DNS
//! rebinding) is refused by the delivery client's resolver, counted as
//! `blocked` and dead-lettered; a receiver's redirect is never followed.
//!
//! The gateway answers names from the test-only `static_hosts` table of its
//! webhook configuration: the test changes an answer between registration
//! and delivery, as a DNS record would change, and the guard checks what
//! the table answers exactly as it checks the system's resolver.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use switchboard::webhooks::target::StaticHosts;
use switchboard_tests::receiver::{TestReceiver, add_webhook, dlq, inbound};
use switchboard_tests::{TOKEN, TestServer, eventually};

/// The registered name: public-looking, answered only by the test's table.
const HOST: &str = "hooks.example.com";

/// What `HOST` resolves to at registration (a public address; nothing is
/// ever sent to it, since the answer changes before any event).
const PUBLIC: IpAddr = IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34));

/// A gateway that refuses internal addresses and resolves names through
/// `hosts`; one attempt per delivery, so a refusal dead-letters at once.
async fn guarded_gateway(hosts: &StaticHosts) -> TestServer {
    let hosts = hosts.clone();
    TestServer::start_with(move |c| {
        c.webhooks.allow_private = false;
        c.webhooks.static_hosts = Some(hosts);
        c.webhooks.max_attempts = 1;
        c.webhooks.timeout = Duration::from_secs(2);
    })
    .await
}

/// `switchboard_webhook_deliveries_total{outcome="…"}` from `/metrics`.
async fn deliveries(server: &TestServer, outcome: &str) -> f64 {
    let text = server
        .http()
        .get(format!("{}/metrics", server.base()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("scrape sent")
        .text()
        .await
        .expect("scrape read");
    let key = format!("switchboard_webhook_deliveries_total{{outcome=\"{outcome}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&key))
        .unwrap_or_else(|| panic!("no {key}in:\n{text}"))
        .trim()
        .parse()
        .expect("a number")
}

/// Registers `http://HOST:<port>/hook` for messages while `HOST` resolves
/// publicly (registration must accept it), then makes `HOST` resolve to
/// `inward` and sends one message through; returns the stored URL and the
/// dead-letter entry the refused delivery became. With a `receiver` behind
/// `port`, a delivery that reached it fails the test at once.
async fn rebind_and_deliver(
    server: &TestServer,
    hosts: &StaticHosts,
    port: u16,
    inward: IpAddr,
    receiver: Option<&TestReceiver>,
) -> (String, Value) {
    server.paired_session("s").await;
    let url = format!("http://{HOST}:{port}/hook");
    let hook = add_webhook(server, "s", json!({ "url": url, "events": ["message"] })).await;
    let url = hook["url"].as_str().expect("the stored URL").to_owned();
    hosts.set(HOST, [inward]);
    inbound(server, "s", "turned inward").await;
    // The dead-letter entry is written only after the attempt ended, and a
    // request that got through is recorded before it is answered.
    let entries = eventually("the delivery refused or received", || async {
        let reached = receiver.is_some_and(|rx| rx.count() > 0);
        let entries = dlq(server, "s").await;
        (reached || !entries.is_empty()).then_some(entries)
    })
    .await;
    if let Some(rx) = receiver {
        assert_eq!(rx.count(), 0, "the receiver on {inward} got the delivery");
    }
    assert_eq!(entries.len(), 1, "{entries:?}");
    (url, entries[0].clone())
}

/// Asserts the entry and the counters show one blocked attempt naming `inward`.
async fn assert_blocked(server: &TestServer, url: &str, entry: &Value, inward: IpAddr) {
    assert_eq!(entry["webhook_url"], url, "{entry}");
    let error = entry["last_error"].as_str().expect("a last_error");
    assert!(
        error.contains("internal addresses") && error.contains(&inward.to_string()),
        "the dead-letter entry says why the delivery was refused: {error}"
    );
    assert_eq!(deliveries(server, "blocked").await, 1.0);
    assert_eq!(deliveries(server, "dead_lettered").await, 1.0);
    assert_eq!(
        deliveries(server, "failed").await,
        0.0,
        "a refusal is counted as blocked, not as a failed attempt"
    );
    assert_eq!(deliveries(server, "delivered").await, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_host_that_resolves_to_loopback_at_delivery_is_blocked_and_never_reached() {
    let hosts = StaticHosts::new();
    hosts.set(HOST, [PUBLIC]);
    let server = guarded_gateway(&hosts).await;
    let rx = TestReceiver::start().await;
    let port = reqwest::Url::parse(&rx.url())
        .ok()
        .and_then(|u| u.port())
        .expect("the receiver's port");
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);

    let (url, entry) = rebind_and_deliver(&server, &hosts, port, loopback, Some(&rx)).await;

    assert_blocked(&server, &url, &entry, loopback).await;

    // The same table answering inward at registration is refused there.
    hosts.set("inside.example.com", [loopback]);
    server
        .post(
            "/api/v1/sessions/s/webhooks",
            json!({ "url": format!("http://inside.example.com:{}/hook", port) }),
        )
        .await
        .expect_error(400, "invalid_field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_host_that_resolves_to_a_link_local_address_at_delivery_is_blocked() {
    let hosts = StaticHosts::new();
    hosts.set(HOST, [PUBLIC]);
    let server = guarded_gateway(&hosts).await;
    // The cloud metadata address, the classic SSRF target.
    let metadata = IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254));

    let (url, entry) = rebind_and_deliver(&server, &hosts, 80, metadata, None).await;

    assert_blocked(&server, &url, &entry, metadata).await;
}

/// A receiver that answers every request with `status` and a `Location`
/// pointing at `to`; counts the requests it got.
async fn redirector(status: u16, to: String) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = Router::new().fallback(move || {
        let to = to.clone();
        let counted = counted.clone();
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            let status = StatusCode::from_u16(status).expect("a status");
            (status, [(LOCATION, to)]).into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("redirector binds");
    let addr = listener.local_addr().expect("redirector address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_receivers_redirect_to_a_private_address_is_not_followed_and_fails() {
    // Internal addresses allowed, so the guard would let the redirect's
    // target through: only the no-redirect policy keeps it from the target.
    let server = TestServer::start_with(|c| c.webhooks.max_attempts = 1).await;
    server.paired_session("s").await;
    let private = TestReceiver::start().await;
    // 302 turns the POST into a GET when followed; 307 repeats the signed POST.
    let (found, found_hits) = redirector(302, private.url()).await;
    let (temporary, temporary_hits) = redirector(307, private.url()).await;
    for url in [&found, &temporary] {
        add_webhook(&server, "s", json!({ "url": url, "events": ["message"] })).await;
    }

    inbound(&server, "s", "redirected").await;
    // Both entries are written only after their attempts ended, and a
    // followed redirect reaches the target before that.
    let entries = eventually("both deliveries failed or redirected", || async {
        let entries = dlq(&server, "s").await;
        (private.count() > 0 || entries.len() >= 2).then_some(entries)
    })
    .await;
    assert_eq!(private.count(), 0, "the redirect's target got a delivery");

    for (url, status) in [(&found, "HTTP 302"), (&temporary, "HTTP 307")] {
        let entry = entries
            .iter()
            .find(|e| e["webhook_url"] == url.as_str())
            .unwrap_or_else(|| panic!("no dead-letter entry for {url}: {entries:?}"));
        assert_eq!(
            entry["last_error"], status,
            "a redirect is a failed delivery"
        );
    }
    assert_eq!(found_hits.load(Ordering::SeqCst), 1);
    assert_eq!(temporary_hits.load(Ordering::SeqCst), 1);
    assert_eq!(deliveries(&server, "failed").await, 2.0);
    assert_eq!(deliveries(&server, "blocked").await, 0.0);
    assert_eq!(deliveries(&server, "delivered").await, 0.0);
}
