//! `POST /api/v1/sim/sessions/{id}/events`: the simulated network delivers a
//! network-side event (a receipt, a presence, a pin, a stream error, …) to a
//! session, as the real network would. The data is checked against the shape
//! the API reference gives the event and arrives in the envelope unchanged.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::post;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use super::openapi::common::SessionPath;
use super::openapi::events::data_schema_name;
use super::sim::sim;
use crate::domain::event::EventName;
use crate::domain::event_data;

/// The sim event route.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/sim/sessions/{id}/events", post(inject))
}

/// Body of `POST /api/v1/sim/sessions/{id}/events`: a network-side event's
/// name and its data.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventIn {
    event: String,
    data: Value,
}

/// The body's schema is one alternative per network-side event, pairing the
/// name with that event's `<Event>Data` component: the same table that
/// validates the data describes it, so the document allows exactly the
/// bodies the route takes.
impl utoipa::PartialSchema for EventIn {
    fn schema() -> RefOr<Schema> {
        let mut one_of = OneOfBuilder::new().description(Some(
            "A network-side event: its name and data fitting the event's `<Event>Data` schema.",
        ));
        for event in EventName::ALL
            .iter()
            .filter(|e| event_data::network_side(**e))
        {
            one_of = one_of.item(
                ObjectBuilder::new()
                    .property(
                        "event",
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some([event.as_str()])),
                    )
                    .required("event")
                    .property("data", Ref::from_schema_name(data_schema_name(*event)))
                    .required("data")
                    .additional_properties(Some(AdditionalProperties::FreeForm(false))),
            );
        }
        one_of.into()
    }
}

impl utoipa::ToSchema for EventIn {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("SimEventIn")
    }
}

/// `POST /api/v1/sim/sessions/{id}/events`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EventInjected {
    /// Always `true`.
    pub success: bool,
    /// The delivered event's name.
    pub event: EventName,
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
        (status = 200, body = EventInjected),
        crate::openapi::common::ApiErrors,
    )
)]
async fn inject(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<EventIn>,
) -> ApiResult<Json<EventInjected>> {
    let sim = sim(&state)?;
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
        Some(EventName::ReachOutTimelock) => {
            return Err(ApiError::invalid_field(
                "event",
                "`reach_out_timelock` is the gateway's answer to a timelock: put one on the account with POST /api/v1/sim/sessions/{id}/timelock",
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
    Ok(Json(EventInjected {
        success: true,
        event,
    }))
}
