//! Immediate sends across SIGKILL: concurrent `POST …/messages/text` on one
//! sim session, the real binary killed after N answered sends, restarted on
//! the same data directory. Then, against the sim's outbox (what the network
//! received, kept in the sim's own durable table):
//!
//! - every send answered 200 went out exactly once, under the message id
//!   the answer named, and is in the message history;
//! - a message the network has but the gateway never answered is one of
//!   the sends the kill cut off (in flight at it), at most once each.
//!
//! Kill points: at the first answer, mid-load, and with every send held in
//! the sim for a while by its `send_latency_ms` fault, so the kill finds
//! sends inside the network call.

use std::collections::{HashMap, HashSet};

use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::crash::{Intervals, Load, Outcome, Request, Rig, kill_after_answers};

use crate::BINARY;

const SESSION: &str = "sender";

fn text(i: usize) -> String {
    format!("crash send {i}")
}

fn send(i: usize) -> Request {
    Request {
        method: Method::POST,
        path: format!("/api/v1/sessions/{SESSION}/messages/text"),
        body: Some(json!({ "to": format!("4940{i:07}"), "text": text(i) })),
    }
}

async fn sends_killed_after(
    answers: usize,
    senders: usize,
    faults: Option<Value>,
) -> (Rig, Outcome) {
    let mut rig = Rig::start(BINARY, Intervals::Fast).await;
    rig.api().pair(SESSION).await;
    if let Some(f) = faults {
        rig.api().faults(SESSION, f).await;
    }
    let load = Load::start(rig.api(), senders, 1_000, &[200], send);
    let (_, outcome) = kill_after_answers(&mut rig, load, answers).await;
    rig.restart(&[SESSION]).await;
    (rig, outcome)
}

/// The checks after the restart; `kill` says when it came.
async fn check_sent(rig: &Rig, outcome: &Outcome, kill: &str) {
    let outbox = rig.api().outbox(SESSION).await;
    let mut by_text: HashMap<String, Vec<&Value>> = HashMap::new();
    for m in &outbox {
        let t = m["body"]["text"].as_str().expect("a text").to_owned();
        by_text.entry(t).or_default().push(m);
    }
    let recorded: HashSet<String> = rig
        .api()
        .history(SESSION)
        .await
        .iter()
        .filter(|m| m["direction"] == "outbound")
        .map(|m| m["message_id"].as_str().expect("an id").to_owned())
        .collect();
    for a in &outcome.answered {
        let id = a.body["message_id"]
            .as_str()
            .expect("the answer names the id");
        let went = by_text.get(&text(a.index)).map_or(&[][..], Vec::as_slice);
        assert_eq!(
            went.len(),
            1,
            "after a kill {kill}: answered send {} went out {} times: {went:?}",
            a.index,
            went.len()
        );
        assert_eq!(went[0]["message_id"], id, "after a kill {kill}: {}", a.body);
        assert!(
            recorded.contains(id),
            "after a kill {kill}: answered send {} ({id}) is not in the message history",
            a.index
        );
    }
    let answered: HashSet<String> = outcome.answered.iter().map(|a| text(a.index)).collect();
    let in_flight: HashSet<String> = outcome.cut_off.iter().map(|&i| text(i)).collect();
    for (t, went) in &by_text {
        if answered.contains(t) {
            continue;
        }
        assert!(
            in_flight.contains(t) && went.len() == 1,
            "after a kill {kill}: the network got {t:?} {} time(s), yet it was never answered \
             nor in flight at the kill",
            went.len()
        );
    }
    eprintln!(
        "crash_sends: after a kill {kill}: {} answered sends each out once; {} of {} in flight reached the network",
        outcome.answered.len(),
        outbox.len() - outcome.answered.len(),
        outcome.cut_off.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_answered_just_before_a_kill_went_out_once_and_is_in_the_history() {
    let (rig, outcome) = sends_killed_after(1, 2, None).await;
    check_sent(&rig, &outcome, "at the first answer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_mid_load_loses_no_answered_send_and_duplicates_none() {
    let (rig, outcome) = sends_killed_after(120, 8, None).await;
    check_sent(&rig, &outcome, "mid-load").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_while_sends_are_held_inside_the_network_call_loses_no_answered_send() {
    let slow = json!({ "send_latency_ms": 250 });
    let (rig, outcome) = sends_killed_after(10, 6, Some(slow)).await;
    assert!(
        !outcome.cut_off.is_empty(),
        "the kill came while sends were held in the sim"
    );
    check_sent(&rig, &outcome, "while sends were held in the sim").await;
}
