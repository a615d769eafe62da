//! Webhook delivery across crashes: the real binary, killed with SIGKILL (no
//! graceful stop, nothing flushed) during storms of inbound messages on four
//! sessions, each with three webhooks — one healthy, one failing then
//! recovering, one slow — at three moments: while first attempts are in
//! flight, while retries wait, and while dead-letters are being written.
//! After each restart on the same data directory, every event whose
//! injection was answered reaches every subscribed URL at least once or sits
//! in its session's DLQ with a reason; every repeat carries the delivery id
//! of the first attempt; and there are no more repeats than deliveries in
//! flight at the kill.
//!
//! The process runs four times on one data directory, each run with the
//! retry timings its moment needs (environment variables, so it runs fast):
//!
//! 1. retries after 1 s, 10 attempts: pair and subscribe; storm 1 with
//!    `flaky` failing, killed shortly after it starts;
//! 2. retries after 5 s, 5 attempts: `flaky` recovers and storm 1 settles;
//!    storm 2 with `flaky` failing, killed once every event of it failed its
//!    first attempt there;
//! 3. retries after 2 s, 2 attempts: `flaky` recovers and storm 2 settles;
//!    storm 3 with `flaky` failing, killed while second attempts fail into
//!    the DLQ;
//! 4. the same timings: storm 3 settles, `flaky` still failing, so its
//!    events there end in the DLQ.
//!
//! Each storm injects 2,000 messages (500 per session) concurrently; only
//! injections the gateway answered are owed, so the first storm, cut short
//! by its kill, owes fewer.
//!
//! This file holds the scenario and its checks; the machinery they drive
//! (the webhook receiver, the gateway process and its API, the storms, the
//! waits) is in [`crate::webhook_crash_support`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;
use switchboard_tests::crash::Api;

use crate::webhook_crash_support::{
    Behaviour, FIRST, Gateway, Hit, Key, Receiver, SECOND, Storm, THIRD, dlq_entries, owed_keys,
    round_of, wait_until,
};

