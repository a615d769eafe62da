//! `/livez` and `/readyz`, answered without authentication.
//!
//! `/livez` only says the process serves HTTP (no I/O, no locks). `/readyz`
//! checks what the gateway needs to do its work: the store answers a read,
//! and the background workers (blast worker, scheduler, webhook delivery
//! workers) are running — one that stopped or panicked makes it unready.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json};
use axum::routing::get;
use serde_json::json;

use super::AppState;

/// The health routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
}

/// The process is up and serving HTTP.
#[utoipa::path(
    get,
    path = "/livez",
    operation_id = "health_livez",
    tag = "health",
    summary = "Liveness: the process serves HTTP",
    security(()),
    responses(
        (status = 200, description = "Alive.", body = crate::openapi::answers::Live),
    )
)]
async fn livez() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// The parts `/readyz` checks, in order, and whether each is fine.
fn checks(state: &AppState) -> Vec<(&'static str, bool)> {
    let store = match state.store.schema_version() {
        Ok(_) => true,
        Err(e) => {
            tracing::warn!(error = %e, "readiness: the store does not answer");
            false
        }
    };
    vec![
        ("store", store),
        ("blast_worker", state.blasts.worker_running()),
        ("scheduler", state.scheduler.worker_running()),
        ("webhook_workers", state.webhooks.workers_running()),
    ]
}

/// The store answers reads and the background workers run.
#[utoipa::path(
    get,
    path = "/readyz",
    operation_id = "health_readyz",
    tag = "health",
    summary = "Readiness: the store answers and the background workers run",
    security(()),
    responses(
        (status = 200, description = "Ready.", body = crate::openapi::answers::Ready),
        (status = 503, description = "Not ready; `reason` names the first failing check.", body = crate::openapi::answers::Ready),
    )
)]
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let checks = checks(&state);
    let failing: Vec<&str> = checks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| *name)
        .collect();
    let detail: serde_json::Map<String, serde_json::Value> = checks
        .iter()
        .map(|(name, ok)| ((*name).to_owned(), json!(if *ok { "ok" } else { "down" })))
        .collect();
    match failing.first() {
        None => (
            StatusCode::OK,
            Json(json!({ "status": "ready", "checks": detail })),
        ),
        Some(first) => {
            tracing::warn!(failing = ?failing, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "reason": first, "checks": detail })),
            )
        }
    }
}
