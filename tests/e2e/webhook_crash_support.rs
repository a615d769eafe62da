//! The machinery the SIGKILL scenario in `webhook_crash.rs` drives: the
//! webhook receiver (one HTTP server whose URLs answer healthy, flaky or
//! slow, recording every delivery), the real gateway binary started on a data
//! directory with a run's retry timings, its API and its SIGKILL, the storms
//! of inbound messages, reading the session DLQs, and the polling waits.
//! Kept apart so that `webhook_crash.rs` reads as the scenario and its
//! checks; the scenario's own parameters (sessions, storm size, deadline) and
//! its record of a kill stay there, and are used from there.

use std::collections::HashMap;
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
use switchboard_tests::crash::Api;
use switchboard_tests::process::GatewayProcess;
use tokio::process::Command;
use tokio::task::JoinSet;

use crate::BINARY;
use crate::webhook_crash::{DEADLINE, Kill, SESSIONS, STORM_PER_SESSION};

/// Concurrent injections per session.
const INJECTORS_PER_SESSION: usize = 6;
/// How long the slow receiver takes to answer 200.
const SLOW_ANSWER: Duration = Duration::from_millis(300);

// ---------------------------------------------------------------------------
// The receiver: one HTTP server, three behaviours, every delivery recorded.

/// How a URL answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Behaviour {
    /// 200 at once.
    Healthy,
    /// 500 until the test lets it recover, then 200.
    Flaky,
    /// 200 after [`SLOW_ANSWER`].
    Slow,
}

const BEHAVIOURS: [Behaviour; 3] = [Behaviour::Healthy, Behaviour::Flaky, Behaviour::Slow];

impl Behaviour {
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) type Key = (Behaviour, String, String);

/// One delivery the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) behaviour: Behaviour,
    /// The session named by the path.
    pub(crate) session: String,
    /// The envelope's `session_id`.
    pub(crate) envelope_session: String,
    /// The envelope's `data.message_id`.
    pub(crate) message_id: String,
    /// The storm the message belongs to (from its id; 0 if none).
    pub(crate) round: usize,
    /// `X-Webhook-Delivery-Id`.
    pub(crate) delivery_id: String,
    pub(crate) started: Instant,
    /// When the receiver answered, and with which status (0: the connection
    /// went away before the answer).
    pub(crate) answer: Option<(Instant, u16)>,
}

impl Hit {
    pub(crate) fn key(&self) -> Key {
        (
            self.behaviour,
            self.session.clone(),
            self.message_id.clone(),
        )
    }