/// The sessions of the storm.
pub(crate) const SESSIONS: [&str; 4] = ["crash-a", "crash-b", "crash-c", "crash-d"];
/// Messages injected per session and storm: 4 × 500 = 2,000 per storm.
pub(crate) const STORM_PER_SESSION: usize = 500;
/// How long before the kill an answered delivery still counts as in flight:
/// the receiver has answered, but the gateway may not have recorded the
/// answer yet (read the response, committed "delivered" to its store). See
/// [`InFlight`].
const RECORDING_WINDOW: Duration = Duration::from_secs(1);
/// Settling gives up when neither the receiver nor any DLQ changed for this
/// long: three times the longest retry pause configured in [`FIRST`],
/// [`SECOND`] and [`THIRD`], so a retry that is merely waiting is never taken
/// for a loss.
const STALL: Duration = Duration::from_secs(15);
/// The longest any wait of this test may take.
pub(crate) const DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_survive_a_sigkill_during_first_attempts_waiting_retries_and_dead_lettering() {
    let began = Instant::now();
    // The gateway runs in a child process: nothing in this one has installed
    // the TLS crypto provider a reqwest client needs.
    switchboard::install_crypto_provider();
    let dir = tempfile::tempdir().expect("a temporary data directory");
    let rx = Receiver::start().await;
    let storm_size = STORM_PER_SESSION * SESSIONS.len();
    let mut owed: Vec<(String, String)> = Vec::new();
    let mut kills: Vec<Kill> = Vec::new();

    // Run 1: pair and subscribe; storm 1 with `flaky` failing, killed shortly
    // after it starts, while first attempts are in flight.
    let gateway = Gateway::start(dir.path(), FIRST).await;
    for session in SESSIONS {
        gateway.pair(session).await;
        gateway.subscribe(session, &rx).await;
    }
    rx.flaky_recovers(false);
    let storm = Storm::start(&gateway.api, 1);
    wait_until("a fifth of storm 1 at the healthy URLs", || {
        rx.count(|h| h.round == 1 && h.behaviour == Behaviour::Healthy) >= storm_size / 5
    })
    .await;
    let stand = crash(gateway, storm, &rx, &mut owed, &mut kills).await;
    assert!(
        stand.of(Behaviour::Slow).delivered < stand.answered,
        "the first kill comes while first attempts are in flight: {stand:?}"
    );

    // Run 2: `flaky` recovers and storm 1 settles. Storm 2 with `flaky`
    // failing and a long retry pause, killed once every event of it failed
    // its first attempt there: each waits for a retry.
    rx.flaky_recovers(true);
    let gateway = Gateway::start(dir.path(), SECOND).await;
    settle_and_check(
        &gateway,
        &rx,
        &owed,
        &kills,
        "while first attempts were in flight",
    )
    .await;
    rx.flaky_recovers(false);
    let mut storm = Storm::start(&gateway.api, 2);
    let storm_2: HashSet<String> = storm.wait().await.into_iter().map(|(_, m)| m).collect();
    // The healthy URLs fall quiet first, so that the repeats this kill
    // allows (see `InFlight`) are not all of storm 2 at them.
    wait_until(
        "storm 2 to fail once at every flaky URL, then quiet at the healthy ones",
        || {
            let tried: HashSet<String> = rx.collect(|h| {
                (h.round == 2 && h.behaviour == Behaviour::Flaky).then(|| h.message_id.clone())
            });
            let delivered: HashSet<String> = rx.collect(|h| {
                (h.round == 2 && h.behaviour == Behaviour::Healthy && h.succeeded())
                    .then(|| h.message_id.clone())
            });
            storm_2.is_subset(&tried)
                && storm_2.is_subset(&delivered)
                && rx.quiet_for(Behaviour::Healthy) >= RECORDING_WINDOW
        },
    )
    .await;
    let stand = crash(gateway, storm, &rx, &mut owed, &mut kills).await;
    let flaky = stand.of(Behaviour::Flaky);
    assert!(
        flaky.attempted == stand.answered && flaky.delivered == 0,
        "the second kill comes while every event of storm 2 waits for a retry: {stand:?}"
    );

    // Run 3: `flaky` recovers and storm 2 settles. Storm 3 with `flaky`
    // failing and two attempts at most, killed while second attempts fail,
    // each into the DLQ.
    rx.flaky_recovers(true);
    let gateway = Gateway::start(dir.path(), THIRD).await;
    settle_and_check(&gateway, &rx, &owed, &kills, "while retries waited").await;
    rx.flaky_recovers(false);
    let storm = Storm::start(&gateway.api, 3);
    let dead_lettering = storm_size / 6;
    wait_until("storm 3 to fail its last attempts", || {
        twice(&rx, 3, Behaviour::Flaky, Instant::now()) >= dead_lettering
    })
    .await;
    let stand = crash(gateway, storm, &rx, &mut owed, &mut kills).await;
    let flaky = stand.of(Behaviour::Flaky);
    assert!(
        flaky.twice >= dead_lettering && flaky.twice < stand.answered,
        "the third kill comes while dead-letters are written: {stand:?}"
    );

    // Run 4: `flaky` still fails; storm 3 settles, its flaky deliveries in the DLQ.
    let gateway = Gateway::start(dir.path(), THIRD).await;
    settle_and_check(
        &gateway,
        &rx,
        &owed,
        &kills,
        "while dead-letters were written",
    )
    .await;
    let dead = dlq_entries(&gateway.api).await;
    let storm_3 = owed.iter().filter(|(_, m)| round_of(m) == 3);
    for (session, message_id) in storm_3 {
        let key = (Behaviour::Flaky, session.clone(), message_id.clone());
        assert!(
            dead.contains_key(&key),
            "{session}/{message_id}: storm 3 at the failing URL ends in the DLQ"
        );
    }
    assert!(
        owed.len() >= storm_size,
        "at least one storm's worth of answered injections: {}",
        owed.len()
    );
    eprintln!(
        "webhook_crash: {} events owed to 3 URLs each over {} kills, in {:.1}s",
        owed.len(),
        kills.len(),
        began.elapsed().as_secs_f64()
    );
    gateway.process.stop().await;
}

