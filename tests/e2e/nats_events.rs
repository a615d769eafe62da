//! Events out to NATS JetStream, against a real `nats-server -js`: every
//! event reaches the events stream in per-session order with its
//! `Nats-Msg-Id`; an outage of NATS loses nothing and the stream catches up
//! in order; the gateway reports the broker in `/api/v1/nats`, `/readyz`
//! and `/metrics`; a stream whose settings differ is updated and reported.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use async_nats::jetstream::stream;
use serde_json::json;
use switchboard_tests::nats::{NatsServer, Stored, read_stream, wait_for_stream};
use switchboard_tests::{TestServer, eventually};

const EVENTS: &str = "SWITCHBOARD_EVENTS";

async fn gateway(nats: &NatsServer) -> TestServer {
    let url = nats.url();
    TestServer::start_with(move |c| {
        c.nats.servers = vec![url];
        c.nats.retry_base = Duration::from_millis(50);
        c.nats.retry_max = Duration::from_millis(200);
        c.nats.ack_timeout = Duration::from_millis(500);
    })
    .await
}

async fn inject(server: &TestServer, session: &str, text: &str) {
    server
        .post(
            &format!("/api/v1/sim/sessions/{session}/inbound"),
            json!({ "from": "15550001111", "text": text }),
        )
        .await
        .expect(200);
}

/// Waits until the gateway owes the stream nothing more: a repeat, if
/// there were one, would be in it by then.
async fn drained(server: &TestServer) {
    eventually("the outbox to drain into NATS", || async {
        let s = server.get("/api/v1/nats").await.body;
        (s["events"]["pending"] == 0).then_some(())
    })
    .await;
}

