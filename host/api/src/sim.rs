//! The simulated network's control API (`/api/v1/sim/...`): register outside
//! users, complete pairing, inject inbound messages (with the sender's phone
//! beside an `@lid`, or delivered twice), set send faults and read what the
//! network received. Network-side events are in `sim_events.rs`.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use super::openapi::common::{SessionPath, Success};
use crate::domain::jid::{Jid, JidKind};
use crate::domain::time::unix_now;
use switchboard_runtime::network::sim::{Faults, SimInbound, SimNetwork};
use switchboard_runtime::store::{OutboxEntry, SimUser};

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

/// The simulated network, or `404 sim_disabled` when it is not enabled (every
/// sim control route answers so).
pub(super) fn sim(state: &AppState) -> ApiResult<&SimNetwork> {
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
    /// The user's phone number.
    #[schema(value_type = crate::openapi::common::PhoneNumber)]
    phone: String,
    /// The name the user's messages carry.
    push_name: Option<String>,
    /// The name of the user's business account, if one.
    business_name: Option<String>,
    /// The user's linked identity: `<digits>@lid` or the bare digits.
    #[schema(pattern = r"^[0-9]{1,20}(?:@lid)?$")]
    lid: Option<String>,
    /// The user's about text.
    about: Option<String>,
    /// The URL of the user's profile picture.
    picture_url: Option<String>,
}

/// `GET /api/v1/sim/users`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SimUserList {
    /// The registered outside users.
    pub users: Vec<SimUser>,
    /// How many.
    pub count: usize,
}

/// `POST /api/v1/sim/sessions/{id}/scan`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Scanned {
    /// Always `true`.
    pub success: bool,
    /// The linked account's JID.
    pub jid: String,
    /// Its phone digits.
    pub phone_number: String,
}

/// `POST /api/v1/sim/sessions/{id}/inbound`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Injected {
    /// The delivered message's id.
    pub message_id: String,
}

/// `GET /api/v1/sim/sessions/{id}/outbox`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Outbox {
    /// What the network received from the session, oldest first.
    pub messages: Vec<OutboxEntry>,
    /// How many.
    pub count: usize,
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
        (status = 200, body = SimUserList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_users(State(state): State<AppState>) -> ApiResult<Json<SimUserList>> {
    sim(&state)?;
    let users = state.store.list_sim_users()?;
    Ok(Json(SimUserList {
        count: users.len(),
        users,
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/scan",
    operation_id = "sim_scan",
    tag = "sim",
    summary = "Scan the session's QR code, as a phone would",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = Scanned),
        crate::openapi::common::ApiErrors,
    )
)]
async fn scan(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<Scanned>> {
    let account = sim(&state)?.scan(&id).await?;
    Ok(Json(Scanned {
        success: true,
        jid: account.jid,
        phone_number: account.phone,
    }))
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
        (status = 200, body = Injected),
        crate::openapi::common::ApiErrors,
    )
)]
async fn inbound(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<SimInbound>,
) -> ApiResult<Json<Injected>> {
    let sim = sim(&state)?;
    let twice = body.duplicate.unwrap_or(false);
    let (mut message, media) = sim.build_inbound(body)?;
    if let Some(media) = media {
        sim.stage_media(&mut message, media).await?;
    }
    if twice {
        sim.inject_inbound(&id, message.clone()).await?;
    }
    let message_id = sim.inject_inbound(&id, message).await?;
    Ok(Json(Injected { message_id }))
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
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_faults(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(mut faults): ApiJson<Faults>,
) -> ApiResult<Json<Success>> {
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
    Ok(Json(Success { success: true }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sim/sessions/{id}/faults",
    operation_id = "sim_clear_faults",
    tag = "sim",
    summary = "Clear a session's faults",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn clear_faults(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<Success>> {
    sim(&state)?.set_faults(&id, Faults::default())?;
    Ok(Json(Success { success: true }))
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/sessions/{id}/outbox",
    operation_id = "sim_outbox",
    tag = "sim",
    summary = "What the network received from a session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = Outbox),
        crate::openapi::common::ApiErrors,
    )
)]
async fn outbox(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<Outbox>> {
    let messages = sim(&state)?.outbox(&id)?;
    Ok(Json(Outbox {
        count: messages.len(),
        messages,
    }))
}