/// SIGKILLs the gateway during `storm`; adds the storm's answered
/// injections to `owed` and the kill to `kills`; returns (and prints) where
/// the storm stood at the kill.
async fn crash(
    gateway: Gateway,
    storm: Storm,
    rx: &Receiver,
    owed: &mut Vec<(String, String)>,
    kills: &mut Vec<Kill>,
) -> Stand {
    let kill = gateway.kill(&storm).await;
    let answered = storm.end().await;
    let round = kills.len() + 1;
    let stand = Stand::at(rx, round, &kill, answered.len());
    eprintln!("webhook_crash: kill {round}: {stand:?}");
    owed.extend(answered);
    kills.push(kill);
    stand
}

/// When a SIGKILL was sent, and when the process was gone.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kill {
    pub(crate) at: Instant,
    pub(crate) dead: Instant,
}

/// Where a storm stood at its kill.
#[derive(Debug)]
struct Stand {
    /// Injections answered.
    answered: usize,
    healthy: Tally,
    flaky: Tally,
    slow: Tally,
}

/// The events of a storm at the URLs of one behaviour before a kill.
#[derive(Debug, Clone, Copy)]
struct Tally {
    /// Attempted at least once.
    attempted: usize,
    /// Answered 2xx.
    delivered: usize,
    /// Attempted twice or more.
    twice: usize,
}

impl Stand {
    fn at(rx: &Receiver, round: usize, kill: &Kill, answered: usize) -> Stand {
        let tally = |b: Behaviour| {
            let mut tries: HashMap<String, (usize, bool)> = HashMap::new();
            rx.with(|hits| {
                for h in hits {
                    if h.round == round && h.behaviour == b && h.started < kill.at {
                        let t = tries.entry(h.message_id.clone()).or_default();
                        t.0 += 1;
                        t.1 |= h.succeeded();
                    }
                }
            });
            Tally {
                attempted: tries.len(),
                delivered: tries.values().filter(|t| t.1).count(),
                twice: tries.values().filter(|t| t.0 >= 2).count(),
            }
        };
        Stand {
            answered,
            healthy: tally(Behaviour::Healthy),
            flaky: tally(Behaviour::Flaky),
            slow: tally(Behaviour::Slow),
        }
    }

    fn of(&self, b: Behaviour) -> Tally {
        match b {
            Behaviour::Healthy => self.healthy,
            Behaviour::Flaky => self.flaky,
            Behaviour::Slow => self.slow,
        }
    }
}

/// Events of storm `round` attempted twice or more at `b` before `before`.
fn twice(rx: &Receiver, round: usize, b: Behaviour, before: Instant) -> usize {
    let mut tries: HashMap<String, usize> = HashMap::new();
    rx.with(|hits| {
        for h in hits {
            if h.round == round && h.behaviour == b && h.started < before {
                *tries.entry(h.message_id.clone()).or_default() += 1;
            }
        }
    });
    tries.values().filter(|n| **n >= 2).count()
}

// ---------------------------------------------------------------------------
// Settling and the checks.

/// The deliveries in flight at a kill, the bound on the repeats it may
/// cause. A delivery can be repeated after a crash only if the gateway had
/// sent it but not yet recorded its success. From the receiver's side that
/// is
///
/// - every request not answered when the SIGKILL was sent: those waiting
///   for their answer (at the slow URLs up to the gateway's per-URL
///   concurrency, 32 each) and those that arrived while the process died;
/// - every request answered 2xx within [`RECORDING_WINDOW`] before the
///   SIGKILL: the gateway may not have read that answer, or not committed
///   it, when it died.
///
/// A failed attempt in flight is not counted: its next attempt is a retry,
/// not a repeat. The window is generous (recording an answer is one group
/// commit, milliseconds) so a correct engine on a loaded machine stays
/// inside the bound, while an engine that sends again what it had already
/// delivered (all of a storm, or earlier storms) does not.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    /// Not answered when the SIGKILL was sent.
    unanswered: usize,
    /// Answered 2xx within [`RECORDING_WINDOW`] before it.
    just_answered: usize,
}

