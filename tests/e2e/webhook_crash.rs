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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::TOKEN;
use switchboard_tests::process::GatewayProcess;
use tokio::process::Command;
use tokio::task::JoinSet;

use crate::BINARY;

/// The sessions of the storm.
const SESSIONS: [&str; 4] = ["crash-a", "crash-b", "crash-c", "crash-d"];
/// Messages injected per session and storm: 4 × 500 = 2,000 per storm.
const STORM_PER_SESSION: usize = 500;
/// Concurrent injections per session.
const INJECTORS_PER_SESSION: usize = 6;
/// How long the slow receiver takes to answer 200.
const SLOW_ANSWER: Duration = Duration::from_millis(300);
/// How long before the kill an answered delivery still counts as in flight:
/// the receiver has answered, but the gateway may not have recorded the
/// answer yet (read the response, committed "delivered" to its store). See
/// [`InFlight`].
const RECORDING_WINDOW: Duration = Duration::from_secs(1);
/// Settling gives up when neither the receiver nor any DLQ changed for this
/// long: three times the longest retry pause configured below, so a retry
/// that is merely waiting is never taken for a loss.
const STALL: Duration = Duration::from_secs(15);
/// The longest any wait of this test may take.
const DEADLINE: Duration = Duration::from_secs(120);

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
// The receiver: one HTTP server, three behaviours, every delivery recorded.

/// How a URL answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Behaviour {
    /// 200 at once.
    Healthy,
    /// 500 until the test lets it recover, then 200.
    Flaky,
    /// 200 after [`SLOW_ANSWER`].
    Slow,
}

const BEHAVIOURS: [Behaviour; 3] = [Behaviour::Healthy, Behaviour::Flaky, Behaviour::Slow];

impl Behaviour {
    fn name(self) -> &'static str {
        match self {
            Behaviour::Healthy => "healthy",
            Behaviour::Flaky => "flaky",
            Behaviour::Slow => "slow",
        }
    }

    fn parse(s: &str) -> Option<Behaviour> {
        BEHAVIOURS.into_iter().find(|b| b.name() == s)
    }
}

/// One event at one URL: (behaviour, session, message id).
type Key = (Behaviour, String, String);

/// One delivery the receiver got.
#[derive(Debug, Clone)]
struct Hit {
    behaviour: Behaviour,
    /// The session named by the path.
    session: String,
    /// The envelope's `session_id`.
    envelope_session: String,
    /// The envelope's `data.message_id`.
    message_id: String,
    /// The storm the message belongs to (from its id; 0 if none).
    round: usize,
    /// `X-Webhook-Delivery-Id`.
    delivery_id: String,
    started: Instant,
    /// When the receiver answered, and with which status (0: the connection
    /// went away before the answer).
    answer: Option<(Instant, u16)>,
}

impl Hit {
    fn key(&self) -> Key {
        (
            self.behaviour,
            self.session.clone(),
            self.message_id.clone(),
        )
    }

    fn succeeded(&self) -> bool {
        matches!(self.answer, Some((_, s)) if (200..300).contains(&s))
    }
}

struct Hooks {
    hits: Mutex<Vec<Hit>>,
    flaky_recovered: AtomicBool,
}

impl Hooks {
    fn hits(&self) -> MutexGuard<'_, Vec<Hit>> {
        self.hits.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Notes the answer of a hit when its handler ends, or is dropped because
/// the connection went away.
struct Answer {
    hooks: Arc<Hooks>,
    index: usize,
    status: u16,
}

impl Drop for Answer {
    fn drop(&mut self) {
        self.hooks.hits()[self.index].answer = Some((Instant::now(), self.status));
    }
}

struct Receiver {
    addr: SocketAddr,
    hooks: Arc<Hooks>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the receiver binds");
        let addr = listener.local_addr().expect("the receiver's address");
        let hooks = Arc::new(Hooks {
            hits: Mutex::new(Vec::new()),
            flaky_recovered: AtomicBool::new(false),
        });
        let app = Router::new().fallback(hook).with_state(hooks.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { addr, hooks, task }
    }

    fn url(&self, session: &str, behaviour: Behaviour) -> String {
        format!("http://{}/{session}/{}", self.addr, behaviour.name())
    }