    pub(crate) fn succeeded(&self) -> bool {
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

pub(crate) struct Receiver {
    addr: SocketAddr,
    hooks: Arc<Hooks>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub(crate) async fn start() -> Receiver {
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

    pub(crate) fn flaky_recovers(&self, recovered: bool) {
        self.hooks
            .flaky_recovered
            .store(recovered, Ordering::SeqCst);
    }

    pub(crate) fn with<T>(&self, f: impl FnOnce(&[Hit]) -> T) -> T {
        f(&self.hooks.hits())
    }

    /// How long since the URLs of `b` last answered (or got) a delivery.
    pub(crate) fn quiet_for(&self, b: Behaviour) -> Duration {
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
    pub(crate) fn count(&self, pred: impl Fn(&Hit) -> bool) -> usize {
        self.with(|hits| hits.iter().filter(|h| pred(h)).count())
    }

    /// What `pick` takes from each delivery so far.
    pub(crate) fn collect<T, C: FromIterator<T>>(&self, pick: impl Fn(&Hit) -> Option<T>) -> C {
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
            // The slow receiver's own answer time, not a wait for anything.
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
pub(crate) struct Timings {
    retry_delays_secs: &'static str,
    max_attempts: u32,
}

/// Run 1: retries soon and many, so nothing dead-letters before the kill.
pub(crate) const FIRST: Timings = Timings {
    retry_delays_secs: "1",
    max_attempts: 10,
};
/// Run 2: a long pause, so the kill finds the retries of storm 2 waiting.
pub(crate) const SECOND: Timings = Timings {
    retry_delays_secs: "5",
    max_attempts: 5,
};
/// Runs 3 and 4: two attempts at most, so storm 3 at the failing URL
/// dead-letters; the second attempt comes late enough that storm 3 has
/// mostly left the healthy URLs more than
/// [`RECORDING_WINDOW`](crate::webhook_crash::RECORDING_WINDOW) before it.
pub(crate) const THIRD: Timings = Timings {
    retry_delays_secs: "2",
    max_attempts: 2,
};

pub(crate) struct Gateway {
    pub(crate) process: GatewayProcess,
    pub(crate) api: Api,
}

impl Gateway {
    /// Starts the binary on `dir` and waits until it listens.
    pub(crate) async fn start(dir: &Path, timings: Timings) -> Gateway {
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
        let api = Api::new(&process.base);
        Gateway { process, api }
    }

    /// Creates a sim session, connects it and waits until it is logged in.
    pub(crate) async fn pair(&self, session: &str) {
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
    pub(crate) async fn subscribe(&self, session: &str, rx: &Receiver) {
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
    pub(crate) async fn wait_logged_in(&self) {
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
    pub(crate) async fn kill(self, storm: &Storm) -> Kill {
        storm.halted.store(true, Ordering::SeqCst);
        let at = Instant::now();
        self.process.kill().await;
        Kill {
            at,
            dead: Instant::now(),
        }
    }
}

// ---------------------------------------------------------------------------
// The storm.

fn message_id(round: usize, session: &str, i: usize) -> String {
    format!("R{round}-{session}-{i:04}")
}

pub(crate) fn round_of(message_id: &str) -> usize {
    message_id
        .strip_prefix('R')
        .and_then(|rest| rest.split('-').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Concurrent injections of inbound messages into every session.
pub(crate) struct Storm {
    /// (session, message id) of every injection answered 200.
    answered: Arc<Mutex<Vec<(String, String)>>>,
    /// Injections refused, or failed while the gateway was not being killed.
    failed: Arc<Mutex<Vec<String>>>,
    /// Set just before a kill: no new injection starts.
    halted: Arc<AtomicBool>,
    tasks: JoinSet<()>,
}

impl Storm {
    pub(crate) fn start(api: &Api, round: usize) -> Storm {
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
    pub(crate) async fn wait(&mut self) -> Vec<(String, String)> {
        while let Some(done) = self.tasks.join_next().await {
            done.expect("an injector ends without panicking");
        }
        self.answered.lock().unwrap().clone()
    }

    /// Waits for the injectors to stop; returns the answered injections,
    /// which are owed to every webhook. Panics if the gateway refused any
    /// injection while it ran.
    pub(crate) async fn end(mut self) -> Vec<(String, String)> {
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
// The outcome: what the DLQs hold, and what is owed.

/// The session DLQs, by event and URL.
pub(crate) async fn dlq_entries(api: &Api) -> HashMap<Key, Vec<Value>> {
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
pub(crate) fn owed_keys(owed: &[(String, String)]) -> Vec<Key> {
    owed.iter()
        .flat_map(|(s, m)| BEHAVIOURS.map(|b| (b, s.clone(), m.clone())))
        .collect()
}

// ---------------------------------------------------------------------------
// Waiting.

/// Polls `ready` every 20 ms until it holds, failing after [`DEADLINE`].
pub(crate) async fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    wait_for(what, || std::future::ready(ready())).await;
}

/// Polls `ready` every 20 ms until it holds, failing after [`DEADLINE`].
async fn wait_for<F: std::future::Future<Output = bool>>(what: &str, mut ready: impl FnMut() -> F) {
    let deadline = Instant::now() + DEADLINE;
    while !ready().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        // Polls the condition, with the deadline above.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
