//! The real `switchboard` binary as a child process: started with the
//! arguments, environment and working directory a test chooses, its output
//! collected line by line, its address read from its own "listening" log
//! line, and stopped gracefully (SIGTERM) or killed (SIGKILL).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// How long a started gateway may take to log that it listens.
const START_PATIENCE: Duration = Duration::from_secs(60);

/// Lines a child wrote to one of its output streams, shared with the task
/// that reads them.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    /// Every line so far.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Every line so far, joined with newlines.
    pub fn text(&self) -> String {
        self.all().join("\n")
    }

    /// Reads `stream` to its end in the background, one line at a time.
    pub fn collect(stream: impl AsyncRead + Unpin + Send + 'static) -> Lines {
        let lines = Lines::default();
        let sink = lines.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stream).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                sink.0.lock().unwrap().push(line);
            }
        });
        lines
    }
}

/// A running gateway process.
pub struct GatewayProcess {
    child: Child,
    /// What it wrote to standard output (the log).
    pub stdout: Lines,
    /// What it wrote to standard error (the token announcement, fatal errors).
    pub stderr: Lines,
    /// `http://<the address it listens on>`.
    pub base: String,
}

impl GatewayProcess {
    /// Spawns `cmd` (a `switchboard serve …` command) with piped output and
    /// waits until it logs the address it listens on. Panics with its output
    /// when it exits first or takes too long.
    pub async fn start(mut cmd: Command) -> GatewayProcess {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("the gateway binary starts");
        let stdout = Lines::collect(child.stdout.take().expect("piped stdout"));
        let stderr = Lines::collect(child.stderr.take().expect("piped stderr"));
        let deadline = tokio::time::Instant::now() + START_PATIENCE;
        loop {
            if let Some(addr) = stdout.all().iter().find_map(|l| listening_addr(l)) {
                return GatewayProcess {
                    child,
                    stdout,
                    stderr,
                    base: format!("http://{addr}"),
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                // Not synchronisation: the start has failed either way; this
                // lets the readers reach the end of what it wrote, for the
                // panic message.
                tokio::time::sleep(Duration::from_millis(100)).await;
                panic!(
                    "the gateway exited ({status}) before listening\nstdout:\n{}\nstderr:\n{}",
                    stdout.text(),
                    stderr.text()
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the gateway did not log that it listens\nstdout:\n{}\nstderr:\n{}",
                stdout.text(),
                stderr.text()
            );
            // Polls the log, with the deadline above.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the gateway still runs")
    }

    /// Sends SIGTERM and waits for the graceful stop; panics unless it exits 0.
    pub async fn stop(mut self) {
        signal(self.pid(), "-TERM").await;
        let status = self.child.wait().await.expect("the gateway exits");
        assert!(
            status.success(),
            "a graceful stop: {status}\nstderr:\n{}",
            self.stderr.text()
        );
    }

    /// Sends SIGKILL: the process ends at once, with no chance to flush or
    /// finish anything.
    pub async fn kill(mut self) {
        signal(self.pid(), "-KILL").await;
        let _ = self.child.wait().await;
    }
}

async fn signal(pid: u32, sig: &str) {
    let sent = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .await
        .expect("kill runs");
    assert!(sent.success(), "kill {sig} {pid}");
}

/// The address in a "switchboard listening" log line, text or JSON.
pub fn listening_addr(line: &str) -> Option<String> {
    if !line.contains("switchboard listening") {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
        return v["addr"].as_str().map(str::to_owned);
    }
    let rest = &line[line.find("addr=")? + "addr=".len()..];
    Some(rest.split_whitespace().next()?.to_owned())
}
