//! The simulated network's control API (`/api/v1/sim/...`): register outside
//! users, complete pairing, inject inbound messages (with the sender's phone
//! beside an `@lid`, or delivered twice), set send faults and read what the
//! network received. Network-side events are in `sim_events.rs`.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::jid::{Jid, JidKind};
use crate::domain::time::unix_now;
use switchboard_runtime::network::sim::{Faults, SimInbound, SimNetwork};
use switchboard_runtime::store::SimUser;

/// The sim control routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sim/users", post(register_user).get(list_users))
        .route("/api/v1/sim/sessions/{id}/scan", post(scan))
        .route("/api/v1/sim/sessions/{id}/inbound", post(inbound))
        .route(
            "/api/v1/sim/sessions/{id}/faults",
            post(set_faults).delete(clear_faults),
        )
        .route("/api/v1/sim/sessions/{id}/outbox", get(outbox))
}

fn sim(state: &AppState) -> ApiResult<&SimNetwork> {
    state
        .sim
        .as_ref()
        .ok_or_else(|| ApiError::not_found("sim_disabled", "the simulated network is not enabled"))
}

fn jid_field(field: &str, value: &str) -> ApiResult<Jid> {
    Jid::parse_recipient(value).map_err(|e| ApiError::invalid_field(field, e))
}

/// Body of `POST /api/v1/sim/users`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SimUserIn)]
struct UserIn {
    phone: String,
    push_name: Option<String>,
    business_name: Option<String>,
    lid: Option<String>,
    about: Option<String>,
    picture_url: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/users",
    operation_id = "sim_register_user",
    tag = "sim",
    summary = "Register an outside user of the simulated network",
    request_body = UserIn,
    responses(
        (status = 201, body = switchboard_runtime::store::SimUser),
        crate::openapi::common::ApiErrors,
    )
)]
async fn register_user(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<UserIn>,
) -> ApiResult<(StatusCode, Json<SimUser>)> {
    let jid = Jid::user(&body.phone).map_err(|e| ApiError::invalid_field("phone", e))?;
    let lid = match body.lid {
        None => None,
        Some(l) => {
            let with_server = if l.contains('@') {
                l
            } else {
                format!("{l}@lid")
            };
            let lid = Jid::parse(&with_server).map_err(|e| ApiError::invalid_field("lid", e))?;
            if lid.kind() != JidKind::Lid {
                return Err(ApiError::invalid_field(
                    "lid",
                    "must be an `<id>@lid` identifier",
                ));
            }
            Some(lid.to_string())
        }
    };
    let user = SimUser {
        phone: jid.user_part().to_owned(),
        jid: jid.to_string(),
        push_name: body.push_name,
        business_name: body.business_name,
        lid,
        about: body.about,
        picture_url: body.picture_url,
        registered_at: unix_now(),
    };
    Ok((StatusCode::CREATED, Json(sim(&state)?.register_user(user)?)))
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/users",
    operation_id = "sim_list_users",
    tag = "sim",
    summary = "The registered outside users",
    responses(
        (status = 200, body = crate::openapi::answers::SimUserList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_users(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    sim(&state)?;
    let users = state.store.list_sim_users()?;
    Ok(Json(json!({ "users": users, "count": users.len() })))
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/scan",
    operation_id = "sim_scan",
    tag = "sim",
    summary = "Scan the session's QR code, as a phone would",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::Scanned),
        crate::openapi::common::ApiErrors,
    )
)]
async fn scan(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let account = sim(&state)?.scan(&id).await?;
    Ok(Json(
        json!({ "success": true, "jid": account.jid, "phone_number": account.phone }),
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/inbound",
    operation_id = "sim_inbound",
    tag = "sim",
    summary = "Deliver an inbound message to a session",
    params(crate::openapi::common::SessionPath),
    request_body = SimInbound,
    responses(
        (status = 200, body = crate::openapi::answers::Injected),
        crate::openapi::common::ApiErrors,
    )
)]
async fn inbound(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<SimInbound>,
) -> ApiResult<Json<Value>> {
    let sim = sim(&state)?;
    let twice = body.duplicate.unwrap_or(false);
    let message = sim.build_inbound(body)?;
    if twice {
        sim.inject_inbound(&id, message.clone()).await?;
    }
    let message_id = sim.inject_inbound(&id, message).await?;
    Ok(Json(json!({ "message_id": message_id })))
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/faults",
    operation_id = "sim_set_faults",
    tag = "sim",
    summary = "Set a session's send, connect and app-state faults",
    params(crate::openapi::common::SessionPath),
    request_body = switchboard_runtime::network::sim::Faults,
    responses(
        (status = 200, body = crate::openapi::common::Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_faults(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(mut faults): ApiJson<Faults>,
) -> ApiResult<Json<Value>> {
    if !(0.0..=1.0).contains(&faults.fail_send_rate) {
        return Err(ApiError::invalid_field(
            "fail_send_rate",
            "must be between 0 and 1",
        ));
    }
    faults.fail_sends_to = faults
        .fail_sends_to
        .iter()
        .map(|j| jid_field("fail_sends_to", j).map(|j| j.to_string()))
        .collect::<ApiResult<_>>()?;
    sim(&state)?.set_faults(&id, faults)?;
    Ok(Json(json!({ "success": true })))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sim/sessions/{id}/faults",
    operation_id = "sim_clear_faults",
    tag = "sim",
    summary = "Clear a session's faults",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::common::Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn clear_faults(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    sim(&state)?.set_faults(&id, Faults::default())?;
    Ok(Json(json!({ "success": true })))
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/sessions/{id}/outbox",
    operation_id = "sim_outbox",
    tag = "sim",
    summary = "What the network received from a session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::Outbox),
        crate::openapi::common::ApiErrors,
    )
)]
async fn outbox(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let messages = sim(&state)?.outbox(&id)?;
    Ok(Json(
        json!({ "messages": messages, "count": messages.len() }),
    ))
}
