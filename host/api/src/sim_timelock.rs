//! The simulated network's control route over an account's reach-out
//! timelock (WhatsApp's error 463): put one on a session for a number of
//! seconds, or lift it, to see how the gateway holds first-contact sends.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::post;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use super::openapi::common::SessionPath;
use super::sim::sim;
use crate::domain::time::{iso8601, unix_now};

/// The longest timelock the sim puts on: a year.
const MAX_SECONDS: u64 = 365 * 24 * 3600;

/// The sim timelock routes.
pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/api/v1/sim/sessions/{id}/timelock",
        post(set_timelock).delete(lift_timelock),
    )
}

/// Body of `POST /api/v1/sim/sessions/{id}/timelock`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SimTimelockIn)]
struct TimelockIn {
    /// How long the lock lasts from now, in seconds (1 to a year).
    #[schema(minimum = 1, maximum = 31536000)]
    seconds: u64,
    /// Whether the network says when the lock ends (in its refusals and at
    /// login); `true` by default. When `false` the gateway assumes a hold of
    /// `--reach-out-hold-secs`.
    #[serde(default = "yes")]
    stated: bool,
}

fn yes() -> bool {
    true
}

/// The answer of the sim timelock routes.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = SimTimelock)]
pub struct TimelockOut {
    /// Whether a lock holds now.
    pub active: bool,
    /// ISO-8601 time it ends; `null` when none holds.
    pub until: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/timelock",
    operation_id = "sim_set_timelock",
    tag = "sim",
    summary = "Put a reach-out timelock on the account (error 463 to people it has no chat with)",
    params(SessionPath),
    request_body = TimelockIn,
    responses(
        (status = 200, body = TimelockOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_timelock(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<TimelockIn>,
) -> ApiResult<Json<TimelockOut>> {
    if !(1..=MAX_SECONDS).contains(&body.seconds) {
        return Err(ApiError::invalid_field(
            "seconds",
            format!("must be between 1 and {MAX_SECONDS}"),
        ));
    }
    let until = unix_now() + body.seconds as i64;
    sim(&state)?.set_timelock(&id, until, body.stated)?;
    Ok(Json(TimelockOut {
        active: true,
        until: Some(iso8601(until)),
    }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sim/sessions/{id}/timelock",
    operation_id = "sim_lift_timelock",
    tag = "sim",
    summary = "Lift the account's reach-out timelock (the session learns it at its next login)",
    params(SessionPath),
    responses(
        (status = 200, body = TimelockOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn lift_timelock(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<TimelockOut>> {
    sim(&state)?.lift_timelock(&id)?;
    Ok(Json(TimelockOut {
        active: false,
        until: None,
    }))
}
