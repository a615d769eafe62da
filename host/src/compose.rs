//! The one composition root: every part of the gateway assembled from a
//! [`Config`], wired to the others, and the router built over them.
//!
//! The server (`server.rs`) serves what this assembles; tests and the
//! benchmark assemble the gateway here too, so there is one wiring to get
//! right. Order matters and is kept here only:
//! 1. paths resolved, the store opened, the API token read or generated;
//! 2. the plugin host, then the networks and the session registry;
//! 3. webhook delivery and the scheduler subscribe to the event bus before
//!    sessions are restored, so no `connected` event is missed;
//! 4. sessions restored; then the blast worker starts (it first resolves
//!    sends a stop interrupted, which needs the sessions attached);
//! 5. the metrics registry, each part registering its own metrics; the
//!    NATS broker (when configured) joins the event bus as an outbox before
//!    sessions are restored and reads its send queue once the API exists;
//! 6. [`Gateway::start_workers`] starts the scheduler's worker.

use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::api::{self, AppState, Services};
use crate::blast::Blasts;
use crate::config::Config;
use crate::events::EventBus;
use crate::media_store::MediaStore;
use crate::messages::{PluginSends, SendCore};
use crate::metrics::{Metrics, Sources, WhatsAppCounters};
use crate::network::Network;
use crate::network::sim::SimNetwork;
use crate::plugins::Plugins;
use crate::runtime::chats::Chats;
use crate::runtime::counters::MediaCounters;
use crate::runtime::integrations::IntegrationOutbox;
use crate::runtime_media::Media;
use crate::scheduler::Scheduler;
use crate::sessions::{SessionData, SessionDefaults, Sessions};
use crate::store::Store;
use crate::token::{self, TokenSource};
use crate::webhooks::Webhooks;

/// An assembled gateway: its parts wired, sessions restored, not yet serving.
pub struct Gateway {
    config: Config,
    token: String,
    token_source: TokenSource,
    state: AppState,
    metrics: Metrics,
    restored: usize,
    background_stop: CancellationToken,
    tasks: TaskTracker,
    #[cfg(feature = "whatsapp")]
    whatsapp: Arc<crate::network::whatsapp::WhatsAppNetwork>,
}

