//! A real S3-compatible server for the media store's tests: `moto_server`
//! from `moto[server]` on PyPI (installed by the tests into
//! `target/moto-venv`), on 127.0.0.1 with a free port, with a bucket made
//! for the test.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::process::Lines;

/// The `moto` release the tests run.
pub const MOTO: &str = "5.2.5";

/// How long a started server may take to answer.
const START_PATIENCE: Duration = Duration::from_secs(60);

/// The `moto_server` program, installed on first use.
pub async fn moto_server_binary() -> PathBuf {
    tokio::task::spawn_blocking(|| {
        crate::venv::venv_with("moto-venv", "moto[server]", MOTO)
            .join("bin")
            .join("moto_server")
    })
    .await
    .expect("the moto venv is ready")
}

/// A running `moto_server`.
pub struct MotoServer {
    _child: Child,
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// What it logged.
    pub log: Lines,
}

impl MotoServer {
    /// A server on a free port, answering once this returns.
    pub async fn start() -> MotoServer {
        let binary = moto_server_binary().await;
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().expect("its address").port()
        };
        let mut child = Command::new(&binary)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("moto_server starts");
        let log = Lines::collect(child.stderr.take().expect("piped stderr"));
        let endpoint = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let deadline = tokio::time::Instant::now() + START_PATIENCE;
        loop {
            if http.get(format!("{endpoint}/")).send().await.is_ok() {
                return MotoServer {
                    _child: child,
                    endpoint,
                    log,
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "moto_server exited ({status}) before answering:\n{}",
                    log.text()
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "moto_server did not answer in time:\n{}",
                log.text()
            );
            // Polls the port, with the deadline above.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Creates a bucket (moto takes unsigned requests).
    pub async fn create_bucket(&self, name: &str) {
        let resp = reqwest::Client::new()
            .put(format!("{}/{name}", self.endpoint))
            .send()
            .await
            .expect("the bucket request is sent");
        assert!(
            resp.status().is_success(),
            "creating bucket {name}: {}",
            resp.status()
        );
    }

    /// The keys in a bucket (the ListObjectsV2 answer's `<Key>`s).
    pub async fn keys(&self, bucket: &str) -> Vec<String> {
        let xml = reqwest::Client::new()
            .get(format!("{}/{bucket}?list-type=2", self.endpoint))
            .send()
            .await
            .expect("the listing request is sent")
            .text()
            .await
            .expect("the listing");
        xml.split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_owned)
            .collect()
    }
}