    fn flaky_recovers(&self, recovered: bool) {
        self.hooks
            .flaky_recovered
            .store(recovered, Ordering::SeqCst);
    }

    fn with<T>(&self, f: impl FnOnce(&[Hit]) -> T) -> T {
        f(&self.hooks.hits())
    }

    /// How long since the URLs of `b` last answered (or got) a delivery.
    fn quiet_for(&self, b: Behaviour) -> Duration {
        self.with(|hits| {
            let last = hits
                .iter()
                .filter(|h| h.behaviour == b)
                .map(|h| h.answer.map_or(Instant::now(), |(t, _)| t))
                .max();
            last.map_or(Duration::MAX, |t| t.elapsed())
        })
    }

    /// How many deliveries so far match `pred`.
    fn count(&self, pred: impl Fn(&Hit) -> bool) -> usize {
        self.with(|hits| hits.iter().filter(|h| pred(h)).count())
    }

    /// What `pick` takes from each delivery so far.
    fn collect<T, C: FromIterator<T>>(&self, pick: impl Fn(&Hit) -> Option<T>) -> C {
        self.with(|hits| hits.iter().filter_map(pick).collect())
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn hook(
    State(hooks): State<Arc<Hooks>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let Some((session, behaviour)) = uri
        .path()
        .trim_start_matches('/')
        .split_once('/')
        .and_then(|(s, b)| Some((s.to_owned(), Behaviour::parse(b)?)))
    else {
        return StatusCode::NOT_FOUND;
    };
    let envelope: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let message_id = text(&envelope["data"]["message_id"]);
    let hit = Hit {
        behaviour,
        session,
        envelope_session: text(&envelope["session_id"]),
        round: round_of(&message_id),
        message_id,
        delivery_id: headers
            .get("x-webhook-delivery-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
        started: Instant::now(),
        answer: None,
    };
    let index = {
        let mut hits = hooks.hits();
        hits.push(hit);
        hits.len() - 1
    };
    let mut answer = Answer {
        hooks: hooks.clone(),
        index,
        status: 0,
    };
    let status = match behaviour {
        Behaviour::Healthy => StatusCode::OK,
        Behaviour::Flaky if hooks.flaky_recovered.load(Ordering::SeqCst) => StatusCode::OK,
        Behaviour::Flaky => StatusCode::INTERNAL_SERVER_ERROR,
        Behaviour::Slow => {
            tokio::time::sleep(SLOW_ANSWER).await;
            StatusCode::OK
        }
    };
    answer.status = status.as_u16();
    status
}

// ---------------------------------------------------------------------------
// The gateway: the real binary on a data directory, and its API.

/// The retry timings of one run of the binary.
#[derive(Debug, Clone, Copy)]
struct Timings {
    retry_delays_secs: &'static str,
    max_attempts: u32,
}

/// Run 1: retries soon and many, so nothing dead-letters before the kill.
const FIRST: Timings = Timings {
    retry_delays_secs: "1",
    max_attempts: 10,
};
/// Run 2: a long pause, so the kill finds the retries of storm 2 waiting.
const SECOND: Timings = Timings {
    retry_delays_secs: "5",
    max_attempts: 5,
};
/// Runs 3 and 4: two attempts at most, so storm 3 at the failing URL
/// dead-letters; the second attempt comes late enough that storm 3 has
/// mostly left the healthy URLs more than [`RECORDING_WINDOW`] before it.
const THIRD: Timings = Timings {
    retry_delays_secs: "2",
    max_attempts: 2,
};

struct Gateway {
    process: GatewayProcess,
    api: Api,
}

impl Gateway {
    /// Starts the binary on `dir` and waits until it listens.
    async fn start(dir: &Path, timings: Timings) -> Gateway {
        let mut cmd = Command::new(BINARY);
        cmd.env_clear()
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir)
            .envs([
                ("API_TOKEN", TOKEN.to_owned()),
                ("SWITCHBOARD_LOG", "info".into()),
                ("SWITCHBOARD_NETWORK", "sim".into()),
                ("SWITCHBOARD_SIM_PAIR_DELAY_MS", "0".into()),
                ("SWITCHBOARD_SIM_QR_INTERVAL_MS", "50".into()),
                ("WEBHOOK_ALLOW_PRIVATE", "true".into()),
                ("WEBHOOK_TIMEOUT_SECS", "10".into()),
                (
                    "WEBHOOK_RETRY_DELAYS_SECS",
                    timings.retry_delays_secs.into(),
                ),
                (
                    "WEBHOOK_RETRY_MAX_ATTEMPTS",
                    timings.max_attempts.to_string(),
                ),
                // A suspended URL drops events by design (skipped, never
                // dead-lettered); that is another feature, kept out of the way.
                ("WEBHOOK_SUSPEND_THRESHOLD", "1000000".into()),
                // Every dead-letter stays listed, none evicted.
                ("WEBHOOK_DLQ_CAPACITY", "1000000".into()),
            ]);
        let process = GatewayProcess::start(cmd).await;
        let api = Api {
            base: process.base.clone(),
            http: reqwest::Client::new(),
        };
        Gateway { process, api }
    }

    /// Creates a sim session, connects it and waits until it is logged in.
    async fn pair(&self, session: &str) {
        self.api
            .expect(
                Method::POST,
                "/api/v1/sessions",
                Some(json!({ "id": session })),
                201,
            )
            .await;
        self.api
            .expect(
                Method::POST,
                &format!("/api/v1/sessions/{session}/connect"),
                None,
                200,
            )
            .await;
        self.wait_for_login(session).await;
    }

    /// Registers the three URLs of `session` for `message` events.
    async fn subscribe(&self, session: &str, rx: &Receiver) {
        for b in BEHAVIOURS {
            let body = json!({ "url": rx.url(session, b), "events": ["message"] });
            self.api
                .expect(
                    Method::POST,
                    &format!("/api/v1/sessions/{session}/webhooks"),
                    Some(body),
                    201,
                )
                .await;
        }
    }

    /// Waits until every session is logged in.
    async fn wait_logged_in(&self) {
        for session in SESSIONS {
            self.wait_for_login(session).await;
        }
    }

    async fn wait_for_login(&self, session: &str) {
        let path = format!("/api/v1/sessions/{session}/status");
        wait_for(&format!("{session} to be logged in"), || async {
            self.api.expect(Method::GET, &path, None, 200).await["status"] == "logged_in"
        })
        .await;
    }

    /// Stops any further injection of `storm`, then SIGKILLs the process
    /// and waits until it is gone.
    async fn kill(self, storm: &Storm) -> Kill {
        storm.halted.store(true, Ordering::SeqCst);
        let at = Instant::now();
        self.process.kill().await;
        Kill {
            at,
            dead: Instant::now(),
        }
    }
}

/// When a SIGKILL was sent, and when the process was gone.
#[derive(Debug, Clone, Copy)]
struct Kill {
    at: Instant,
    dead: Instant,
}

#[derive(Clone)]
struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), reqwest::Error> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await?;
        Ok((
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        ))
    }

