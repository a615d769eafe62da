//! A crash harness: the real `switchboard` binary on a temporary data
//! directory, driven over HTTP, killed with SIGKILL at a moment a test
//! chooses, and started again on the same directory.
//!
//! - [`Rig`] owns the data directory and the running process: start it with
//!   the sim network, a known API token and the chosen [`Intervals`],
//!   [`Rig::kill`] it, [`Rig::restart`] it and wait until it is ready.
//! - [`Api`] is its HTTP API, with the reads the invariant checks need: the
//!   sim's outbox (what the network received) and the message history.
//! - [`Load`] is concurrent traffic whose answered requests are recorded, so
//!   a kill can come after N answered requests and the test knows what the
//!   gateway owes afterwards.
//! - [`until`] waits on an observable condition with a deadline: the other
//!   kill points (a worker mid-batch as seen from the sim, a send held in
//!   flight by a sim fault) are conditions a test waits for before killing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::process::Command;
use tokio::task::JoinSet;

use crate::TOKEN;
use crate::process::GatewayProcess;

/// How long the waits of a crash scenario may take: long enough for a
/// restart of the binary on a loaded two-core machine.
pub const CRASH_PATIENCE: Duration = Duration::from_secs(60);

/// Which worker timings a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intervals {
    /// Short blast worker timings (offline retry 50 ms, idle poll 500 ms), for
    /// scenarios that test durability rather than what wakes the worker.
    Fast,
    /// The defaults an operator gets: nothing is set, so the workers sleep as
    /// long as in production and only the events meant to wake them do.
    Production,
}