/// The texts of the `message` events of `session`, in stream order.
fn texts(stored: &[Stored], session: &str) -> Vec<String> {
    stored
        .iter()
        .filter(|m| m.json["session_id"] == session)
        .map(|m| {
            m.json["data"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_reaches_the_stream_in_session_order_with_its_message_id() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats).await;
    server.paired_session("a").await;
    server.paired_session("b.team").await;
    for n in 0..25 {
        inject(&server, "a", &format!("a {n}")).await;
        inject(&server, "b.team", &format!("b {n}")).await;
    }
    let js = nats.jetstream().await;
    wait_for_stream(&js, EVENTS, "switchboard.events.*.message", 50).await;
    drained(&server).await;
    let stored = read_stream(&js, EVENTS, "switchboard.events.*.message").await;
    assert_eq!(stored.len(), 50, "each event once");
    let want = |p: &str| (0..25).map(|n| format!("{p} {n}")).collect::<Vec<_>>();
    assert_eq!(texts(&stored, "a"), want("a"));
    assert_eq!(texts(&stored, "b.team"), want("b"));
    // A dotted session id is one subject token.
    assert!(
        stored
            .iter()
            .any(|m| m.subject == "switchboard.events.b~team.message")
    );
    let ids: HashSet<_> = stored.iter().filter_map(|m| m.msg_id.clone()).collect();
    assert_eq!(ids.len(), 50, "every event has its own Nats-Msg-Id");
    let mut last: HashMap<String, u64> = HashMap::new();
    for m in &stored {
        let seq: u64 = m.header("Switchboard-Seq").unwrap().parse().unwrap();
        let session = m.header("Switchboard-Session").unwrap().to_owned();
        assert_eq!(m.header("Switchboard-Event"), Some("message"));
        let before = last.insert(session, seq).unwrap_or(0);
        assert!(seq > before, "sequence numbers grow within a session");
    }
    // Connection events went the same way.
    let connected = wait_for_stream(&js, EVENTS, "switchboard.events.a.connected", 1).await;
    assert_eq!(connected[0].json["event"], "connected");

    let status = server.get("/api/v1/nats").await.expect(200);
    assert_eq!(status["configured"], true);
    assert_eq!(status["connected"], true);
    assert!(
        status["events"]["acked"].as_u64().unwrap() >= 50,
        "{status}"
    );
    let streams = status["streams"].as_array().unwrap();
    assert!(
        streams
            .iter()
            .any(|s| s["name"] == EVENTS && s["setup"] == "created")
    );
    assert!(
        streams
            .iter()
            .any(|s| s["name"] == "SWITCHBOARD_SEND" && s["setup"] == "created")
    );
    let ready = server.get("/readyz").await.expect(200);
    assert_eq!(ready["checks"]["nats"], "ok");
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_nats_events_acked_total"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_outage_mid_storm_loses_nothing_and_the_stream_catches_up_in_order() {
    let mut nats = NatsServer::start().await;
    let server = gateway(&nats).await;
    server.paired_session("s").await;
    for n in 0..40 {
        inject(&server, "s", &format!("m {n}")).await;
    }
    let js = nats.jetstream().await;
    wait_for_stream(&js, EVENTS, "switchboard.events.s.message", 40).await;

    nats.kill().await;
    for n in 40..100 {
        inject(&server, "s", &format!("m {n}")).await;
    }
    let waiting = eventually("the outbox to hold events for NATS", || async {
        let s = server.get("/api/v1/nats").await.body;
        (s["connected"] == false && s["events"]["pending"].as_u64() > Some(0)).then_some(s)
    })
    .await;
    assert!(
        waiting["events"]["lag_seconds"].as_f64().is_some(),
        "{waiting}"
    );
    let unready = server.get("/readyz").await;
    assert_eq!(unready.status.as_u16(), 503);
    assert_eq!(unready.body["checks"]["nats"], "down");

    // Several seconds down, then back on the same port and store.
    tokio::time::sleep(Duration::from_secs(3)).await;
    nats.restart().await;
    let js = nats.jetstream().await;
    wait_for_stream(&js, EVENTS, "switchboard.events.s.message", 100).await;
    drained(&server).await;
    let stored = read_stream(&js, EVENTS, "switchboard.events.s.message").await;
    let want: Vec<String> = (0..100).map(|n| format!("m {n}")).collect();
    assert_eq!(
        texts(&stored, "s"),
        want,
        "nothing lost, nothing twice, in order"
    );
    server.get("/readyz").await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_with_other_settings_is_updated_and_the_difference_reported() {
    let nats = NatsServer::start().await;
    let js = nats.jetstream().await;
    js.create_stream(stream::Config {
        name: EVENTS.into(),
        subjects: vec![
            "switchboard.events.>".into(),
            "switchboard.results.>".into(),
        ],
        max_age: Duration::from_secs(60),
        ..Default::default()
    })
    .await
    .expect("a stream made by hand");
    let server = gateway(&nats).await;
    let status = eventually("the streams to be set up", || async {
        let s = server.get("/api/v1/nats").await.body;
        (s["streams"].as_array().map_or(0, Vec::len) == 2).then_some(s)
    })
    .await;
    let events = status["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == EVENTS)
        .unwrap()
        .clone();
    assert_eq!(events["setup"], "updated", "{events}");
    let drift = events["drift"].to_string();
    assert!(drift.contains("max_age"), "{drift}");
    let info = js.get_stream(EVENTS).await.unwrap().cached_info().clone();
    assert_eq!(info.config.max_age, Duration::from_secs(7 * 24 * 3600));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_nats_url_nothing_of_nats_starts_or_shows() {
    let server = TestServer::start().await;
    let status = server.get("/api/v1/nats").await.expect(200);
    assert_eq!(status["configured"], false);
    assert_eq!(status["streams"], json!([]));
    let ready = server.get("/readyz").await.expect(200);
    assert!(ready["checks"].get("nats").is_none(), "{ready}");
    let metrics = server.get_text("/metrics").await;
    assert!(
        !metrics.contains("switchboard_nats_"),
        "no NATS metrics without NATS"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_filter_plugin_decides_what_reaches_the_stream_as_for_webhooks() {
    let nats = NatsServer::start().await;
    let server = gateway(&nats).await;
    server.paired_session("s").await;
    let plugin =
        crate::plugins_support::upload(&server, switchboard_tests::plugins::KEYWORD_ROUTER).await;
    crate::plugins_support::bind(
        &server,
        &plugin,
        "event_filter",
        json!({ "config": { "keywords": ["secret"], "mode": "drop" } }),
    )
    .await;
    inject(&server, "s", "hello").await;
    inject(&server, "s", "a secret plan").await;
    // Published after the dropped one, in order: once it is in the stream,
    // the dropped one would be too.
    inject(&server, "s", "bye").await;
    let js = nats.jetstream().await;
    let stored = wait_for_stream(&js, EVENTS, "switchboard.events.s.message", 2).await;
    assert_eq!(texts(&stored, "s"), ["hello", "bye"]);
}
