//! Storage faults on a small filesystem the test mounts: the real binary's
//! data directory on a tmpfs of a few MiB, filled with a filler file until
//! the store's writes fail with `ENOSPC`. While full, every write is
//! answered `507 insufficient_storage` (never `502`, never a dropped
//! connection), `/readyz` says the store is down and the metrics count the
//! faults; once the filler is deleted the store reopens itself and takes
//! writes again, without a restart, and nothing answered `200` is lost.

use std::collections::HashSet;
use std::time::Instant;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::TOKEN;
use switchboard_tests::crash::{Api, Intervals, Load, Request, Rig, until};
use switchboard_tests::small_disk::SmallDisk;

use crate::BINARY;

/// The session every scenario injects into.
pub(crate) const SESSION: &str = "disk-a";

/// The environment of a gateway on a small disk: a free-space floor of
/// 1 MiB and a quick reopen backoff.
pub(crate) const SMALL_DISK_ENV: &[(&str, &str)] = &[
    ("SWITCHBOARD_MIN_FREE_SPACE_MB", "1"),
    ("SWITCHBOARD_STORE_REOPEN_BACKOFF_MIN_MS", "20"),
    ("SWITCHBOARD_STORE_REOPEN_BACKOFF_MAX_MS", "200"),
];

pub(crate) fn message_id(round: usize, i: usize) -> String {
    format!("DISK{round}X{i:05}")
}

fn injection(round: usize, i: usize) -> Request {
    Request {
        method: Method::POST,
        path: format!("/api/v1/sim/sessions/{SESSION}/inbound"),
        body: Some(json!({
            "from": "15550002222",
            "text": format!("round {round}, message {i}: {}", "x".repeat(400)),
            "message_id": message_id(round, i),
        })),
    }
}

/// What a flood left: the ids answered `200` (stored) and `507` (refused).
#[derive(Default)]
pub(crate) struct Flood {
    pub stored: Vec<String>,
    pub refused: Vec<String>,
}

/// Injects rounds of concurrent inbound messages until the gateway answers
/// `507`; every request must be answered `200` or `507` (any other status,
/// or no answer at all, fails the test).
pub(crate) async fn flood_until_full(api: &Api, flood: &mut Flood) {
    for round in 0.. {
        let load = Load::start(api, 8, 100, &[200, 507], move |i| injection(round, i));
        let outcome = load.end(Instant::now()).await;
        assert!(
            outcome.cut_off.is_empty(),
            "round {round}: {} request(s) got no answer (a dropped connection)",
            outcome.cut_off.len()
        );
        assert_eq!(
            outcome.answered.len(),
            100,
            "round {round}: every request is answered"
        );
        for a in &outcome.answered {
            let id = message_id(round, a.index);
            if a.status == 200 {
                assert_eq!(a.body["message_id"], id.as_str(), "{a:?}");
                flood.stored.push(id);
            } else {
                assert_eq!(a.body["error"]["code"], "insufficient_storage", "{a:?}");
                flood.refused.push(id);
            }
        }
        if !flood.refused.is_empty() {
            return;
        }
        assert!(round < 200, "the disk never filled");
    }
}

/// Every id answered `200` is stored once; none answered `507` is.
pub(crate) async fn check_history(api: &Api, flood: &Flood) {
    let mut seen: Vec<String> = api
        .history(SESSION)
        .await
        .iter()
        .filter_map(|m| m["message_id"].as_str().map(str::to_owned))
        .collect();
    let all = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), all, "no message is stored twice");
    let seen: HashSet<String> = seen.into_iter().collect();
    let lost: Vec<&String> = flood
        .stored
        .iter()
        .filter(|id| !seen.contains(*id))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} messages answered 200 are lost, e.g. {:?}",
        lost.len(),
        flood.stored.len(),
        &lost[..lost.len().min(5)]
    );
    let kept: Vec<&String> = flood
        .refused
        .iter()
        .filter(|id| seen.contains(*id))
        .collect();
    assert!(
        kept.is_empty(),
        "messages answered 507 were stored: {kept:?}"
    );
}

/// `/readyz`'s status and body.
pub(crate) async fn readiness(api: &Api) -> (u16, Value) {
    api.call(Method::GET, "/readyz", None)
        .await
        .expect("/readyz answers")
}

/// The metrics text.
async fn metrics(api: &Api) -> String {
    api.http()
        .get(format!("{}/metrics", api.base()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("/metrics answers")
        .text()
        .await
        .expect("a metrics body")
}

fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

/// A text send, with its status and body.
async fn send_text(api: &Api, text: &str) -> (u16, Value) {
    api.call(
        Method::POST,
        &format!("/api/v1/sessions/{SESSION}/messages/text"),
        Some(json!({ "to": "15550003333", "text": text })),
    )
    .await
    .expect("a send is answered")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_data_directory_answers_507_and_takes_writes_again_once_space_is_freed() {
    let disk = SmallDisk::mount(16);
    let rig = Rig::start_in(BINARY, Intervals::Fast, SMALL_DISK_ENV, disk.path()).await;
    let api = rig.api().clone();
    api.pair(SESSION).await;
    let (_, sent) = send_text(&api, "before the disk fills").await;
    assert!(sent["message_id"].is_string(), "{sent}");

    let filler = disk.fill();
    let mut flood = Flood::default();
    flood_until_full(&api, &mut flood).await;

    // Full: writes are refused as storage, readiness says so.
    let (status, body) = send_text(&api, "while full").await;
    assert_eq!(status, 507, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_storage", "{body}");
    let (status, ready) = readiness(&api).await;
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["checks"]["store"], "down", "{ready}");
    let text = metrics(&api).await;
    assert!(
        metric(&text, "switchboard_store_faults_total{kind=\"no_space\"}").is_some_and(|n| n > 0.0),
        "{text}"
    );
    assert_eq!(
        metric(&text, "switchboard_store_failing"),
        Some(1.0),
        "{text}"
    );
    assert!(
        metric(&text, "switchboard_store_free_bytes").is_some(),
        "{text}"
    );
    // An upload is refused before a byte of it is stored.
    let up = api
        .http()
        .post(format!("{}/api/v1/sessions/{SESSION}/media", api.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "application/octet-stream")
        .body(vec![7u8; 64 * 1024])
        .send()
        .await
        .expect("the upload is answered");
    assert_eq!(up.status().as_u16(), 507);
    let up: Value = up.json().await.expect("a JSON error");
    assert_eq!(up["error"]["code"], "insufficient_storage", "{up}");

    // Space returns: the store reopens itself, without a restart.
    std::fs::remove_file(&filler).expect("the filler is deleted");
    until("the store to recover", || async {
        readiness(&api).await.0 == 200
    })
    .await;
    let (status, body) = send_text(&api, "after the space returned").await;
    assert_eq!(status, 200, "{body}");
    let after = api
        .expect(
            Method::POST,
            &format!("/api/v1/sim/sessions/{SESSION}/inbound"),
            Some(json!({"from": "15550002222", "text": "back", "message_id": "DISKBACK"})),
            200,
        )
        .await;
    assert_eq!(after["message_id"], "DISKBACK");
    flood.stored.push("DISKBACK".into());
    let text = metrics(&api).await;
    assert_eq!(
        metric(&text, "switchboard_store_failing"),
        Some(0.0),
        "{text}"
    );
    check_history(&api, &flood).await;
    assert!(rig.log().contains("the store recovered"), "{}", rig.log());
    drop(rig);
}
