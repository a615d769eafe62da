//! `/livez` and `/readyz`, answered without authentication.

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
async fn livez() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// The store answers reads; the gateway can do its work.
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.store.schema_version() {
        Ok(_) => (StatusCode::OK, Json(json!({ "status": "ready" }))),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "reason": "store" })),
            )
        }
    }
}
