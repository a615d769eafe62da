//! The HTTP metrics are recorded before authentication, so a stranger's
//! requests must not be able to add series: hundreds of requests with
//! made-up methods and made-up paths leave the set of HTTP series as a few
//! fixed labels (`other`, `unmatched`), and `/metrics` no larger.

use std::collections::BTreeSet;

use reqwest::Method;
use switchboard_tests::TestServer;

/// The label sets of every `switchboard_http_*` sample.
fn http_series(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with("switchboard_http_requests_total{"))
        .filter_map(|l| l.split_once(' ').map(|(series, _)| series.to_owned()))
        .collect()
}

/// The values a label takes across `series`.
fn label_values(series: &BTreeSet<String>, label: &str) -> BTreeSet<String> {
    let key = format!("{label}=\"");
    series
        .iter()
        .filter_map(|s| {
            let at = s.find(&key)? + key.len();
            let rest = &s[at..];
            rest.find('"').map(|end| rest[..end].to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_methods_and_paths_from_strangers_add_no_metric_series() {
    let server = TestServer::start().await;
    // One of each kind first, so every series the flood could touch exists.
    let probe = |i: usize| {
        let method = Method::from_bytes(format!("PROBE{i}").as_bytes()).unwrap();
        (method, format!("{}/made-up/{i}", server.base()))
    };
    for i in 0..2 {
        let (method, url) = probe(i);
        server
            .http()
            .request(method.clone(), url)
            .send()
            .await
            .unwrap();
        server
            .http()
            .request(method, format!("{}/api/v1/sessions", server.base()))
            .send()
            .await
            .unwrap();
    }
    let before = server.get_text("/metrics").await;
    let series_before = http_series(&before);

    // A few hundred strangers' requests, none with a token.
    for i in 2..302 {
        let (method, url) = probe(i);
        let resp = server
            .http()
            .request(method.clone(), url)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 404);
        let resp = server
            .http()
            .request(method, format!("{}/api/v1/sessions/x{i}", server.base()))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error(), "{}", resp.status());
    }
    let after = server.get_text("/metrics").await;
    let series_after = http_series(&after);

    let methods = label_values(&series_after, "method");
    let known: BTreeSet<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "other",
    ]
    .iter()
    .map(|m| (*m).to_owned())
    .collect();
    assert!(methods.is_subset(&known), "methods: {methods:?}");
    assert!(methods.contains("other"), "methods: {methods:?}");
    let routes = label_values(&series_after, "route");
    assert!(
        routes
            .iter()
            .all(|r| r == "unmatched" || r.starts_with("/")),
        "routes: {routes:?}"
    );
    assert!(
        !routes
            .iter()
            .any(|r| r.contains("made-up") || r.contains("/x")),
        "a raw path became a label: {routes:?}"
    );
    // The flood added at most the one route template it reached
    // (`/api/v1/sessions/{id}`), and nothing per method or path.
    let added: BTreeSet<&String> = series_after.difference(&series_before).collect();
    assert!(
        added.iter().all(|s| (s.contains("method=\"other\"")
            && s.contains("route=\"/api/v1/sessions/{id}\""))
            || s.contains("route=\"/metrics\"")),
        "new series: {added:?}"
    );
    assert!(added.len() <= 3, "new series: {added:?}");
    // And the exposition stayed the size it was, give or take the counts'
    // digits and the series above.
    assert!(
        after.len() < before.len() + 8 * 1024,
        "/metrics grew from {} to {} bytes",
        before.len(),
        after.len()
    );
}
