//! Starting and stopping the gateway: open the store, resolve the token, build
//! the networks and the session registry, restore sessions, and serve HTTP
//! until asked to stop; then finish in-flight requests, stop background work
//! and close the store.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::{self, AppState, Services};
use crate::blast::Blasts;
use crate::config::Config;
use crate::events::EventBus;
use crate::messages::SendCore;
use crate::metrics::{Metrics, Sources};
use crate::network::Network;
use crate::network::sim::SimNetwork;
use crate::plugins::Plugins;
use crate::scheduler::Scheduler;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::token::{self, TokenSource};
use crate::webhooks::Webhooks;

/// A running gateway.
pub struct Running {
    addr: SocketAddr,
    token: String,
    http_stop: CancellationToken,
    background_stop: CancellationToken,
    tasks: TaskTracker,
    server: JoinHandle<std::io::Result<()>>,
    metrics_server: Option<(SocketAddr, JoinHandle<std::io::Result<()>>)>,
    sessions: Sessions,
    events: EventBus,
}

/// Starts the gateway and returns once it accepts connections.
pub async fn start(config: Config) -> anyhow::Result<Running> {
    let config = config.resolve_paths()?;
    tracing::info!(data_dir = %config.data_dir.display(), "using the data directory");
    let store = Store::open(&config.data_dir).context("could not open the store")?;
    let (token, source) = token::resolve(config.api_token.as_deref(), &config.data_dir)
        .context("could not read or create the API token file")?;
    announce_token(&token, &source);

    let background_stop = CancellationToken::new();
    let tasks = TaskTracker::new();
    let events = EventBus::new();
    let plugins = Plugins::start(store.clone(), config.plugins.clone(), &config.data_dir)
        .context("could not start the plugin engine")?;
    events.set_filter(Arc::new(plugins.clone()));
    let sim = config.sim_enabled.then(|| {
        SimNetwork::new(
            store.clone(),
            config.sim.clone(),
            background_stop.clone(),
            tasks.clone(),
        )
    });
    let mut networks: Vec<Arc<dyn Network>> = Vec::new();
    if let Some(sim) = &sim {
        networks.push(Arc::new(sim.clone()));
    }
    #[cfg(feature = "whatsapp")]
    networks.push(Arc::new(crate::network::whatsapp::WhatsAppNetwork::new(
        store.clone(),
        config.whatsapp.clone(),
    )));
    if !networks.iter().any(|n| n.name() == config.network) {
        let available: Vec<_> = networks.iter().map(|n| n.name()).collect();
        anyhow::bail!(
            "the default network `{}` is not available in this build or configuration (available: {})",
            config.network,
            if available.is_empty() {
                "none".to_owned()
            } else {
                available.join(", ")
            }
        );
    }
    let sessions = Sessions::new(
        store.clone(),
        events.clone(),
        networks,
        config.network.clone(),
        config.reconnect.clone(),
        background_stop.clone(),
        tasks.clone(),
    );
    let webhooks = Webhooks::start(
        store.clone(),
        config.webhooks.clone(),
        background_stop.clone(),
        tasks.clone(),
    )
    .context("could not start webhook delivery")?;
    webhooks.set_scoped_filter(Arc::new(plugins.clone()));
    // Before serving: the directory's plugins are in place when the API answers.
    plugins
        .watch_directory(background_stop.clone(), &tasks)
        .await;
    events.add_subscriber(Arc::new(webhooks.clone()));
    // Subscribed before sessions are restored, so no `connected` is missed.
    let send = SendCore::new(sessions.clone(), store.clone()).with_plugins(plugins.clone());
    let scheduler = Scheduler::new(
        store.clone(),
        send.clone(),
        sessions.clone(),
        config.schedule.clone(),
    );
    events.add_subscriber(scheduler.subscriber());
    // Also ends the event streams, so the graceful shutdown does not wait on them.
    let http_stop = CancellationToken::new();
    let restored = sessions
        .restore()
        .await
        .context("could not restore sessions")?;
    scheduler.start(background_stop.clone(), &tasks);
    // After the restore: the worker first resolves sends a stop interrupted,
    // which needs the sessions attached.
    let blasts = Blasts::start(
        store.clone(),
        send.clone(),
        sessions.clone(),
        events.clone(),
        config.blasts.clone(),
        background_stop.clone(),
        tasks.clone(),
        Some(Arc::new(plugins.clone())),
    );
    events.add_subscriber(blasts.waker());
    let metrics = crate::metrics::build(Sources {
        store: store.clone(),
        sessions: sessions.clone(),
        events: events.clone(),
        webhooks: webhooks.clone(),
        blasts: blasts.clone(),
        plugins: plugins.clone(),
    });
    let state = AppState::new(Services {
        send,
        scheduler,
        blasts,
        sessions: sessions.clone(),
        store,
        sim,
        token: Arc::from(token.as_str()),
        events: events.clone(),
        shutdown: http_stop.clone(),
        webhooks,
        plugins,
        metrics: metrics.clone(),
    });
    let app = api::router(state, config.max_body_bytes);
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("could not listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(http_stop.clone().cancelled_owned())
            .into_future(),
    );
    let metrics_server = match config.metrics_listen {
        Some(at) => Some(serve_metrics(at, metrics, http_stop.clone()).await?),
        None => None,
    };
    tracing::info!(%addr, data_dir = %config.data_dir.display(), sessions = restored, "switchboard listening");
    Ok(Running {
        addr,
        token,
        http_stop,
        background_stop,
        tasks,
        server,
        metrics_server,
        sessions,
        events,
    })
}

