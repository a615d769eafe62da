//! `POST /api/v1/sim/sessions/{id}/events`: the simulated network delivers a
//! network-side event (a receipt, a presence, a pin, a stream error, …) to a
//! session, as the real network would. The data is checked against the shape
//! the API reference gives the event and arrives in the envelope unchanged.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::event::EventName;
use crate::domain::event_data;

/// The sim event route.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/sim/sessions/{id}/events", post(inject))
}

/// Body of `POST /api/v1/sim/sessions/{id}/events`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SimEventIn)]
struct EventIn {
    event: String,
    data: Value,
}

/// The names a network may deliver, for error messages.
fn allowed() -> String {
    EventName::ALL
        .iter()
        .filter(|e| event_data::network_side(**e))
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/events",
    operation_id = "sim_inject",
    tag = "sim",
    summary = "Deliver a network-side event to a session",
    description = "`data` must fit the event's `<Event>Data` schema.",
    params(crate::openapi::common::SessionPath),
    request_body = EventIn,
    responses(
        (status = 200, body = crate::openapi::answers::EventInjected),
        crate::openapi::common::ApiErrors,
    )
)]
async fn inject(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<EventIn>,
) -> ApiResult<Json<Value>> {
    let sim = state.sim.as_ref().ok_or_else(|| {
        ApiError::not_found("sim_disabled", "the simulated network is not enabled")
    })?;
    let event = match EventName::parse(&body.event) {
        Some(EventName::Message) => {
            return Err(ApiError::invalid_field(
                "event",
                "`message` is delivered through POST /api/v1/sim/sessions/{id}/inbound",
            ));
        }
        Some(e) if event_data::network_side(e) => e,
        Some(EventName::AccountLocked) => {
            return Err(ApiError::invalid_field(
                "event",
                "`account_locked` is the gateway's answer to a lock: lock the account with POST /api/v1/sim/sessions/{id}/lock",
            ));
        }
        Some(e) => {
            return Err(ApiError::invalid_field(
                "event",
                format!(
                    "`{e}` is produced by the gateway itself; a network delivers one of {}",
                    allowed()
                ),
            ));
        }
        None => {
            return Err(ApiError::invalid_field(
                "event",
                format!(
                    "`{}` is not an event a network delivers; use one of {}",
                    body.event,
                    allowed()
                ),
            ));
        }
    };
    event_data::validate(event, &body.data)?;
    sim.inject_event(&id, event, body.data).await?;
    Ok(Json(json!({ "success": true, "event": event })))
}