impl InFlight {
    fn at(hits: &[Hit], kill: &Kill) -> InFlight {
        let before_death = || hits.iter().filter(|h| h.started < kill.dead);
        InFlight {
            unanswered: before_death()
                .filter(|h| h.answer.is_none_or(|(t, _)| t >= kill.at))
                .count(),
            just_answered: before_death()
                .filter(|h| {
                    h.succeeded()
                        && h.answer
                            .is_some_and(|(t, _)| t < kill.at && t + RECORDING_WINDOW >= kill.at)
                })
                .count(),
        }
    }

    fn bound(self) -> usize {
        self.unanswered + self.just_answered
    }
}

impl std::fmt::Display for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} unanswered at the kill, {} answered 2xx within {RECORDING_WINDOW:?} before it)",
            self.bound(),
            self.unanswered,
            self.just_answered
        )
    }
}

/// The repeats each kill caused: requests for an event a URL had already
/// answered 2xx to, counted against the first kill after that answer's
/// request; and repeats within one run of the process, which no kill
/// explains.
fn repeats(hits: &[Hit], kills: &[Kill]) -> (Vec<usize>, usize) {
    let run_of = |t: Instant| kills.iter().filter(|k| k.dead <= t).count();
    let mut first_success: HashMap<Key, usize> = HashMap::new();
    let mut per_kill = vec![0; kills.len()];
    let mut without_kill = 0;
    for h in hits {
        let key = h.key();
        let run = run_of(h.started);
        match first_success.get(&key) {
            Some(&earlier) if earlier < run => per_kill[earlier] += 1,
            Some(_) => without_kill += 1,
            None if h.succeeded() => {
                first_success.insert(key, run);
            }
            None => {}
        }
    }
    (per_kill, without_kill)
}

/// Waits until every owed (URL, event) was delivered or dead-lettered, or
/// nothing changes any more for [`STALL`]; then checks the outcome after
/// the latest kill (`moment` says when it came).
async fn settle_and_check(
    gateway: &Gateway,
    rx: &Receiver,
    owed: &[(String, String)],
    kills: &[Kill],
    moment: &str,
) {
    let api = &gateway.api;
    let kill_no = kills.len();
    let started = Instant::now();
    gateway.wait_logged_in().await;
    let keys = owed_keys(owed);
    let mut last_change = (0usize, 0usize);
    let mut changed_at = Instant::now();
    let (lost, dead) = loop {
        let dead = dlq_entries(api).await;
        let reached: HashSet<Key> = rx.with(|hits| {
            hits.iter()
                .filter(|h| h.succeeded())
                .map(Hit::key)
                .collect()
        });
        let lost: Vec<&Key> = keys
            .iter()
            .filter(|k| !reached.contains(*k) && !dead.contains_key(*k))
            .collect();
        let now = (rx.with(<[Hit]>::len), dead.values().map(Vec::len).sum());
        if now != last_change {
            last_change = now;
            changed_at = Instant::now();
        }
        if lost.is_empty() || changed_at.elapsed() > STALL || started.elapsed() > DEADLINE {
            break (lost, dead);
        }
        // Polls the receivers, bounded by STALL and DEADLINE above.
        tokio::time::sleep(Duration::from_millis(250)).await;
    };

    if !lost.is_empty() {
        panic!(
            "{}",
            describe_lost(api, &lost, keys.len(), kill_no, moment).await
        );
    }

    // Every dead-letter says why.
    for entry in dead.values().flatten() {
        let reason = entry["last_error"].as_str().unwrap_or_default();
        assert!(
            !reason.is_empty(),
            "a dead-letter without a last_error: {entry}"
        );
        if let Some(reason) = entry.get("reason") {
            assert!(
                reason.as_str().is_some_and(|r| !r.is_empty()),
                "a dead-letter with an empty reason: {entry}"
            );
        }
    }

    let after = format!("after kill {kill_no} (it came {moment})");
    rx.with(|hits| {
        one_delivery_id_each(hits, &dead, &after);
        let (per_kill, without_kill) = repeats(hits, kills);
        assert_eq!(
            without_kill, 0,
            "{after}: events delivered again after a success with no kill between"
        );
        for (i, kill) in kills.iter().enumerate() {
            let in_flight = InFlight::at(hits, kill);
            assert!(
                per_kill[i] <= in_flight.bound(),
                "{after}: kill {} caused {} repeated deliveries, more than the {in_flight} \
                 in flight at it",
                i + 1,
                per_kill[i],
            );
        }
        let in_flight = InFlight::at(hits, &kills[kill_no - 1]);
        eprintln!(
            "webhook_crash: {after}: {} events owed to 3 URLs each, all delivered or \
             dead-lettered {:.1}s after the restart; {} repeated, of {in_flight} in flight",
            owed.len(),
            started.elapsed().as_secs_f64(),
            per_kill[kill_no - 1],
        );
    });
}