/// Serves `/metrics` alone, without a token, on its own address.
async fn serve_metrics(
    at: SocketAddr,
    metrics: Metrics,
    stop: CancellationToken,
) -> anyhow::Result<(SocketAddr, JoinHandle<std::io::Result<()>>)> {
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .with_context(|| format!("could not listen for metrics on {at}"))?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(
        axum::serve(listener, api::metrics::standalone(metrics))
            .with_graceful_shutdown(stop.cancelled_owned())
            .into_future(),
    );
    tracing::info!(%addr, "metrics listening (no token)");
    Ok((addr, server))
}

fn announce_token(token: &str, source: &TokenSource) {
    match source {
        TokenSource::Generated(path) => {
            // Shown once, on the start that created it; later starts read the
            // file. On stderr, for the person at the terminal: the log stream
            // (stdout, maybe JSON for a shipper) never carries the token.
            eprintln!(
                "Generated an API token and saved it to {} (owner-only).\n  API token: {token}\n  Send it as `Authorization: Bearer <token>`; it is shown only this once.",
                path.display()
            );
            tracing::info!(file = %path.display(), "generated an API token into the data directory");
        }
        TokenSource::File(path) => {
            tracing::info!(file = %path.display(), "using the API token from the data directory")
        }
        TokenSource::Configured => tracing::info!("using the configured API token"),
    }
}

impl Running {
    /// The address the gateway listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address of the separate metrics listener, when configured.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_server.as_ref().map(|(addr, _)| *addr)
    }

    /// The API token in use.
    pub fn api_token(&self) -> &str {
        &self.token
    }

    /// The event bus (for embedders and tests that watch events in process).
    pub fn events(&self) -> &EventBus {
        &self.events
    }

    /// Stops accepting connections, lets in-flight requests finish, stops the
    /// background work, closes every session's connection and the store.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.http_stop.cancel();
        let served = self.server.await.context("the HTTP server task failed")?;
        if let Some((_, metrics)) = self.metrics_server {
            metrics
                .await
                .context("the metrics server task failed")?
                .context("the metrics server failed")?;
        }
        self.sessions.shutdown().await;
        self.background_stop.cancel();
        self.tasks.close();
        self.tasks.wait().await;
        drop(self.sessions);
        tracing::info!("switchboard stopped");
        served.context("the HTTP server failed")
    }
}
