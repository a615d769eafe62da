//! `GET /api/v1/nats`: what the gateway reports of its message broker. The
//! broker itself (`switchboard-nats`) sits above this crate, since its send
//! queue sends through the same path as `POST …/messages/{kind}`; it reaches
//! the API through the [`Broker`] trait, set once at start.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::get;

use super::AppState;
use crate::domain::broker::BrokerStatus;

/// The broker as the API sees it.
pub trait Broker: Send + Sync + 'static {
    /// Its state now.
    fn status(&self) -> BrokerStatus;
    /// Whether it can do its work: connected, its streams set up.
    fn ready(&self) -> bool;
}

/// The broker route.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/nats", get(status))
}

/// The broker's connection, streams, outbox drain and send queue.
#[utoipa::path(
    get,
    path = "/api/v1/nats",
    operation_id = "nats_status",
    tag = "nats",
    summary = "The NATS JetStream broker: connection, streams, events out, sends in",
    description = "`configured` is false (and the rest empty) when the gateway runs without `--nats-url`.",
    responses(
        (status = 200, body = BrokerStatus),
        crate::openapi::common::ApiErrors,
    )
)]
pub(crate) async fn status(State(state): State<AppState>) -> Json<BrokerStatus> {
    Json(state.broker.get().map(|b| b.status()).unwrap_or_default())
}
