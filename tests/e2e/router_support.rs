//! The gateway's parts wired in process the way `server::start` wires them,
//! without serving: for the tests that need the router itself (the routes it
//! really serves, see `openapi.rs`) or a gateway whose background workers are
//! started and stopped by hand (readiness, see `observability.rs`).

use std::sync::Arc;

use switchboard::Config;
use switchboard::api::openapi::inventory::{RouteEntry, routes_of};
use switchboard::api::{AppState, Services};
use switchboard::blast::Blasts;
use switchboard::events::EventBus;
use switchboard::messages::SendCore;
use switchboard::metrics::Sources;
use switchboard::network::Network;
use switchboard::network::sim::SimNetwork;
use switchboard::plugins::Plugins;
use switchboard::scheduler::Scheduler;
use switchboard::sessions::Sessions;
use switchboard::store::Store;
use switchboard::webhooks::Webhooks;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// An unserved gateway: its state, and the token and tracker of its
/// background work. The scheduler is not started (see [`App::start_scheduler`]).
pub struct App {
    /// What every handler reaches.
    pub state: AppState,
    /// Stops the background work.
    pub stop: CancellationToken,
    /// The background tasks.
    pub tasks: TaskTracker,
    _dir: TempDir,
}

impl App {
    /// The parts, built like `server::start` builds them, on a fresh data
    /// directory; the simulated network only when `sim_enabled`.
    pub async fn build(sim_enabled: bool) -> App {
        let dir = tempfile::tempdir().expect("temporary directory");
        let config = Config::new(dir.path());
        let store = Store::open(dir.path()).expect("the store opens");
        let stop = CancellationToken::new();
        let tasks = TaskTracker::new();
        let events = EventBus::new();
        let plugins = Plugins::start(store.clone(), config.plugins.clone(), dir.path())
            .expect("the plugin engine starts");
        let sim = sim_enabled.then(|| {
            SimNetwork::new(
                store.clone(),
                config.sim.clone(),
                stop.clone(),
                tasks.clone(),
            )
        });
        let networks: Vec<Arc<dyn Network>> = sim
            .iter()
            .map(|s| Arc::new(s.clone()) as Arc<dyn Network>)
            .collect();
        let sessions = Sessions::new(
            store.clone(),
            events.clone(),
            networks,
            config.network.clone(),
            config.reconnect.clone(),
            stop.clone(),
            tasks.clone(),
        );
        let webhooks = Webhooks::start(
            store.clone(),
            config.webhooks.clone(),
            stop.clone(),
            tasks.clone(),
        )
        .expect("webhook delivery starts");
        let send = SendCore::new(sessions.clone(), store.clone()).with_plugins(plugins.clone());
        let scheduler = Scheduler::new(
            store.clone(),
            send.clone(),
            sessions.clone(),
            config.schedule.clone(),
        );
        let blasts = Blasts::start(
            store.clone(),
            send.clone(),
            sessions.clone(),
            events.clone(),
            config.blasts.clone(),
            stop.clone(),
            tasks.clone(),
            Some(Arc::new(plugins.clone())),
        );
        let metrics = switchboard::metrics::build(Sources {
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
            sessions,
            store,
            sim,
            token: Arc::from(switchboard_tests::TOKEN),
            events,
            shutdown: CancellationToken::new(),
            webhooks,
            plugins,
            metrics,
        });
        App {
            state,
            stop,
            tasks,
            _dir: dir,
        }
    }

    /// The router `server::start` serves, over this state.
    pub fn router(&self) -> axum::Router {
        switchboard::api::router(
            self.state.clone(),
            switchboard::config::DEFAULT_MAX_BODY_BYTES,
        )
    }

    /// Every method and path the router serves.
    pub fn routes(&self) -> Vec<RouteEntry> {
        routes_of(&self.router()).unwrap_or_else(|e| panic!("the router's routes: {e}"))
    }

    /// Starts the scheduler's worker (as `server::start` does after the restore).
    pub fn start_scheduler(&self) {
        self.state.scheduler.start(self.stop.clone(), &self.tasks);
    }

    /// Serves the router on `127.0.0.1:0`; returns `http://<addr>`.
    pub async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let addr = listener.local_addr().expect("an address");
        let app = self.router();
        let stop = self.state.shutdown.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
        });
        format!("http://{addr}")
    }

    /// Stops the background work and waits for it to end.
    pub async fn stop_workers(&self) {
        self.stop.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.stop.cancel();
        self.state.shutdown.cancel();
    }
}
