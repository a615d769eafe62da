//! The HTTP API: one file per resource family, the error type, extractors and
//! authentication. Only this module knows HTTP.

pub mod auth;
mod blasts;
mod blocking;
pub mod broker;
mod chats;
mod console;
mod contacts;
pub mod error;
pub mod extract;
mod group_members;
mod groups;
mod health;
pub mod http_metrics;
mod identity;
mod media;
mod message_actions;
pub mod messages;
pub mod metrics;
pub mod openapi;
mod plugins;
mod presence;
mod profile;
pub mod request_id;
mod scheduled;
pub mod scopes;
mod session_ops;
mod session_proxy;
mod sessions;
mod sim;
mod sim_account;
mod sim_events;
mod sim_groups;
mod sim_timelock;
mod stream;
pub mod tokens;
mod webhooks;

use std::sync::Arc;

use switchboard_domain as domain;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware::{from_fn, from_fn_with_state};
use tokio_util::sync::CancellationToken;
use tower_http::trace::TraceLayer;

use crate::metrics::Metrics;
use error::ApiError;
use switchboard_plugins::Plugins;
use switchboard_runtime::blast::Blasts;
use switchboard_runtime::chats::Chats;
use switchboard_runtime::events::EventBus;
use switchboard_runtime::media::Media;
use switchboard_runtime::messages::SendCore;
use switchboard_runtime::network::sim::SimNetwork;
use switchboard_runtime::scheduler::Scheduler;
use switchboard_runtime::sessions::Sessions;
use switchboard_runtime::store::Store;
use switchboard_runtime::webhooks::Webhooks;

/// What every handler can reach: [`Services`] behind one `Arc`, because
/// axum clones the state for every extractor and middleware of every request
/// (cloning the services themselves, a dozen handles, cost a measurable share
/// of a small read's time).
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl AppState {
    /// Shares `services` with every handler.
    pub fn new(services: Services) -> Self {
        Self(Arc::new(services))
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The gateway's services, as handlers see them.
pub struct Services {
    /// The session registry.
    pub sessions: Sessions,
    /// The send core.
    pub send: SendCore,
    /// Chats, message actions, presence and `@lid` lookups.
    pub chats: Chats,
    /// The scheduler of sends with a future `send_at`.
    pub scheduler: Scheduler,
    /// The blast service (create, cancel, retry; the worker runs on its own).
    pub blasts: Blasts,
    /// The store.
    pub store: Store,
    /// The simulated network, when enabled.
    pub sim: Option<SimNetwork>,
    /// The admin token.
    pub token: Arc<str>,
    /// The minted tokens.
    pub tokens: tokens::Tokens,
    /// The event bus (the live event stream reads it).
    pub events: EventBus,
    /// Cancelled when the gateway begins to stop: long-lived answers (the
    /// event stream) end on it, so the graceful shutdown does not wait on them.
    pub shutdown: CancellationToken,
    /// The webhook registry and delivery engine.
    pub webhooks: Webhooks,
    /// The plugin registry.
    pub plugins: Plugins,
    /// The metrics registry (`/metrics`, and the HTTP middleware records into it).
    pub metrics: Metrics,
    /// Media: uploads, inbound media, the media store.
    pub media: Media,
    /// The message broker, when one is configured (set once, at start).
    pub broker: std::sync::OnceLock<Arc<dyn broker::Broker>>,
}

/// The request body limits.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    /// Every body but uploads and plugin components (JSON, in practice).
    pub json_bytes: usize,
    /// A plugin component.
    pub plugin_bytes: usize,
}

/// The whole application: public health routes, the authenticated `/api/v1`
/// routes, JSON answers for unknown paths and methods, and the body limit.
pub fn router(state: AppState, limits: BodyLimits) -> Router {
    let max_body_bytes = limits.json_bytes;
    let mut api = Router::new()
        .merge(sessions::routes())
        .merge(messages::routes())
        .merge(message_actions::routes())
        .merge(chats::routes())
        .merge(presence::routes())
        .merge(identity::routes())
        .merge(groups::routes())
        .merge(group_members::routes())
        .merge(blasts::routes())
        .merge(scheduled::routes())
        .merge(contacts::routes())
        .merge(blocking::routes())
        .merge(session_proxy::routes())
        .merge(profile::routes())
        .merge(media::routes())
        .merge(session_ops::routes())
        .merge(stream::routes())
        .merge(webhooks::routes())
        .merge(broker::routes())
        .merge(plugins::routes(limits.plugin_bytes))
        .merge(metrics::routes())
        .merge(tokens::routes());
    if state.sim.is_some() {
        api = api
            .merge(sim::routes())
            .merge(sim_events::routes())
            .merge(sim_account::routes())
            .merge(sim_timelock::routes())
            .merge(sim_groups::routes());
    }
    let api = api.route_layer(from_fn_with_state(state.clone(), auth::require_token));
    Router::new()
        .merge(health::routes())
        .merge(console::routes())
        .merge(openapi::routes())
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .layer(Extension(extract::BodyLimit {
            bytes: max_body_bytes,
            name: "the JSON body limit (--max-body-bytes)",
            instead: "; send large media as an upload (POST /api/v1/sessions/{id}/media) and reference its media_id",
        }))
        // Innermost first: metrics see the matched route; the trace and every
        // log line of the request sit inside the request-id span.
        .layer(from_fn_with_state(state.metrics.clone(), metrics::track))
        .layer(TraceLayer::new_for_http())
        .layer(from_fn(request_id::assign))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::not_found(
        "route_not_found",
        "no route matches this path; the API lives under /api/v1",
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this path does not accept this method",
    )
}
