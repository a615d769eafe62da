//! Real proxy servers for the tests: `pproxy` from PyPI (installed by the
//! tests into `target/pproxy-venv`), serving SOCKS5 and HTTP on 127.0.0.1
//! with a username and password, logging every connection it carries
//! (`socks5 <client> -> <destination>`), which is how a test sees that a
//! session's traffic went through it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::process::Lines;

/// The `pproxy` release the tests run.
pub const PPROXY: &str = "2.7.9";

/// The username every test proxy asks for.
pub const USERNAME: &str = "relay-user";

/// The password every test proxy asks for.
pub const PASSWORD: &str = "pr0xy-s3cret-Value";

/// How long a started proxy may take to listen.
const START_PATIENCE: Duration = Duration::from_secs(60);

/// The `pproxy` program, installed on first use.
pub async fn pproxy_binary() -> PathBuf {
    tokio::task::spawn_blocking(|| {
        crate::venv::venv_with("pproxy-venv", "pproxy", PPROXY)
            .join("bin")
            .join("pproxy")
    })
    .await
    .expect("the pproxy venv is ready")
}

/// A running proxy with a SOCKS5 and an HTTP port, both asking for
/// [`USERNAME`] and [`PASSWORD`].
pub struct Proxies {
    _child: Child,
    /// The SOCKS5 port.
    pub socks5: u16,
    /// The HTTP proxy port.
    pub http: u16,
    /// What it logged: one line per connection it carried.
    pub log: Lines,
}

/// A free port on 127.0.0.1 (closed again: the proxy binds it next).
pub fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    probe.local_addr().expect("its address").port()
}

impl Proxies {
    /// Both proxies, listening once this returns.
    pub async fn start() -> Proxies {
        let binary = pproxy_binary().await;
        let (socks5, http) = (free_port(), free_port());
        let auth = format!("#{USERNAME}:{PASSWORD}");
        let mut child = Command::new(&binary)
            .arg("-v")
            .arg("-l")
            .arg(format!("socks5://127.0.0.1:{socks5}{auth}"))
            .arg("-l")
            .arg(format!("http://127.0.0.1:{http}{auth}"))
            // Each connection's line as it happens, not when a buffer fills.
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("pproxy starts");
        let log = Lines::collect(child.stdout.take().expect("piped stdout"));
        let deadline = tokio::time::Instant::now() + START_PATIENCE;
        loop {
            let up = |port| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
            if up(socks5) && up(http) {
                return Proxies {
                    _child: child,
                    socks5,
                    http,
                    log,
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("pproxy exited ({status}) before listening:\n{}", log.text());
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "pproxy did not listen in time:\n{}",
                log.text()
            );
            // Polls the ports, with the deadline above.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// How many connections `kind` (`socks5`, `http`) carried to
    /// `destination` (`127.0.0.1:port`).
    pub fn carried(&self, kind: &str, destination: &str) -> usize {
        self.log
            .all()
            .iter()
            .filter(|l| {
                l.starts_with(&format!("{kind} ")) && l.ends_with(&format!("-> {destination}"))
            })
            .count()
    }
}
