//! Inbound intake across SIGKILL: concurrent injections of inbound messages
//! into two sim sessions, the real binary killed after N answered
//! injections, and restarted on the same data directory. The sim answers an
//! injection only once the gateway has stored the message, so every
//! injection answered 200 must be in the session's message history after
//! the restart, exactly once. Injections the kill cut off may or may not be
//! stored; nothing else may be.
//!
//! Kill points: at the first answer (the store's first writes), in the
//! middle of a steady storm, and twice in a row (a heavy storm, then again
//! at the first answer after the restart, so the recovered store is itself
//! killed).

use std::collections::{HashMap, HashSet};

use reqwest::Method;
use serde_json::json;
use switchboard_tests::crash::{Intervals, Load, Outcome, Request, Rig, kill_after_answers};

use crate::BINARY;

const SESSIONS: [&str; 2] = ["intake-a", "intake-b"];

/// The `i`-th injection of `round`, alternating between the sessions; the
/// message id names the round and index, so what is stored can be told
/// apart.
fn injection(round: usize, i: usize) -> Request {
    let session = SESSIONS[i % SESSIONS.len()];
    Request {
        method: Method::POST,
        path: format!("/api/v1/sim/sessions/{session}/inbound"),
        body: Some(json!({
            "from": "15550001111",
            "text": format!("round {round}, message {i}"),
            "message_id": message_id(round, i),
        })),
    }
}

fn message_id(round: usize, i: usize) -> String {
    format!("INTAKE{round}X{i:05}")
}

/// A storm of `total` injections from `injectors` tasks.
fn storm(rig: &Rig, round: usize, injectors: usize, total: usize) -> Load {
    Load::start(rig.api(), injectors, total, &[200], move |i| {
        injection(round, i)
    })
}

async fn paired_rig() -> Rig {
    let rig = Rig::start(BINARY, Intervals::Fast).await;
    for session in SESSIONS {
        rig.api().pair(session).await;
    }
    rig
}

/// The (session, message id) of every answered injection of a round, after
/// checking each answer names the id it injected.
fn owed(round: usize, outcome: &Outcome) -> Vec<(String, String)> {
    outcome
        .answered
        .iter()
        .map(|a| {
            let id = message_id(round, a.index);
            assert_eq!(a.body["message_id"], id.as_str(), "{:?}", a);
            let session = SESSIONS[a.index % SESSIONS.len()].to_owned();
            (session, id)
        })
        .collect()
}

/// After a restart: every owed injection is stored exactly once as an
/// inbound message of its session, and every stored one was injected (owed,
/// or cut off by a kill).
async fn check_stored(rig: &Rig, owed: &[(String, String)], cut_off: &HashSet<String>, kill: &str) {
    let mut stored: HashMap<(String, String), usize> = HashMap::new();
    for session in SESSIONS {
        for m in rig.api().history(session).await {
            assert_eq!(m["direction"], "inbound", "{m}");
            let id = m["message_id"].as_str().expect("a message id").to_owned();
            *stored.entry((session.to_owned(), id)).or_default() += 1;
        }
    }
    let lost: Vec<&(String, String)> = owed.iter().filter(|k| !stored.contains_key(*k)).collect();
    assert!(
        lost.is_empty(),
        "after a kill {kill}: {} of {} answered injections are not stored, e.g. {:?}",
        lost.len(),
        owed.len(),
        &lost[..lost.len().min(5)]
    );
    let twice: Vec<_> = stored.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "after a kill {kill}: messages stored more than once: {twice:?}"
    );
    let owed: HashSet<&(String, String)> = owed.iter().collect();
    let strays: Vec<_> = stored
        .keys()
        .filter(|k| !owed.contains(k) && !cut_off.contains(&k.1))
        .collect();
    assert!(
        strays.is_empty(),
        "after a kill {kill}: stored messages that were never injected: {strays:?}"
    );
    eprintln!(
        "crash_intake: after a kill {kill}: {} answered injections stored, {} stored of those cut off",
        owed.len(),
        stored.len() - owed.len()
    );
}

fn cut_off_ids(round: usize, outcome: &Outcome) -> HashSet<String> {
    outcome
        .cut_off
        .iter()
        .map(|&i| message_id(round, i))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injection_answered_just_before_a_kill_at_the_first_answer_is_stored_after_restart() {
    let mut rig = paired_rig().await;
    let load = storm(&rig, 1, 4, 2_000);
    let (_, outcome) = kill_after_answers(&mut rig, load, 1).await;
    rig.restart(&SESSIONS).await;
    let owed = owed(1, &outcome);
    check_stored(
        &rig,
        &owed,
        &cut_off_ids(1, &outcome),
        "at the first answer",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_injection_answered_before_a_kill_mid_storm_is_stored_once_after_restart() {
    let mut rig = paired_rig().await;
    let load = storm(&rig, 1, 6, 2_000);
    let (_, outcome) = kill_after_answers(&mut rig, load, 250).await;
    rig.restart(&SESSIONS).await;
    let owed = owed(1, &outcome);
    assert!(owed.len() >= 250, "{} answered", owed.len());
    check_stored(&rig, &owed, &cut_off_ids(1, &outcome), "mid-storm").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_killed_twice_in_a_row_keeps_every_answered_injection_of_both_storms() {
    let mut rig = paired_rig().await;
    let load = storm(&rig, 1, 16, 3_000);
    let (_, first) = kill_after_answers(&mut rig, load, 500).await;
    rig.restart(&SESSIONS).await;
    // Killed again at the first answer after the restart: the store the
    // first kill left behind is itself cut off mid-write.
    let load = storm(&rig, 2, 16, 3_000);
    let (_, second) = kill_after_answers(&mut rig, load, 1).await;
    rig.restart(&SESSIONS).await;
    let mut owed = owed(1, &first);
    owed.extend(self::owed(2, &second));
    let mut cut_off = cut_off_ids(1, &first);
    cut_off.extend(cut_off_ids(2, &second));
    check_stored(
        &rig,
        &owed,
        &cut_off,
        "during a heavy storm, then again at once after the restart",
    )
    .await;
}
