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
use switchboard_runtime::network::InboundMessage;
use switchboard_runtime::network::sim::{Faults, SimNetwork};
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

/// Body of `POST /api/v1/sim/sessions/{id}/inbound`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SimInboundIn)]
struct InboundIn {
    from: String,
    chat: Option<String>,
    message_type: Option<String>,
    text: Option<String>,
    caption: Option<String>,
    push_name: Option<String>,
    message_id: Option<String>,
    quoted_message_id: Option<String>,
    quoted_sender_jid: Option<String>,
    location: Option<Value>,
    selected_id: Option<String>,
    selected_text: Option<String>,
    native_flow: Option<Value>,
    offline: Option<bool>,
    media_mimetype: Option<String>,
    media: Option<Value>,
    /// The sender's phone, carried beside an `@lid` sender as some messages do.
    sender_phone: Option<String>,
    /// Deliver the message twice in a row (exercises the gateway's dedup).
    duplicate: Option<bool>,
}

const MESSAGE_TYPES: &[&str] = &[
    "text",
    "image",
    "video",
    "audio",
    "document",
    "sticker",
    "location",
    "contact",
    "poll",
    "reaction",
    "interactive",
    "interactive_response",
    "buttons_response",
    "list_response",
    "template_button_reply",
    "unknown",
];

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/inbound",
    operation_id = "sim_inbound",
    tag = "sim",
    summary = "Deliver an inbound message to a session",
    params(crate::openapi::common::SessionPath),
    request_body = InboundIn,
    responses(
        (status = 200, body = crate::openapi::answers::Injected),
        crate::openapi::common::ApiErrors,
    )
)]
async fn inbound(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<InboundIn>,
) -> ApiResult<Json<Value>> {
    let sim = sim(&state)?;
    let twice = body.duplicate.unwrap_or(false);
    let message = build_inbound(sim, body)?;
    if twice {
        sim.inject_inbound(&id, message.clone()).await?;
    }
    let message_id = sim.inject_inbound(&id, message).await?;
    Ok(Json(json!({ "message_id": message_id })))
}

/// Turns the control body into what the network would have decoded.
fn build_inbound(sim: &SimNetwork, b: InboundIn) -> ApiResult<InboundMessage> {
    let from = jid_field("from", &b.from)?;
    let chat = match &b.chat {
        Some(c) => jid_field("chat", c)?,
        None => from.clone(),
    };
    let message_type = match b.message_type {
        Some(t) if MESSAGE_TYPES.contains(&t.as_str()) => t,
        Some(t) => {
            return Err(ApiError::invalid_field(
                "message_type",
                format!("`{t}` is not one of {}", MESSAGE_TYPES.join(", ")),
            ));
        }
        None if b.location.is_some() => "location".into(),
        None if b.native_flow.is_some() => "interactive_response".into(),
        None => "text".into(),
    };
    if message_type == "text" && b.text.as_deref().is_none_or(str::is_empty) {
        return Err(ApiError::invalid_field(
            "text",
            "is required for a text message",
        ));
    }
    if let Some(loc) = &b.location {
        let ok = |k: &str| {
            loc.get(k)
                .and_then(Value::as_f64)
                .is_some_and(f64::is_finite)
        };
        if !ok("latitude") || !ok("longitude") {
            return Err(ApiError::invalid_field(
                "location",
                "needs numeric `latitude` and `longitude`",
            ));
        }
    }
    let native_flow = b.native_flow.map(parse_native_flow).transpose()?;
    let from_phone = match &b.sender_phone {
        None => None,
        Some(_) if from.kind() != JidKind::Lid => {
            return Err(ApiError::invalid_field(
                "sender_phone",
                "only goes with a sender given as an `@lid`",
            ));
        }
        Some(p) => Some(
            Jid::user(p)
                .map_err(|e| ApiError::invalid_field("sender_phone", e))?
                .user_part()
                .to_owned(),
        ),
    };
    let push_name = match b.push_name {
        Some(p) => p,
        None => registered_user(sim, &from)
            .and_then(|u| u.push_name)
            .or_else(|| from.phone().map(str::to_owned))
            .unwrap_or_default(),
    };
    let selected_id = b.selected_id.or_else(|| {
        (message_type == "interactive_response")
            .then(|| native_flow.as_ref()?.pointer("/params/id")?.as_str())
            .flatten()
            .map(str::to_owned)
    });
    let text = b.text.or_else(|| {
        matches!(
            message_type.as_str(),
            "interactive_response" | "buttons_response" | "list_response" | "template_button_reply"
        )
        .then(|| b.selected_text.clone().or_else(|| selected_id.clone()))
        .flatten()
    });
    Ok(InboundMessage {
        message_id: b.message_id.unwrap_or_else(|| sim.next_message_id()),
        participant: from.to_string(),
        from: from.to_string(),
        from_phone,
        chat: chat.to_string(),
        is_from_me: false,
        push_name,
        message_type,
        text,
        caption: b.caption,
        media_mimetype: b.media_mimetype,
        media: b.media,
        location: b.location,
        quoted_message_id: b.quoted_message_id,
        quoted_sender_jid: b.quoted_sender_jid,
        selected_id,
        selected_text: b.selected_text,
        native_flow,
        timestamp: unix_now(),
        offline: b.offline.unwrap_or(false),
    })
}

/// The registered outside user a sender is, by phone or by lid. Found by lid,
/// it gives its push name only: the network does not reveal the phone.
fn registered_user(sim: &SimNetwork, from: &Jid) -> Option<SimUser> {
    match from.kind() {
        JidKind::User => sim.user(from.user_part()).ok().flatten(),
        JidKind::Lid => sim.user_by_lid(&from.to_string()).ok().flatten(),
        _ => None,
    }
}

/// A native-flow reply carries its params as a JSON string on the wire; the
/// event carries them parsed.
fn parse_native_flow(v: Value) -> ApiResult<Value> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::invalid_field("native_flow.name", "is required"))?;
    let params = match v.get("params") {
        Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
            ApiError::invalid_field("native_flow.params", format!("is not a JSON document: {e}"))
        })?,
        Some(p) => p.clone(),
        None => json!({}),
    };
    Ok(json!({ "name": name, "params": params }))
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
