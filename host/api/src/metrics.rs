//! `GET /metrics` (Prometheus, OpenMetrics text) and the middleware that
//! records every HTTP request into it.
//!
//! On the main listener `/metrics` needs the bearer token like `/api/v1`;
//! `--metrics-listen` serves it on a second address without a token, for
//! scrapers on a private network ([`standalone`]).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::AppState;
use prometheus_client::registry::Registry;

use crate::http_metrics::{HttpMetrics, UNMATCHED_ROUTE};

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The gateway's metrics registry, as every part registered its own metrics
/// into it, and the HTTP metrics this crate records; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    http: HttpMetrics,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A registry with the HTTP metrics first, then whatever `register_others`
    /// registers: the composition root has every other part register its own
    /// metrics there, so this crate knows none of them.
    pub fn new(register_others: impl FnOnce(&mut Registry)) -> Self {
        let mut registry = Registry::default();
        let http = HttpMetrics::default();
        http.register(&mut registry);
        register_others(&mut registry);
        Self {
            registry: Arc::new(registry),
            http,
        }
    }

    /// The HTTP request metrics (the API middleware records into them).
    pub fn http(&self) -> &HttpMetrics {
        &self.http
    }

    /// The exposition text, ending in `# EOF`.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        // Writing into a String cannot fail; an encoder error would be a bug
        // in a collector, and the text up to it is still worth serving.
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "could not encode the metrics");
        }
        out
    }
}

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
        (status = 200, description = "Prometheus metrics in the OpenMetrics text format.", content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String),
        crate::openapi::common::ApiErrors,
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
/// observes its latency (until the response head is ready). It runs before
/// authentication, so its labels come from closed sets only (see
/// [`crate::http_metrics`]).
pub async fn track(State(metrics): State<Metrics>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req.extensions().get::<MatchedPath>().cloned();
    let response = next.run(req).await;
    metrics.http().observe(
        &method,
        route.as_ref().map_or(UNMATCHED_ROUTE, MatchedPath::as_str),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