/// The environment every run gets: the sim network pairing at once, the
/// known token, logging at `info` (the harness reads the address from the
/// "listening" line).
fn base_env() -> Vec<(String, String)> {
    [
        ("API_TOKEN", TOKEN),
        ("SWITCHBOARD_LOG", "info"),
        ("SWITCHBOARD_NETWORK", "sim"),
        ("SWITCHBOARD_SIM_PAIR_DELAY_MS", "0"),
        ("SWITCHBOARD_SIM_QR_INTERVAL_MS", "50"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn interval_env(intervals: Intervals) -> Vec<(String, String)> {
    match intervals {
        Intervals::Fast => vec![
            ("SWITCHBOARD_BLAST_OFFLINE_RETRY_MS".into(), "50".into()),
            ("SWITCHBOARD_BLAST_IDLE_POLL_MS".into(), "500".into()),
        ],
        Intervals::Production => Vec::new(),
    }
}

/// When a SIGKILL was sent, and when the process was gone.
#[derive(Debug, Clone, Copy)]
pub struct Kill {
    /// The signal was sent.
    pub at: Instant,
    /// The process had exited.
    pub dead: Instant,
}

/// A rig's data directory: its own temporary one, or one the test made
/// (a small filesystem it mounted).
enum DataDir {
    Temp(TempDir),
    Given(PathBuf),
}

impl DataDir {
    fn path(&self) -> &Path {
        match self {
            DataDir::Temp(t) => t.path(),
            DataDir::Given(p) => p,
        }
    }
}

/// The gateway binary on one data directory, across kills and restarts.
pub struct Rig {
    binary: PathBuf,
    dir: DataDir,
    env: Vec<(String, String)>,
    process: Option<GatewayProcess>,
    api: Api,
}

impl Rig {
    /// Starts `binary` (the test crate's `CARGO_BIN_EXE_…`) on a fresh data
    /// directory and waits until it is ready.
    pub async fn start(binary: &str, intervals: Intervals) -> Rig {
        Self::start_with_env(binary, intervals, &[]).await
    }

    /// [`Rig::start`] with `extra` environment variables (kept across restarts).
    pub async fn start_with_env(binary: &str, intervals: Intervals, extra: &[(&str, &str)]) -> Rig {
        let dir = tempfile::tempdir().expect("a temporary data directory");
        Self::start_on(binary, intervals, extra, DataDir::Temp(dir)).await
    }

    /// [`Rig::start_with_env`] on `data_dir`, which the test owns (and
    /// outlives the rig).
    pub async fn start_in(
        binary: &str,
        intervals: Intervals,
        extra: &[(&str, &str)],
        data_dir: &Path,
    ) -> Rig {
        Self::start_on(
            binary,
            intervals,
            extra,
            DataDir::Given(data_dir.to_owned()),
        )
        .await
    }

    async fn start_on(
        binary: &str,
        intervals: Intervals,
        extra: &[(&str, &str)],
        dir: DataDir,
    ) -> Rig {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut env = base_env();
        env.extend(interval_env(intervals));
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let process = spawn(Path::new(binary), dir.path(), &env).await;
        let api = Api::new(&process.base);
        let rig = Rig {
            binary: binary.into(),
            dir,
            env,
            process: Some(process),
            api,
        };
        rig.api.wait_ready().await;
        rig
    }

    /// The API of the running process (a clone stays bound to that process).
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The running process's id (to read its memory from `/proc`).
    pub fn pid(&self) -> u32 {
        self.process.as_ref().expect("the gateway runs").pid()
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Sends SIGKILL and waits until the process is gone: nothing is
    /// flushed, no request or worker finishes.
    pub async fn kill(&mut self) -> Kill {
        let process = self.process.take().expect("the gateway runs");
        let at = Instant::now();
        process.kill().await;
        Kill {
            at,
            dead: Instant::now(),
        }
    }

    /// Starts the binary again on the same data directory with the same
    /// environment and waits until it is ready and `sessions` are logged in
    /// again.
    pub async fn restart(&mut self, sessions: &[&str]) {
        assert!(self.process.is_none(), "restart follows a kill");
        let process = spawn(&self.binary, self.dir.path(), &self.env).await;
        self.api = Api::new(&process.base);
        self.process = Some(process);
        self.api.wait_ready().await;
        for session in sessions {
            self.api.wait_logged_in(session).await;
        }
    }

    /// What the running process logged so far (for failure messages).
    pub fn log(&self) -> String {
        self.process
            .as_ref()
            .map(|p| format!("{}\n{}", p.stdout.text(), p.stderr.text()))
            .unwrap_or_default()
    }
}

async fn spawn(binary: &Path, dir: &Path, env: &[(String, String)]) -> GatewayProcess {
    let mut cmd = Command::new(binary);
    cmd.env_clear()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    GatewayProcess::start(cmd).await
}

/// The HTTP API of one running process.
#[derive(Clone)]
pub struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    /// The API of the gateway at `base` (`http://127.0.0.1:<port>`).
    pub fn new(base: &str) -> Api {
        Api {
            base: base.to_owned(),
            http: crate::http_client(),
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The HTTP client (for requests `call` does not make: streamed bodies).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// An authenticated request; `Err` when no answer came (the process died).
    pub async fn call(
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
    pub async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        status: u16,
    ) -> Value {
        let what = format!("{method} {path}");
        let (got, body) = self
            .call(method, path, body)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got, status, "{what}: {body}");
        body
    }

    /// Authenticated GET expecting 200.
    pub async fn get(&self, path: &str) -> Value {
        self.expect(Method::GET, path, None, 200).await
    }

    /// Waits until `/readyz` answers 200: the store is open and every
    /// background worker runs.
    pub async fn wait_ready(&self) {
        until("the gateway to be ready", || async {
            matches!(self.call(Method::GET, "/readyz", None).await, Ok((200, _)))
        })
        .await;
    }

    /// Creates a sim session, connects it and waits until it is logged in.
    pub async fn pair(&self, session: &str) {
        self.expect(
            Method::POST,
            "/api/v1/sessions",
            Some(json!({ "id": session })),
            201,
        )
        .await;
        self.expect(
            Method::POST,
            &format!("/api/v1/sessions/{session}/connect"),
            None,
            200,
        )
        .await;
        self.wait_logged_in(session).await;
    }

    /// Waits until a session is logged in.
    pub async fn wait_logged_in(&self, session: &str) {
        let path = format!("/api/v1/sessions/{session}/status");
        until(&format!("{session} to be logged in"), || async {
            matches!(self.call(Method::GET, &path, None).await,
                Ok((200, body)) if body["status"] == "logged_in")
        })
        .await;
    }

    /// Sets the sim's faults of a session (memory only: a restart clears them).
    pub async fn faults(&self, session: &str, faults: Value) {
        self.expect(
            Method::POST,
            &format!("/api/v1/sim/sessions/{session}/faults"),
            Some(faults),
            200,
        )
        .await;
    }

    /// What the sim network received from a session, oldest first: the
    /// record of what went out, kept in the sim's own durable table.
    pub async fn outbox(&self, session: &str) -> Vec<Value> {
        let body = self
            .get(&format!("/api/v1/sim/sessions/{session}/outbox"))
            .await;
        body["messages"].as_array().cloned().expect("messages")
    }

    /// How many messages the sim network received from a session; `None`
    /// when the process did not answer.
    pub async fn outbox_len(&self, session: &str) -> Option<usize> {
        let path = format!("/api/v1/sim/sessions/{session}/outbox");
        match self.call(Method::GET, &path, None).await {
            Ok((200, body)) => body["count"].as_u64().map(|n| n as usize),
            _ => None,
        }
    }

    /// Every stored message record of a session, sent and received, read
    /// page by page.
    pub async fn history(&self, session: &str) -> Vec<Value> {
        let mut all = Vec::new();
        for offset in (0..).step_by(1000) {
            let page = self
                .get(&format!(
                    "/api/v1/sessions/{session}/messages?limit=1000&offset={offset}"
                ))
                .await;
            let messages = page["messages"].as_array().cloned().unwrap_or_default();
            let done = messages.len() < 1000;
            all.extend(messages);
            if done {
                break;
            }
        }
        all
    }
}

/// One request of a [`Load`].
pub struct Request {
    /// The method.
    pub method: Method,
    /// The path under the gateway's address.
    pub path: String,
    /// The JSON body.
    pub body: Option<Value>,
}

/// A request the gateway answered with an accepted status.
#[derive(Debug, Clone)]
pub struct Answered {
    /// The request's index in the load.
    pub index: usize,
    /// The status.
    pub status: u16,
    /// The answer's body.
    pub body: Value,
}

/// Where a load stood once it ended.
#[derive(Debug)]
pub struct Outcome {
    /// Every request answered with an accepted status: what the gateway owes.
    pub answered: Vec<Answered>,
    /// The indices of requests started before the process was gone and
    /// never answered: in flight at the kill.
    pub cut_off: Vec<usize>,
}

struct Shared {
    answered: Mutex<Vec<Answered>>,
    /// Requests that got no answer, with when each started.
    unanswered: Mutex<Vec<(usize, Instant)>>,
    refused: Mutex<Vec<String>>,
    halted: AtomicBool,
    next: AtomicUsize,
}

/// Concurrent requests from `workers` tasks, `total` at most, each answer
/// recorded. A request answered with a status outside `accept` while the
/// gateway ran fails the test when the load ends.
pub struct Load {
    shared: Arc<Shared>,
    tasks: JoinSet<()>,
}

impl Load {
    /// Starts the load; `request(i)` builds the `i`-th request.
    pub fn start(
        api: &Api,
        workers: usize,
        total: usize,
        accept: &'static [u16],
        request: impl Fn(usize) -> Request + Send + Sync + 'static,
    ) -> Load {
        let shared = Arc::new(Shared {
            answered: Mutex::default(),
            unanswered: Mutex::default(),
            refused: Mutex::default(),
            halted: AtomicBool::new(false),
            next: AtomicUsize::new(0),
        });
        let request = Arc::new(request);
        let mut tasks = JoinSet::new();
        for _ in 0..workers {
            let (api, shared, request) = (api.clone(), shared.clone(), request.clone());
            tasks.spawn(async move {
                while !shared.halted.load(Ordering::SeqCst) {
                    let index = shared.next.fetch_add(1, Ordering::SeqCst);
                    if index >= total {
                        break;
                    }
                    let r = request(index);
                    let started = Instant::now();
                    match api.call(r.method, &r.path, r.body).await {
                        Ok((status, body)) if accept.contains(&status) => {
                            let answer = Answered {
                                index,
                                status,
                                body,
                            };
                            shared.answered.lock().unwrap().push(answer);
                        }
                        Ok((status, body)) => {
                            let what = format!("request {index}: {status} {body}");
                            shared.refused.lock().unwrap().push(what);
                        }
                        // No answer: the kill cut it off, or it started after
                        // the process was gone (a failure while the gateway
                        // ran shows as too few answers).
                        Err(_) => {
                            let mut unanswered = shared.unanswered.lock().unwrap();
                            unanswered.push((index, started));
                        }
                    }
                }
            });
        }
        Load { shared, tasks }
    }

    /// How many requests were answered so far.
    pub fn answered(&self) -> usize {
        self.shared.answered.lock().unwrap().len()
    }

    /// Waits until `n` requests were answered.
    pub async fn wait_answered(&self, n: usize) {
        until(&format!("{n} answered requests"), || async {
            self.answered() >= n
        })
        .await;
    }

    /// Stops starting new requests (those under way go on).
    pub fn halt(&self) {
        self.shared.halted.store(true, Ordering::SeqCst);
    }

    /// Waits for every worker to stop; returns what was answered and what
    /// the kill (whose process was gone at `dead`) cut off. Panics if the
    /// gateway refused any request.
    pub async fn end(mut self, dead: Instant) -> Outcome {
        while let Some(done) = self.tasks.join_next().await {
            done.expect("a load worker ends without panicking");
        }
        let refused = self.shared.refused.lock().unwrap();
        assert!(
            refused.is_empty(),
            "{} request(s) refused while the gateway ran, e.g. {:?}",
            refused.len(),
            &refused[..refused.len().min(3)]
        );
        let mut answered = self.shared.answered.lock().unwrap().clone();
        answered.sort_by_key(|a| a.index);
        Outcome {
            answered,
            cut_off: (self.shared.unanswered.lock().unwrap().iter())
                .filter(|(_, started)| *started < dead)
                .map(|(index, _)| *index)
                .collect(),
        }
    }
}

/// Kills the rig once `load` has `n` answered requests, with the load still
/// running (so requests are in flight at the kill), then stops the load;
/// returns its outcome, with every request the kill cut off.
pub async fn kill_after_answers(rig: &mut Rig, load: Load, n: usize) -> (Kill, Outcome) {
    load.wait_answered(n).await;
    let kill = rig.kill().await;
    load.halt();
    (kill, load.end(kill.dead).await)
}

/// Polls `ready` every 10 ms until it holds, failing the test after
/// [`CRASH_PATIENCE`].
pub async fn until<F, Fut>(what: &str, mut ready: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + CRASH_PATIENCE;
    while !ready().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        // Polls the condition, with the deadline above.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Polls `ready` every 10 ms until it holds; panics if it does not within
/// `limit` (a deadline the behaviour under test promises).
pub async fn within<F, Fut>(what: &str, limit: Duration, mut ready: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !ready().await {
        assert!(
            started.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        // Polls the condition, with the limit above.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    started.elapsed()
}