/// Assembles the gateway from `config`: resolves its paths, opens the store,
/// builds and wires every part and restores the sessions. The scheduler's
/// worker starts with [`Gateway::start_workers`].
pub async fn assemble(config: Config) -> anyhow::Result<Gateway> {
    let config = config.resolve_paths()?;
    tracing::info!(data_dir = %config.data_dir.display(), "using the data directory");
    // Before the store opens: a token too short to use stops the start
    // with nothing opened.
    let (token, token_source) = token::resolve(config.api_token.as_deref(), &config.data_dir)?;
    let store = Store::open_with(&config.data_dir, config.storage.clone())
        .context("could not open the store")?;

    let background_stop = CancellationToken::new();
    let tasks = TaskTracker::new();
    let events = EventBus::durable(
        store.clone(),
        config.event_log.clone(),
        background_stop.clone(),
        &tasks,
    )
    .context("could not read the event log")?;
    let plugins = Plugins::start(store.clone(), config.plugins.clone(), &config.data_dir)
        .context("could not start the plugin engine")?;
    events.set_filter(Arc::new(plugins.clone()));
    let blobs = MediaStore::open(&config.media_store).context("could not open the media store")?;
    let media_counters = MediaCounters::default();
    let media = Media::new(
        store.clone(),
        blobs.clone(),
        config.media.clone(),
        media_counters.clone(),
    );
    let sim = config.sim_enabled.then(|| {
        SimNetwork::new(
            store.clone(),
            blobs.clone(),
            config.sim.clone(),
            background_stop.clone(),
            tasks.clone(),
        )
    });
    let networks = networks(&config, &store, &blobs, sim.as_ref())?;
    let sessions = Sessions::new(
        SessionData {
            store: store.clone(),
            bus: events.clone(),
            media: media.clone(),
        },
        networks.all,
        SessionDefaults {
            network: config.network.clone(),
            proxy: config.proxy.clone(),
        },
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
    events.add_outbox(Arc::new(webhooks.clone()));
    switchboard_runtime::storage_events::start(
        store.clone(),
        events.clone(),
        background_stop.clone(),
        &tasks,
    );
    // Integration plugins are owed their events from the first one on, as
    // webhooks are; what the outbox holds for them resumes once they can send.
    let integrations = IntegrationOutbox::start(
        Arc::new(plugins.clone()),
        store.clone(),
        crate::events::OutboxLimits {
            backlog: config.webhooks.backlog_limit,
            dlq_capacity: config.webhooks.dlq_capacity,
        },
        config.integrations.clone(),
        background_stop.clone(),
        tasks.clone(),
    )
    .context("could not resume integration deliveries")?;
    events.add_outbox(Arc::new(integrations.clone()));
    webhooks.add_destination(Arc::new(integrations.clone()));
    // The broker owes every event a delivery from the first one on: it is an
    // outbox before sessions are restored; its send queue starts with the API.
    let nats = if config.nats.enabled() {
        let nats = switchboard_nats::Nats::start(
            config.nats.clone(),
            crate::events::OutboxLimits {
                backlog: config.webhooks.backlog_limit,
                dlq_capacity: config.webhooks.dlq_capacity,
            },
            store.clone(),
            background_stop.clone(),
            tasks.clone(),
        )
        .await
        .context("could not start the NATS broker")?;
        events.add_outbox(Arc::new(nats.clone()));
        webhooks.add_destination(Arc::new(nats.clone()));
        Some(nats)
    } else {
        None
    };
    let send = SendCore::new(sessions.clone(), store.clone(), media.clone())
        .with_plugins(plugins.clone())
        .with_typing(config.typing_before_send)
        .with_pacing(crate::messages::Pacer::new(config.send_pacing.clone()))
        .with_media_urls(config.media_urls.clone());
    plugins.set_sender(Arc::new(PluginSends::new(
        send.clone(),
        tokio::runtime::Handle::current(),
    )));
    // Everything an integration may call is in place: hand over what the
    // outbox still owes them.
    integrations
        .resume()
        .context("could not resume integration deliveries")?;
    // The send core holds the plugins: the link back is cut at shutdown, so
    // neither keeps the other (and the store) alive after a stop.
    {
        let (plugins, stop) = (plugins.clone(), background_stop.clone());
        tasks.spawn(async move {
            stop.cancelled().await;
            plugins.clear_sender();
        });
    }
    let chats = Chats::new(sessions.clone(), store.clone()).with_pacing(send.pacer());
    media.start_sweeper(background_stop.clone(), &tasks);
    let scheduler = Scheduler::new(
        store.clone(),
        send.clone(),
        sessions.clone(),
        config.schedule.clone(),
    );
    // Subscribed before sessions are restored, so no `connected` is missed.
    events.add_subscriber(scheduler.subscriber());
    let restored = sessions
        .restore()
        .await
        .context("could not restore sessions")?;
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
        whatsapp: networks.whatsapp_counters,
        nats: nats.as_ref().map(|n| n.counters().clone()),
        media: media_counters,
        media_store: blobs.clone(),
        integrations: integrations.counters().clone(),
    });
    let tokens = api::tokens::Tokens::load(store.clone(), config.token_rate_window)
        .context("could not read the API tokens")?
        .with_session_quota(config.token_max_sessions);
    // Tokens' last use, written off the request path; the last write at a stop.
    tokens.start_flusher(background_stop.clone(), &tasks);
    let state = AppState::new(Services {
        send,
        chats,
        scheduler,
        blasts,
        sessions,
        store,
        sim,
        token: Arc::from(token.as_str()),
        tokens,
        events,
        // Also ends the event streams, so a graceful shutdown does not wait on them.
        shutdown: CancellationToken::new(),
        webhooks,
        plugins,
        metrics: metrics.clone(),
        media,
        broker: std::sync::OnceLock::new(),
    });
    if let Some(nats) = &nats {
        let _ = state.broker.set(Arc::new(nats.clone()));
        nats.start_commands(state.clone());
    }
    Ok(Gateway {
        config,
        token,
        token_source,
        state,
        metrics,
        restored,
        background_stop,
        tasks,
        #[cfg(feature = "whatsapp")]
        whatsapp: networks.whatsapp,
    })
}

