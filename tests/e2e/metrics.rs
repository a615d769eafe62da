//! Prometheus metrics at `/metrics`: the token on the main listener, none on
//! the separate metrics listener, and the counters moving as the gateway
//! works (a send, a failed webhook delivery, a trapping plugin). The
//! exposition is parsed (OpenMetrics text: families, samples, labels) and
//! read by metric name and labels.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::json;
use switchboard::Config;
use switchboard_tests::plugins::HOSTILE_TRAP;
use switchboard_tests::receiver::{Respond, inbound, message_hook, wait_for_dlq};
use switchboard_tests::{TOKEN, TestServer, eventually};

use crate::plugins_support::{bind, upload, wait_plugin};

/// One sample: its name (with any `_total`/`_bucket` suffix) and labels.
type Key = (String, BTreeMap<String, String>);

/// A parsed exposition: every sample's value, and each family's type.
#[derive(Debug)]
struct Exposition {
    samples: BTreeMap<Key, f64>,
    types: BTreeMap<String, String>,
}

impl Exposition {
    /// Parses OpenMetrics text; panics on any line it cannot read, on a
    /// sample of an undeclared family, on a repeated sample and on a missing `# EOF`.
    #[track_caller]
    fn parse(text: &str) -> Exposition {
        let mut samples = BTreeMap::new();
        let mut types = BTreeMap::new();
        let mut eof = false;
        for line in text.lines() {
            assert!(!eof, "text after # EOF: {line}");
            if line == "# EOF" {
                eof = true;
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("# TYPE name type");
                types.insert(name.to_owned(), kind.to_owned());
            } else if line.starts_with("# HELP ") || line.starts_with("# UNIT ") {
                // Descriptions only: no sample.
            } else {
                let (key, value) = sample(line);
                let family = types
                    .keys()
                    .filter(|f| key.0.starts_with(f.as_str()))
                    .max_by_key(|f| f.len())
                    .unwrap_or_else(|| panic!("sample of an undeclared family: {line}"));
                let suffix = &key.0[family.len()..];
                assert!(
                    ["", "_total", "_created", "_bucket", "_sum", "_count"].contains(&suffix),
                    "`{}` is not a sample name of family `{family}`",
                    key.0
                );
                assert!(
                    samples.insert(key, value).is_none(),
                    "repeated sample: {line}"
                );
            }
        }
        assert!(eof, "the exposition ends with # EOF");
        Exposition { samples, types }
    }

    /// The sample `name` whose labels include `labels` (exactly one must match); 0 when none.
    #[track_caller]
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let matching: Vec<_> = self
            .samples
            .iter()
            .filter(|((n, l), _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(v))
            })
            .collect();
        assert!(
            matching.len() <= 1,
            "{name} {labels:?} matches {matching:?}"
        );
        matching.first().map_or(0.0, |(_, v)| **v)
    }
}

/// `name{a="x",b="y"} value` → ((name, labels), value).
#[track_caller]
fn sample(line: &str) -> (Key, f64) {
    let (head, value) = line
        .rsplit_once(' ')
        .unwrap_or_else(|| panic!("no value: {line}"));
    let value: f64 = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
    };
    let Some((name, labels)) = head.split_once('{') else {
        return ((head.to_owned(), BTreeMap::new()), value);
    };
    let mut rest = labels
        .strip_suffix('}')
        .unwrap_or_else(|| panic!("unclosed labels: {line}"));
    let mut out = BTreeMap::new();
    while !rest.is_empty() {
        let (label, after) = rest
            .split_once("=\"")
            .unwrap_or_else(|| panic!("bad label: {line}"));
        let mut text = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => text.push('\n'),
                    Some((_, c)) => text.push(c),
                    None => panic!("bad escape: {line}"),
                },
                Some((i, '"')) => break i,
                Some((_, c)) => text.push(c),
                None => panic!("unterminated label value: {line}"),
            }
        };
        assert!(
            out.insert(label.to_owned(), text).is_none(),
            "repeated label: {line}"
        );
        rest = after[end + 1..]
            .strip_prefix(',')
            .unwrap_or(&after[end + 1..]);
    }
    ((name.to_owned(), out), value)
}

