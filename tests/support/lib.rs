//! Test support: a real Switchboard server on `127.0.0.1:0` with a temporary
//! data directory, and a real HTTP client that speaks to it.

pub mod assembled;
pub mod crash;
pub mod media;
pub mod moto;
pub mod nats;
pub mod plugins;
pub mod process;
pub mod proxy;
pub mod readme;
pub mod receiver;
pub mod small_disk;
pub mod sse;
pub mod venv;
pub mod walkthrough;
#[cfg(feature = "whatsapp")]
pub mod wire;

use std::future::Future;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;
use switchboard::{Config, Running};
use tempfile::TempDir;

/// The token every test server uses.
pub const TOKEN: &str = "test-token-0123456789";

/// How long `eventually` waits before failing a test.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// An HTTP client for tests. reqwest is built without a TLS provider of its
/// own, so the process's is installed first (the gateway does the same); a
/// test that talks only to a gateway process would otherwise have none.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A response: status, JSON body (or `Null`), headers.
#[derive(Debug)]
pub struct Resp {
    /// The status.
    pub status: StatusCode,
    /// The body as JSON; `Value::Null` when empty or not JSON.
    pub body: Value,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
}

impl Resp {
    /// Panics unless the status is `expected`; returns the body.
    #[track_caller]
    pub fn expect(self, expected: u16) -> Value {
        assert_eq!(
            self.status.as_u16(),
            expected,
            "unexpected status; body: {}",
            self.body
        );
        self.body
    }

    /// Panics unless this is an API error with `status` and `code`; returns the message.
    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str) -> String {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(self.body["success"], false, "error body: {}", self.body);
        assert_eq!(
            self.body["error"]["code"], code,
            "error body: {}",
            self.body
        );
        let message = self.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            !message.is_empty(),
            "an error needs a message: {}",
            self.body
        );
        message
    }
}

/// A running gateway for one test.
pub struct TestServer {
    running: Option<Running>,
    dir: TempDir,
    config: Config,
    base: String,
    http: reqwest::Client,
}

impl TestServer {
    /// A server with test defaults: the sim network pairs at once, QR codes
    /// rotate every 50 ms.
    pub async fn start() -> TestServer {
        Self::start_with(|_| {}).await
    }

    /// A server with test defaults changed by `tweak`.
    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut config = Config::new(dir.path());
        config.listen = "127.0.0.1:0".parse().expect("address");
        config.api_token = Some(TOKEN.into());
        config.sim.pair_delay = Duration::ZERO;
        config.sim.qr_interval = Duration::from_millis(50);
        config.webhooks.allow_private = true;
        tweak(&mut config);
        let running = switchboard::start(config.clone())
            .await
            .expect("server starts");
        TestServer {
            base: running.base_url(),
            running: Some(running),
            dir,
            config,
            http: http_client(),
        }
    }

    /// The running gateway's `whatsapp` backend.
    #[cfg(feature = "whatsapp")]
    pub fn whatsapp(&self) -> &switchboard::network::whatsapp::WhatsAppNetwork {
        self.running
            .as_ref()
            .expect("the server is running")
            .gateway()
            .whatsapp()
            .expect("this build has the whatsapp backend")
    }

    /// The running gateway's parts, for what no route can reach (a race made
    /// deterministic by calling the part the route calls, in the order the
    /// race would).
    pub fn services(&self) -> &switchboard::api::AppState {
        self.running
            .as_ref()
            .expect("the server is running")
            .gateway()
            .state()
    }

    /// Stops the server gracefully and starts it again on the same data directory.
    pub async fn restart(&mut self) {
        self.stop_running().await;
        let running = switchboard::start(self.config.clone())
            .await
            .expect("server restarts");
        self.base = running.base_url();
        self.running = Some(running);
    }

    /// Stops the server gracefully, awaits `while_down` with the data
    /// directory (the store is closed: it may be opened), then starts the
    /// server again on it.
    pub async fn restart_after<F, Fut>(&mut self, while_down: F)
    where
        F: FnOnce(std::path::PathBuf) -> Fut,
        Fut: Future<Output = ()>,
    {
        self.stop_running().await;
        while_down(self.dir.path().to_owned()).await;
        let running = switchboard::start(self.config.clone())
            .await
            .expect("server restarts");
        self.base = running.base_url();
        self.running = Some(running);
    }

    async fn stop_running(&mut self) {
        if let Some(r) = self.running.take() {
            r.shutdown().await.expect("clean shutdown");
        }
    }

    /// Stops the server gracefully.
    pub async fn stop(mut self) {
        self.stop_running().await;
    }

    /// The data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// A plain HTTP client for requests the helpers do not cover.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends an authenticated request with an optional JSON body.
    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Resp {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(b) = body {
            req = req.json(&b);
        }
        Self::read(req.send().await.expect("request sent")).await
    }

    /// Reads a response into a [`Resp`].
    pub async fn read(resp: reqwest::Response) -> Resp {
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body read");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Resp {
            status,
            body,
            headers,
        }
    }

    /// Authenticated GET.
    pub async fn get(&self, path: &str) -> Resp {
        self.call(Method::GET, path, None).await
    }

    /// Authenticated POST with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.call(Method::POST, path, Some(body)).await
    }

    /// Authenticated PUT with a JSON body.
    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.call(Method::PUT, path, Some(body)).await
    }

    /// Authenticated POST without a body.
    pub async fn post_empty(&self, path: &str) -> Resp {
        self.call(Method::POST, path, None).await
    }

    /// Authenticated DELETE.
    pub async fn delete(&self, path: &str) -> Resp {
        self.call(Method::DELETE, path, None).await
    }

    /// An authenticated GET whose answer is text (`/metrics`); panics unless 200.
    pub async fn get_text(&self, path: &str) -> String {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("request sent");
        assert_eq!(resp.status().as_u16(), 200, "GET {path}");
        resp.text().await.expect("a text body")
    }

    /// Creates a sim session with this id.
    pub async fn create_session(&self, id: &str) -> Value {
        self.post("/api/v1/sessions", serde_json::json!({ "id": id }))
            .await
            .expect(201)
    }

    /// Creates, connects and waits for a logged-in sim session; returns its status.
    pub async fn paired_session(&self, id: &str) -> Value {
        self.create_session(id).await;
        self.post_empty(&format!("/api/v1/sessions/{id}/connect"))
            .await
            .expect(200);
        self.wait_for_status(id, "logged_in").await
    }

    /// A session's stored inbound messages, newest first.
    pub async fn inbound_messages(&self, id: &str) -> Vec<Value> {
        let body = self
            .get(&format!("/api/v1/sessions/{id}/messages"))
            .await
            .expect(200);
        body["messages"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter(|m| m["direction"] == "inbound")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits until a session reports `status`; returns the status body.
    pub async fn wait_for_status(&self, id: &str, status: &str) -> Value {
        let path = format!("/api/v1/sessions/{id}/status");
        eventually(&format!("session {id} to be {status}"), || async {
            let body = self.get(&path).await.body;
            (body["status"] == status).then_some(body)
        })
        .await
    }
}

/// Polls `probe` every 10 ms until it returns `Some`, failing the test after [`PATIENCE`].
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
