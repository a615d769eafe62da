//! The gateway under test: `switchboard::start` on the sim network with a
//! temporary data directory, run on its own runtime (the "server" cores),
//! and the admin calls the benchmark sets it up with.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use switchboard::{Config, Running};
use tempfile::TempDir;
use tokio::runtime::Handle;

/// The API token of every benchmark gateway.
pub const TOKEN: &str = "bench-token-0123456789";

/// A running gateway.
pub struct Gateway {
    running: Option<Running>,
    server: Handle,
    dir: TempDir,
    config: Config,
    base: String,
    http: reqwest::Client,
}

impl Gateway {
    /// Starts a gateway on `server` (a runtime handle) with benchmark
    /// defaults: sim sessions pair at once, private webhook URLs allowed.
    pub async fn start(server: &Handle) -> anyhow::Result<Gateway> {
        Self::start_with(server, |_| {}).await
    }

    /// [`Gateway::start`] with the benchmark defaults changed by `tweak`.
    pub async fn start_with(
        server: &Handle,
        tweak: impl FnOnce(&mut Config),
    ) -> anyhow::Result<Gateway> {
        let dir = tempfile::tempdir()?;
        let mut config = Config::new(dir.path());
        config.listen = "127.0.0.1:0".parse()?;
        config.api_token = Some(TOKEN.into());
        config.sim.pair_delay = Duration::ZERO;
        config.webhooks.allow_private = true;
        tweak(&mut config);
        let running = server
            .spawn(switchboard::start(config.clone()))
            .await?
            .context("the gateway starts")?;
        Ok(Gateway {
            base: running.base_url(),
            running: Some(running),
            server: server.clone(),
            dir,
            config,
            http: reqwest::Client::new(),
        })
    }

    /// Stops the gateway gracefully and starts it again on the same data
    /// directory; how long the start took until `/readyz` answered 200.
    pub async fn restart(&mut self) -> anyhow::Result<Duration> {
        self.stop_running().await?;
        let t = Instant::now();
        let running = self
            .server
            .spawn(switchboard::start(self.config.clone()))
            .await?
            .context("the gateway restarts")?;
        self.base = running.base_url();
        self.running = Some(running);
        let health = format!("{}/readyz", self.base);
        loop {
            if let Ok(r) = self.http.get(&health).send().await
                && r.status().is_success()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(t.elapsed())
    }

    async fn stop_running(&mut self) -> anyhow::Result<()> {
        if let Some(r) = self.running.take() {
            self.server.spawn(r.shutdown()).await??;
        }
        Ok(())
    }

    /// Stops the gateway gracefully.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.stop_running().await?;
        drop(self.dir);
        Ok(())
    }

    /// The gateway's simulated network, to inject traffic in-process.
    pub fn sim(&self) -> Option<switchboard::network::sim::SimNetwork> {
        self.running.as_ref()?.gateway().state().sim.clone()
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// How many store transactions have been committed so far (group
    /// commits and single writes), from `switchboard_store_write_seconds`.
    pub async fn store_commits(&self) -> anyhow::Result<u64> {
        let text = self
            .http
            .get(format!("{}/metrics", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await?
            .text()
            .await?;
        text.lines()
            .find_map(|l| l.strip_prefix("switchboard_store_write_seconds_count "))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| anyhow::anyhow!("no switchboard_store_write_seconds_count in /metrics"))
    }

    /// An authenticated call; the JSON answer, or an error naming the status.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await?;
        let status = resp.status();
        let value: Value = resp.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("{method} {path}: {status} {value}");
        }
        Ok(value)
    }

    /// Authenticated POST.
    pub async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    /// Authenticated GET.
    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.call(reqwest::Method::GET, path, None).await
    }

    /// Creates a session and connects it (no wait).
    pub async fn create_and_connect(&self, id: &str) -> anyhow::Result<()> {
        self.post("/api/v1/sessions", json!({ "id": id })).await?;
        self.post(&format!("/api/v1/sessions/{id}/connect"), json!({}))
            .await?;
        Ok(())
    }

    /// Waits until a session is `logged_in`.
    pub async fn wait_logged_in(&self, id: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.get(&format!("/api/v1/sessions/{id}/status")).await?;
            if s["status"] == "logged_in" {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("session {id} did not log in: {s}");
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A session, created, connected and logged in.
    pub async fn paired(&self, id: &str) -> anyhow::Result<()> {
        self.create_and_connect(id).await?;
        self.wait_logged_in(id).await
    }

    /// Registers a signed webhook for `events` of a session.
    pub async fn webhook(&self, session: &str, url: &str, events: &[&str]) -> anyhow::Result<()> {
        self.post(
            &format!("/api/v1/sessions/{session}/webhooks"),
            json!({ "url": url, "events": events, "secret": "bench-secret" }),
        )
        .await?;
        Ok(())
    }

    /// Uploads a plugin component under `name`; its id.
    pub async fn upload_plugin(&self, bytes: &[u8], name: &str) -> anyhow::Result<String> {
        let resp = self
            .http
            .post(format!("{}/api/v1/plugins?name={name}", self.base))
            .bearer_auth(TOKEN)
            .header("content-type", "application/wasm")
            .body(bytes.to_vec())
            .send()
            .await?;
        let status = resp.status();
        let v: Value = resp.json().await?;
        if !status.is_success() {
            bail!("plugin upload: {status} {v}");
        }
        Ok(v["id"].as_str().context("a plugin id")?.to_owned())
    }

    /// Binds a plugin as an event filter with `config` at `order`; the binding id.
    pub async fn bind_filter(
        &self,
        plugin: &str,
        order: i32,
        config: Value,
    ) -> anyhow::Result<String> {
        let b = self
            .post(
                "/api/v1/plugins/bindings",
                json!({ "plugin_id": plugin, "hook": "event_filter", "order": order, "config": config }),
            )
            .await?;
        Ok(b["id"].as_str().context("a binding id")?.to_owned())
    }

    /// Removes a binding.
    pub async fn unbind(&self, binding: &str) -> anyhow::Result<()> {
        self.call(
            reqwest::Method::DELETE,
            &format!("/api/v1/plugins/bindings/{binding}"),
            None,
        )
        .await?;
        Ok(())
    }
}
