//! The broker across SIGKILL of the real binary, against a real
//! `nats-server -js`:
//!
//! - events: a storm of inbound messages over two sessions, the gateway
//!   killed mid-storm and restarted on its directory; the events stream
//!   then holds every injection the gateway answered exactly once (the
//!   republished window is removed by JetStream's duplicate window);
//! - commands: a queue of send commands, the gateway killed while it works
//!   through them; after the restart every command has one result and the
//!   sim's network received each command's message exactly once (a command
//!   delivered again after its send is recognised, not sent twice). NATS is
//!   frozen just before the kill, so the kill finds a command sent but not
//!   yet answered.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use reqwest::Method;
use serde_json::json;
use switchboard_tests::crash::{Intervals, Load, Request, Rig, kill_after_answers, until};
use switchboard_tests::nats::{NatsServer, STREAM_PATIENCE, read_stream, wait_for_stream};

use crate::BINARY;

const EVENTS: &str = "SWITCHBOARD_EVENTS";

async fn rig(nats: &NatsServer) -> Rig {
    let url = nats.url();
    Rig::start_with_env(
        BINARY,
        Intervals::Fast,
        &[
            ("SWITCHBOARD_NATS_URL", url.as_str()),
            ("SWITCHBOARD_NATS_RETRY_BASE_MS", "50"),
            ("SWITCHBOARD_NATS_RETRY_MAX_MS", "200"),
            // A command in flight at the kill comes back within 3 s.
            ("SWITCHBOARD_NATS_COMMAND_ACK_WAIT_SECS", "3"),
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_kill_mid_storm_the_stream_holds_every_answered_event_exactly_once() {
    let nats = NatsServer::start().await;
    let mut rig = rig(&nats).await;
    for s in ["a", "b"] {
        rig.api().pair(s).await;
    }
    let load = Load::start(rig.api(), 16, 1_500, &[200], |i| Request {
        method: Method::POST,
        path: format!("/api/v1/sim/sessions/{}/inbound", ["a", "b"][i % 2]),
        body: Some(json!({ "from": "15550001111", "text": format!("storm {i}") })),
    });
    let (_, outcome) = kill_after_answers(&mut rig, load, 400).await;
    rig.restart(&["a", "b"]).await;

    let answered: Vec<String> = outcome
        .answered
        .iter()
        .map(|a| a.body["message_id"].as_str().unwrap().to_owned())
        .collect();
    let js = nats.jetstream().await;
    // The stream may also hold injections the kill cut off before their
    // answer: wait for every answered one, then count.
    let deadline = tokio::time::Instant::now() + STREAM_PATIENCE;
    loop {
        let stored = read_stream(&js, EVENTS, "switchboard.events.*.message").await;
        let ids: HashSet<&str> = stored
            .iter()
            .filter_map(|m| m.json["data"]["message_id"].as_str())
            .collect();
        let missing: Vec<&String> = answered
            .iter()
            .filter(|id| !ids.contains(id.as_str()))
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} of {} answered injections missing from the stream, e.g. {:?}\n{}",
            missing.len(),
            answered.len(),
            &missing[..missing.len().min(3)],
            rig.log()
        );
        // Polls the stream, with the deadline above.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // Once the outbox owes nothing more, a repeat would be in the stream.
    until("the outbox to drain into NATS", || async {
        rig.api().get("/api/v1/nats").await["events"]["pending"] == 0
    })
    .await;
    let stored = read_stream(&js, EVENTS, "switchboard.events.*.message").await;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for m in &stored {
        *seen
            .entry(m.json["data"]["message_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "events stored twice: {twice:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_kill_mid_queue_every_command_is_answered_once_and_sent_once() {
    let nats = NatsServer::start().await;
    let mut rig = rig(&nats).await;
    rig.api().pair("s").await;
    // Each send is held in the sim a while, so the kill finds some inside it.
    rig.api()
        .faults("s", json!({ "send_latency_ms": 20 }))
        .await;
    let js = nats.jetstream().await;
    const N: usize = 60;
    for i in 0..N {
        js.publish(
            "switchboard.send.s",
            Bytes::from(
                json!({"kind": "text", "request_id": format!("c{i}"), "to": "4940000001",
                       "text": format!("command {i}")})
                .to_string(),
            ),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    until("some commands to be sent", || async {
        rig.api().outbox_len("s").await.is_some_and(|n| n >= 15)
    })
    .await;
    // NATS hangs: a command whose send went out cannot be answered or
    // acknowledged; the kill finds it so, and NATS delivers it again.
    nats.pause().await;
    until("a command sent but not answered", || async {
        let sent = rig.api().outbox_len("s").await.unwrap_or(0);
        let answered = rig.api().get("/api/v1/nats").await["commands"]["succeeded"]
            .as_u64()
            .unwrap_or(0) as usize;
        sent > answered
    })
    .await;
    rig.kill().await;
    nats.resume().await;
    rig.restart(&["s"]).await;

    let results = wait_for_stream(&js, EVENTS, "switchboard.results.s", N).await;
    let mut by_request: HashMap<String, usize> = HashMap::new();
    for r in &results {
        assert_eq!(r.json["ok"], true, "{}", r.json);
        *by_request
            .entry(r.json["request_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(by_request.len(), N, "one result per command");
    assert!(by_request.values().all(|n| *n == 1), "{by_request:?}");
    let outbox = rig.api().outbox("s").await;
    let mut texts: HashMap<String, usize> = HashMap::new();
    for m in &outbox {
        *texts
            .entry(m["body"]["text"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(texts.len(), N, "every command went out");
    assert!(
        texts.values().all(|n| *n == 1),
        "a command went out twice: {texts:?}"
    );
}