    /// Panics unless the answer has `status`; returns its body.
    async fn expect(&self, method: Method, path: &str, body: Option<Value>, status: u16) -> Value {
        let what = format!("{method} {path}");
        let (got, body) = self
            .call(method, path, body)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got, status, "{what}: {body}");
        body
    }
}

// ---------------------------------------------------------------------------
// The storm.

fn message_id(round: usize, session: &str, i: usize) -> String {
    format!("R{round}-{session}-{i:04}")
}

fn round_of(message_id: &str) -> usize {
    message_id
        .strip_prefix('R')
        .and_then(|rest| rest.split('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Concurrent injections of inbound messages into every session.
struct Storm {
    /// (session, message id) of every injection answered 200.
    answered: Arc<Mutex<Vec<(String, String)>>>,
    /// Injections refused, or failed while the gateway was not being killed.
    failed: Arc<Mutex<Vec<String>>>,
    /// Set just before a kill: no new injection starts.
    halted: Arc<AtomicBool>,
    tasks: JoinSet<()>,
}

impl Storm {
    fn start(api: &Api, round: usize) -> Storm {
        let answered = Arc::new(Mutex::new(Vec::new()));
        let failed = Arc::new(Mutex::new(Vec::new()));
        let halted = Arc::new(AtomicBool::new(false));
        let mut tasks = JoinSet::new();
        for session in SESSIONS {
            let next = Arc::new(AtomicUsize::new(0));
            for _ in 0..INJECTORS_PER_SESSION {
                let (api, next) = (api.clone(), next.clone());
                let (answered, failed, halted) = (answered.clone(), failed.clone(), halted.clone());
                tasks.spawn(async move {
                    let path = format!("/api/v1/sim/sessions/{session}/inbound");
                    while !halted.load(Ordering::SeqCst) {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= STORM_PER_SESSION {
                            break;
                        }
                        let id = message_id(round, session, i);
                        let body = json!({
                            "from": "15550001111",
                            "text": format!("storm {round}, message {i}"),
                            "message_id": id,
                        });
                        match api.call(Method::POST, &path, Some(body)).await {
                            Ok((200, answer)) if answer["message_id"] == id.as_str() => {
                                answered.lock().unwrap().push((session.to_owned(), id));
                            }
                            Ok((status, answer)) => {
                                failed
                                    .lock()
                                    .unwrap()
                                    .push(format!("{id}: {status} {answer}"));
                            }
                            // Cut off by the kill: not answered, not owed.
                            Err(_) if halted.load(Ordering::SeqCst) => break,
                            Err(e) => failed.lock().unwrap().push(format!("{id}: {e}")),
                        }
                    }
                });
            }
        }
        Storm {
            answered,
            failed,
            halted,
            tasks,
        }
    }

    /// Waits until every injection was made; returns the answered ones.
    async fn wait(&mut self) -> Vec<(String, String)> {
        while let Some(done) = self.tasks.join_next().await {
            done.expect("an injector ends without panicking");
        }
        self.answered.lock().unwrap().clone()
    }

    /// Waits for the injectors to stop; returns the answered injections,
    /// which are owed to every webhook. Panics if the gateway refused any
    /// injection while it ran.
    async fn end(mut self) -> Vec<(String, String)> {
        let answered = self.wait().await;
        let failed = self.failed.lock().unwrap();
        assert!(
            failed.is_empty(),
            "{} injection(s) failed while the gateway ran, e.g. {:?}",
            failed.len(),
            &failed[..failed.len().min(3)]
        );
        answered
    }
}

// ---------------------------------------------------------------------------
// Settling and the checks.

/// The session DLQs, by event and URL.
async fn dlq_entries(api: &Api) -> HashMap<Key, Vec<Value>> {
    let mut by_key: HashMap<Key, Vec<Value>> = HashMap::new();
    for session in SESSIONS {
        let body = api
            .expect(
                Method::GET,
                &format!("/api/v1/sessions/{session}/webhooks/dlq"),
                None,
                200,
            )
            .await;
        for entry in body["entries"].as_array().expect("an entries array") {
            let url = entry["webhook_url"].as_str().unwrap_or_default();
            let behaviour = url
                .rsplit('/')
                .next()
                .and_then(Behaviour::parse)
                .unwrap_or_else(|| panic!("a DLQ entry for an unknown URL: {entry}"));
            let payload: Value =
                serde_json::from_str(entry["payload"].as_str().unwrap_or_default())
                    .unwrap_or_else(|e| panic!("the payload is the envelope ({e}): {entry}"));
            let message_id = payload["data"]["message_id"].as_str().unwrap_or_default();
            by_key
                .entry((behaviour, session.to_owned(), message_id.to_owned()))
                .or_default()
                .push(entry.clone());
        }
    }
    by_key
}

/// Every (URL, event) owed: each answered injection at each behaviour.
fn owed_keys(owed: &[(String, String)]) -> Vec<Key> {
    owed.iter()
        .flat_map(|(s, m)| BEHAVIOURS.map(|b| (b, s.clone(), m.clone())))
        .collect()
}

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

// ---------------------------------------------------------------------------
// Waiting.

/// Polls `ready` every 20 ms until it holds, failing after [`DEADLINE`].
async fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    wait_for(what, || std::future::ready(ready())).await;
}

/// Polls `ready` every 20 ms until it holds, failing after [`DEADLINE`].
async fn wait_for<F: std::future::Future<Output = bool>>(what: &str, mut ready: impl FnMut() -> F) {
    let deadline = Instant::now() + DEADLINE;
    while !ready().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
