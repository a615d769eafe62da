//! Scheduled sends across SIGKILL: the real binary killed while sends are
//! being scheduled, while due sends are going out, and while one is held
//! inside the network call; restarted on the same data directory. The spec
//! promises "sent late, never twice": the message id is chosen when the send
//! is scheduled, and a send found `sending` at start is checked with the
//! network (the sim can tell) before it is sent again. So after each restart:
//!
//! - every send answered 202 becomes `sent`, and the sim's outbox has it
//!   exactly once, under the id its record names;
//! - every message in the outbox is one of the scheduled sends; one whose
//!   request the kill cut off (it may have been stored) at most once.
//!
//! The scheduler has no interval of its own to shorten (it sleeps until the
//! earliest due send, with a 5-minute guard against clock jumps), so every
//! scenario here runs on production settings, and the first checks that the
//! due time itself wakes the restarted scheduler: the sends go out within
//! seconds of it.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use switchboard::domain::time::{iso8601, unix_now};
use switchboard_tests::crash::{
    Api, Intervals, Load, Request, Rig, kill_after_answers, until, within,
};

use crate::BINARY;

const SESSION: &str = "planner";

/// ISO-8601 UTC of the whole second `secs` from now.
fn in_secs(secs: i64) -> String {
    iso8601(unix_now() + secs)
}

fn text(i: usize) -> String {
    format!("scheduled crash {i}")
}

fn schedule(i: usize, at: &str) -> Request {
    Request {
        method: Method::POST,
        path: format!("/api/v1/sessions/{SESSION}/messages/text"),
        body: Some(json!({ "to": format!("4960{i:07}"), "text": text(i), "send_at": at })),
    }
}

/// Schedules `n` sends due at `at`, one after another; returns their ids.
async fn schedule_all(api: &Api, n: usize, at: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let r = schedule(i, at);
        let answer = api.expect(r.method, &r.path, r.body, 202).await;
        ids.push(answer["scheduled_id"].as_str().expect("an id").to_owned());
    }
    ids
}

async fn scheduled(api: &Api, id: &str) -> Value {
    api.get(&format!("/api/v1/sessions/{SESSION}/scheduled/{id}"))
        .await
}

/// After a restart: each of `owed` (index, scheduled id) becomes `sent` and
/// reached the network exactly once under its id; nothing else went out but
/// the sends in `cut_off` (indices), at most once each.
async fn check_sent_once(api: &Api, owed: &[(usize, String)], cut_off: &[usize], kill: &str) {
    for (_, id) in owed {
        until(&format!("scheduled send {id} to be sent"), || async {
            let s = scheduled(api, id).await;
            assert!(
                s["status"] == "scheduled" || s["status"] == "sending" || s["status"] == "sent",
                "after a kill {kill}: {s}"
            );
            s["status"] == "sent"
        })
        .await;
    }
    let outbox = api.outbox(SESSION).await;
    let mut by_text: HashMap<&str, Vec<&Value>> = HashMap::new();
    for m in &outbox {
        by_text
            .entry(m["body"]["text"].as_str().expect("a text"))
            .or_default()
            .push(m);
    }
    for (i, id) in owed {
        let s = scheduled(api, id).await;
        let went = by_text.remove(text(*i).as_str()).unwrap_or_default();
        assert_eq!(
            went.len(),
            1,
            "after a kill {kill}: scheduled send {i} went out {} times: {went:?}",
            went.len()
        );
        assert_eq!(
            went[0]["message_id"], s["message_id"],
            "after a kill {kill}: the id chosen when it was scheduled: {s}"
        );
    }
    let cut: Vec<String> = cut_off.iter().map(|&i| text(i)).collect();
    for (t, went) in by_text {
        assert!(
            cut.iter().any(|c| c == t) && went.len() == 1,
            "after a kill {kill}: the network got {t:?} {} time(s), yet it was never scheduled \
             (or was scheduled and answered, and counted above)",
            went.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_scheduled_up_to_a_kill_go_out_once_when_due_after_the_restart() {
    let mut rig = Rig::start(BINARY, Intervals::Production).await;
    rig.api().pair(SESSION).await;
    let at = in_secs(4);
    let due = unix_now() + 4;
    let at_load = at.clone();
    let load = Load::start(rig.api(), 4, 200, &[202], move |i| schedule(i, &at_load));
    let (_, outcome) = kill_after_answers(&mut rig, load, 10).await;
    rig.restart(&[SESSION]).await;
    let owed: Vec<(usize, String)> = outcome
        .answered
        .iter()
        .map(|a| {
            assert_eq!(a.body["status"], "scheduled", "{}", a.body);
            let id = a.body["scheduled_id"].as_str().expect("an id").to_owned();
            (a.index, id)
        })
        .collect();
    // The restarted scheduler sleeps until the earliest due send; nothing but
    // that due time wakes it (its guard is 5 minutes), so the sends go out
    // within seconds of it.
    let api = rig.api().clone();
    let last = &owed.last().expect("answered schedules").1;
    let due_in = Duration::from_secs(due.saturating_sub(unix_now()).max(0) as u64);
    within(
        "the scheduled sends to go out once due",
        due_in + Duration::from_secs(20),
        || async { scheduled(&api, last).await["status"] == "sent" },
    )
    .await;
    check_sent_once(
        rig.api(),
        &owed,
        &outcome.cut_off,
        "while sends were being scheduled",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn due_sends_killed_mid_sequence_go_out_once_each_after_the_restart() {
    let mut rig = Rig::start(BINARY, Intervals::Production).await;
    rig.api().pair(SESSION).await;
    // A little latency per send, so the sequence of due sends takes a while
    // and the kill lands inside it.
    rig.api()
        .faults(SESSION, json!({ "send_latency_ms": 40 }))
        .await;
    let ids = schedule_all(rig.api(), 30, &in_secs(2)).await;
    let api = rig.api().clone();
    until("the sim to show 8 scheduled sends out", || async {
        api.outbox_len(SESSION).await.is_some_and(|n| n >= 8)
    })
    .await;
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    let owed: Vec<(usize, String)> = ids.into_iter().enumerate().collect();
    check_sent_once(rig.api(), &owed, &[], "mid-sequence").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_killed_inside_the_network_call_is_sent_once_under_its_id() {
    let mut rig = Rig::start(BINARY, Intervals::Production).await;
    rig.api().pair(SESSION).await;
    // Each send waits 500 ms in the sim before the network takes it: the
    // kill comes once the first is `sending` and the sim has nothing yet.
    rig.api()
        .faults(SESSION, json!({ "send_latency_ms": 500 }))
        .await;
    let ids = schedule_all(rig.api(), 3, &in_secs(2)).await;
    let api = rig.api().clone();
    until("a scheduled send to be sending", || async {
        let listed = api
            .get(&format!(
                "/api/v1/sessions/{SESSION}/scheduled?status=sending"
            ))
            .await;
        listed["count"].as_u64() >= Some(1)
    })
    .await;
    assert_eq!(
        rig.api().outbox_len(SESSION).await,
        Some(0),
        "the kill comes while the first send is inside the network call"
    );
    rig.kill().await;
    rig.restart(&[SESSION]).await;
    let owed: Vec<(usize, String)> = ids.into_iter().enumerate().collect();
    check_sent_once(rig.api(), &owed, &[], "inside the network call").await;
}