/// Every envelope at a session's URL is that session's, and each event
/// reaches each URL under one delivery id: every retry and repeat carries
/// the first attempt's, and so does its dead-letter.
fn one_delivery_id_each(hits: &[Hit], dead: &HashMap<Key, Vec<Value>>, after: &str) {
    let strays: Vec<&Hit> = hits
        .iter()
        .filter(|h| h.envelope_session != h.session)
        .collect();
    assert!(
        strays.is_empty(),
        "{after}: envelopes at another session's URL: {:?}",
        &strays[..strays.len().min(3)]
    );
    let mut ids: BTreeMap<Key, HashSet<&str>> = BTreeMap::new();
    for h in hits {
        ids.entry(h.key()).or_default().insert(&h.delivery_id);
    }
    for (key, entries) in dead {
        for e in entries {
            let id = e["delivery_id"].as_str().unwrap_or_default();
            ids.entry(key.clone()).or_default().insert(id);
        }
    }
    let mixed: Vec<String> = ids
        .iter()
        .filter(|(_, ids)| ids.len() > 1 || ids.contains(""))
        .map(|((b, s, m), ids)| format!("{s}/{} {m}: {ids:?}", b.name()))
        .collect();
    assert!(
        mixed.is_empty(),
        "{after}: {} event(s) reached a URL under more than one delivery id (or none), e.g. {:?}",
        mixed.len(),
        &mixed[..mixed.len().min(5)]
    );
}

/// The failure message for owed deliveries that were neither received nor
/// dead-lettered: counts per URL behaviour and per storm, and whether the
/// gateway stored the lost messages at all (lost before intake stored them,
/// or lost in delivery).
async fn describe_lost(
    api: &Api,
    lost: &[&Key],
    owed: usize,
    kill_no: usize,
    moment: &str,
) -> String {
    let mut per_url: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_storm: BTreeMap<usize, usize> = BTreeMap::new();
    let mut events: HashSet<(&str, &str)> = HashSet::new();
    for (b, s, m) in lost {
        *per_url.entry(b.name()).or_default() += 1;
        *per_storm.entry(round_of(m)).or_default() += 1;
        events.insert((s.as_str(), m.as_str()));
    }
    let mut stored: HashSet<(String, String)> = HashSet::new();
    for session in SESSIONS {
        for offset in (0..).step_by(1000) {
            let page = api
                .expect(
                    Method::GET,
                    &format!("/api/v1/sessions/{session}/messages?limit=1000&offset={offset}"),
                    None,
                    200,
                )
                .await;
            let messages = page["messages"].as_array().cloned().unwrap_or_default();
            for m in &messages {
                let id = m["message_id"].as_str().unwrap_or_default();
                stored.insert((session.to_owned(), id.to_owned()));
            }
            if messages.len() < 1000 {
                break;
            }
        }
    }
    let kept = events
        .iter()
        .filter(|(s, m)| stored.contains(&((*s).to_owned(), (*m).to_owned())))
        .count();
    let mut examples: Vec<&&Key> = lost.iter().collect();
    examples.sort();
    let examples: Vec<String> = examples
        .into_iter()
        .take(8)
        .map(|(b, s, m)| format!("{s}/{} {m}", b.name()))
        .collect();
    format!(
        "after kill {kill_no} (it came {moment}) and a restart on the same data directory, \
         {} of {owed} owed deliveries were lost: neither received by their URL nor in the \
         session's DLQ.\n\
         lost per URL: {per_url:?}\n\
         lost per storm: {per_storm:?}\n\
         the {} events concerned: {kept} stored as messages after the restart (lost in delivery), \
         {} not stored (lost before intake stored them)\n\
         e.g. {examples:?}",
        lost.len(),
        events.len(),
        events.len() - kept,
    )
}