/// The networks this build and configuration offer, and what the rest of
/// the composition needs of the `whatsapp` backend.
struct Networks {
    all: Vec<Arc<dyn Network>>,
    /// The backend's counters for the metrics registry (when built).
    whatsapp_counters: Option<WhatsAppCounters>,
    #[cfg(feature = "whatsapp")]
    whatsapp: Arc<crate::network::whatsapp::WhatsAppNetwork>,
}

/// The networks this build and configuration offer; the default must be one.
fn networks(
    config: &Config,
    store: &Store,
    blobs: &MediaStore,
    sim: Option<&SimNetwork>,
) -> anyhow::Result<Networks> {
    let mut all: Vec<Arc<dyn Network>> = Vec::new();
    if let Some(sim) = sim {
        all.push(Arc::new(sim.clone()));
    }
    #[cfg(feature = "whatsapp")]
    let whatsapp = Arc::new(crate::network::whatsapp::WhatsAppNetwork::new(
        store.clone(),
        blobs.clone(),
        crate::network::whatsapp::WhatsAppConfig {
            media_urls: config.media_urls.clone(),
            ..config.whatsapp.clone()
        },
    ));
    #[cfg(feature = "whatsapp")]
    all.push(whatsapp.clone());
    #[cfg(feature = "whatsapp")]
    let whatsapp_counters = Some(whatsapp.counters().clone());
    #[cfg(not(feature = "whatsapp"))]
    let whatsapp_counters = {
        let _ = (store, blobs);
        None
    };
    if !all.iter().any(|n| n.name() == config.network) {
        let available: Vec<_> = all.iter().map(|n| n.name()).collect();
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
    Ok(Networks {
        all,
        whatsapp_counters,
        #[cfg(feature = "whatsapp")]
        whatsapp,
    })
}

impl Gateway {
    /// Starts the background workers that are not running yet (the
    /// scheduler's). The server calls it once the parts are assembled.
    pub fn start_workers(&self) {
        self.state
            .scheduler
            .start(self.background_stop.clone(), &self.tasks);
    }

    /// The router over this gateway's state, with the configured body limit.
    pub fn router(&self) -> Router {
        api::router(
            self.state.clone(),
            api::BodyLimits {
                json_bytes: self.config.max_body_bytes,
                plugin_bytes: self.config.max_plugin_bytes,
            },
        )
    }

    /// The `whatsapp` backend (its sessions' durability hooks, for tests
    /// that play the crate's part).
    #[cfg(feature = "whatsapp")]
    pub fn whatsapp(&self) -> Option<&crate::network::whatsapp::WhatsAppNetwork> {
        Some(&self.whatsapp)
    }

    /// What every handler reaches.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The configuration, its paths resolved.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The API token in use.
    pub fn api_token(&self) -> &str {
        &self.token
    }

    /// Where the token came from (generated now, read, or configured).
    pub fn token_source(&self) -> &TokenSource {
        &self.token_source
    }

    /// The metrics registry.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// How many sessions were restored.
    pub fn restored(&self) -> usize {
        self.restored
    }

    /// The token that ends the HTTP side: the graceful shutdown and the
    /// event streams.
    pub fn http_stop(&self) -> CancellationToken {
        self.state.shutdown.clone()
    }

    /// Stops the background work and waits for it to end (sessions stay
    /// attached; [`crate::server::Running::shutdown`] closes them first).
    pub async fn stop_workers(&self) {
        self.background_stop.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }

    /// Closes every session's connection, then stops the background work.
    pub async fn shutdown(self) {
        self.state.sessions.shutdown().await;
        self.stop_workers().await;
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        // A gateway dropped without a shutdown (a test's) still stops its work.
        self.background_stop.cancel();
        self.state.shutdown.cancel();
    }
}
