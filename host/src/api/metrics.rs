//! `GET /metrics` (Prometheus, OpenMetrics text) and the middleware that
//! records every HTTP request into it.
//!
//! On the main listener `/metrics` needs the bearer token like `/api/v1`;
//! `--metrics-listen` serves it on a second address without a token, for
//! scrapers on a private network ([`standalone`]).

use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::AppState;
use crate::metrics::http::UNMATCHED_ROUTE;
use crate::metrics::{CONTENT_TYPE, Metrics};

/// `/metrics` on the main listener (the caller adds authentication).
pub fn routes() -> Router<AppState> {
    Router::new().route("/metrics", get(scrape_app))
}

/// A router serving only `/metrics`, without authentication, for the
/// separate metrics listener. Its answers carry a request id like every
/// other answer of the gateway.
pub fn standalone(metrics: Metrics) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .fallback(super::not_found)
        .layer(from_fn(super::request_id::assign))
        .with_state(metrics)
}

#[utoipa::path(
    get,
    path = "/metrics",
    operation_id = "metrics_scrape",
    tag = "health",
    summary = "Prometheus metrics (text exposition format)",
    responses(
        (status = 200, description = "Prometheus text format.", content_type = "text/plain", body = String),
        crate::api::openapi::common::ApiErrors,
    )
)]
async fn scrape_app(State(state): State<AppState>) -> Response {
    exposition(&state.metrics)
}

async fn scrape(State(metrics): State<Metrics>) -> Response {
    exposition(&metrics)
}

fn exposition(metrics: &Metrics) -> Response {
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], metrics.render()).into_response()
}

/// Counts the request by method, matched route template and status, and
/// observes its latency (until the response head is ready).
pub async fn track(State(metrics): State<Metrics>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req.extensions().get::<MatchedPath>().cloned();
    let response = next.run(req).await;
    metrics.http().observe(
        method.as_str(),
        route.as_ref().map_or(UNMATCHED_ROUTE, MatchedPath::as_str),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