/// Scrapes `/metrics` with the token and parses it.
async fn scrape(server: &TestServer) -> Exposition {
    let resp = server
        .http()
        .get(format!("{}/metrics", server.base()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("scrape sent");
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    Exposition::parse(&resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_on_the_main_listener_need_the_token() {
    let server = TestServer::start().await;
    let resp = server
        .http()
        .get(format!("{}/metrics", server.base()))
        .send()
        .await
        .unwrap();
    let resp = TestServer::read(resp).await;
    assert_eq!(resp.headers["www-authenticate"], "Bearer");
    resp.expect_error(401, "unauthorized");
    let m = scrape(&server).await;
    assert_eq!(m.types["switchboard_http_requests"], "counter");
    assert_eq!(
        m.types["switchboard_http_request_duration_seconds"],
        "histogram"
    );
    assert_eq!(m.value("switchboard_blast_worker_up", &[]), 1.0);
    assert_eq!(
        m.value("switchboard_sessions", &[("status", "logged_in")]),
        0.0
    );
    let refused = [("method", "GET"), ("route", "/metrics"), ("status", "401")];
    assert_eq!(m.value("switchboard_http_requests_total", &refused), 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_separate_metrics_listener_serves_them_without_a_token_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    config.api_token = Some(TOKEN.into());
    let running = switchboard::start(config).await.expect("server starts");
    let at = running.metrics_addr().expect("a metrics listener");
    assert_ne!(at, running.local_addr());
    let http = switchboard_tests::http_client();
    let resp = http
        .get(format!("http://{at}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let m = Exposition::parse(&resp.text().await.unwrap());
    assert!(
        m.types.contains_key("switchboard_webhook_deliveries"),
        "{:?}",
        m.types
    );
    for path in ["/api/v1/sessions", "/livez", "/api/v1/openapi.json"] {
        let resp = http
            .get(format!("http://{at}{path}"))
            .bearer_auth(TOKEN)
            .send()
            .await;
        assert_eq!(
            resp.unwrap().status(),
            404,
            "{path} is not on the metrics listener"
        );
    }
    let main = http
        .get(format!("{}/metrics", running.base_url()))
        .send()
        .await;
    assert_eq!(
        main.unwrap().status(),
        401,
        "the main listener still wants the token"
    );
    running.shutdown().await.expect("clean shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_send_is_counted_by_route_template_and_status_and_timed() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let before = scrape(&server).await;
    let send = |text: &str, to: &str| {
        server.post(
            "/api/v1/sessions/s/messages/text",
            json!({ "to": to, "text": text }),
        )
    };
    send("hello", "+15550002222").await.expect(200);
    send("again", "+15550002222").await.expect(200);
    send("to nobody", "not a number").await.expect(400);
    server.get("/no/such/route").await.expect(404);
    let after = scrape(&server).await;

    let route = "/api/v1/sessions/{id}/messages/{kind}";
    let moved = |name: &str, labels: &[(&str, &str)]| {
        after.value(name, labels) - before.value(name, labels)
    };
    let ok = [("method", "POST"), ("route", route), ("status", "200")];
    let bad = [("method", "POST"), ("route", route), ("status", "400")];
    assert_eq!(moved("switchboard_http_requests_total", &ok), 2.0);
    assert_eq!(moved("switchboard_http_requests_total", &bad), 1.0);
    let timed = [("method", "POST"), ("route", route)];
    assert_eq!(
        moved("switchboard_http_request_duration_seconds_count", &timed),
        3.0
    );
    assert!(moved("switchboard_http_request_duration_seconds_sum", &timed) > 0.0);
    let all = [("method", "POST"), ("route", route), ("le", "+Inf")];
    assert_eq!(
        moved("switchboard_http_request_duration_seconds_bucket", &all),
        3.0
    );
    let unmatched = [("method", "GET"), ("route", "unmatched"), ("status", "404")];
    assert_eq!(moved("switchboard_http_requests_total", &unmatched), 1.0);
    // Raw paths never become labels: the series stay bounded.
    let routes: BTreeSet<&str> = after
        .samples
        .keys()
        .filter_map(|(_, l)| l.get("route").map(String::as_str))
        .collect();
    assert!(
        !routes.iter().any(|r| r.contains("/sessions/s/")),
        "{routes:?}"
    );
    assert_eq!(
        after.value("switchboard_sessions", &[("status", "logged_in")]),
        1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_webhook_delivery_is_counted_as_failed_retried_and_dead_lettered() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![Duration::from_millis(20)];
    })
    .await;
    server.paired_session("s").await;
    let receiver = message_hook(&server, "s").await;
    receiver.set(Respond::Status(500));
    let before = scrape(&server).await;
    inbound(&server, "s", "nobody home").await;
    wait_for_dlq(&server, "s", 1).await;
    assert_eq!(receiver.count(), 2, "two attempts, then the DLQ");

    let after = eventually("the dead-letter counted", || async {
        let m = scrape(&server).await;
        (m.value("switchboard_webhook_dlq_entries", &[]) == 1.0).then_some(m)
    })
    .await;
    let moved = |name: &str, labels: &[(&str, &str)]| {
        after.value(name, labels) - before.value(name, labels)
    };
    let deliveries = "switchboard_webhook_deliveries_total";
    assert_eq!(moved(deliveries, &[("outcome", "failed")]), 2.0);
    assert_eq!(moved(deliveries, &[("outcome", "dead_lettered")]), 1.0);
    assert_eq!(moved(deliveries, &[("outcome", "delivered")]), 0.0);
    assert_eq!(moved("switchboard_webhook_retries_total", &[]), 1.0);
    assert!(moved("switchboard_events_received_total", &[]) >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapping_plugin_moves_its_trap_and_call_counters() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let p = upload(&server, HOSTILE_TRAP).await;
    bind(&server, &p, "event_filter", json!({})).await;
    let id = p["id"].as_str().unwrap().to_owned();
    let labels = [("plugin", p["name"].as_str().unwrap()), ("id", id.as_str())];
    let before = scrape(&server).await;
    let listed = |m: &Exposition| {
        m.samples
            .keys()
            .any(|(n, l)| n == "switchboard_plugin_traps_total" && l.get("id") == Some(&id))
    };
    assert!(
        listed(&before),
        "a loaded plugin has its series from the start"
    );
    assert_eq!(before.value("switchboard_plugin_traps_total", &labels), 0.0);
    assert_eq!(before.types["switchboard_plugin_traps"], "counter");

    inbound(&server, "s", "m1").await;
    inbound(&server, "s", "m2").await;
    let api = wait_plugin(&server, &p, "to trap twice", |p| {
        p["counters"]["traps"] == 2
    })
    .await;
    let after = scrape(&server).await;
    assert_eq!(after.value("switchboard_plugin_traps_total", &labels), 2.0);
    assert_eq!(
        after.value("switchboard_plugin_calls_total", &labels),
        api["counters"]["calls"].as_f64().unwrap(),
        "the metric and the API read the same counter"
    );
    assert_eq!(
        after.value("switchboard_plugin_timeouts_total", &labels),
        0.0
    );
}
