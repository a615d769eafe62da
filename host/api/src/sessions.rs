//! Session lifecycle: create, list, get, delete, connect, disconnect, logout,
//! status, QR code, pair by code, pause and resume.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, MaybeJson};
use switchboard_runtime::sessions::{NewSession, SessionInfo};

/// The session routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions", post(create).get(list))
        .route("/api/v1/sessions/{id}", get(get_one).delete(delete))
        .route("/api/v1/sessions/{id}/status", get(status))
        .route("/api/v1/sessions/{id}/connect", post(connect))
        .route("/api/v1/sessions/{id}/disconnect", post(disconnect))
        .route("/api/v1/sessions/{id}/logout", post(logout))
        .route("/api/v1/sessions/{id}/qr", get(qr))
        .route("/api/v1/sessions/{id}/pair", post(pair))
        .route("/api/v1/sessions/{id}/pause", post(pause))
        .route("/api/v1/sessions/{id}/resume", post(resume))
}

/// Body of `POST /api/v1/sessions`; every field is optional.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionIn {
    /// The session id; a UUID is generated when absent.
    pub id: Option<String>,
    /// A label; on the simulated network also the account's push name.
    pub name: Option<String>,
    /// `sim` or `whatsapp`; the gateway's default when absent.
    pub network: Option<String>,
    /// Simulated network only: the account's phone number.
    pub phone: Option<String>,
}

/// A session as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionOut {
    /// The session id.
    pub id: String,
    /// The label.
    pub name: Option<String>,
    /// The network backend.
    pub network: String,
    /// Connection status.
    pub status: &'static str,
    /// Whether the session holds credentials of a linked account.
    pub is_logged_in: bool,
    /// Whether the session is paused.
    pub paused: bool,
    /// The linked account's JID.
    pub jid: Option<String>,
    /// The linked account's phone digits.
    pub phone_number: Option<String>,
    /// The linked account's push name.
    pub push_name: Option<String>,
    /// Whether the session reconnects by itself after a drop.
    pub auto_reconnect: bool,
    /// The last network error, cleared on login.
    pub last_error: Option<String>,
    /// Unix seconds of creation.
    pub created_at: i64,
}

impl From<SessionInfo> for SessionOut {
    fn from(info: SessionInfo) -> Self {
        let r = info.record;
        Self {
            status: info.state.status.as_str(),
            is_logged_in: r.account.is_some(),
            jid: r.account.as_ref().map(|a| a.jid.clone()),
            phone_number: r.account.as_ref().map(|a| a.phone.clone()),
            push_name: r.account.as_ref().and_then(|a| a.push_name.clone()),
            id: r.id,
            name: r.name,
            network: r.network,
            paused: r.paused,
            auto_reconnect: r.auto_reconnect,
            last_error: info.state.last_error,
            created_at: r.created_at,
        }
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions",
    operation_id = "sessions_create",
    tag = "sessions",
    summary = "Create a session",
    request_body(content = Option<CreateSessionIn>, description = "Optional; every field may be left out."),
    responses(
        (status = 201, description = "Created.", body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn create(
    State(state): State<AppState>,
    MaybeJson(body): MaybeJson<CreateSessionIn>,
) -> ApiResult<(StatusCode, Json<SessionOut>)> {
    let new = NewSession {
        id: body.id,
        name: body.name,
        network: body.network,
        phone: body.phone,
    };
    let info = state.sessions.create(new).await?;
    Ok((StatusCode::CREATED, Json(info.into())))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions",
    operation_id = "sessions_list",
    tag = "sessions",
    summary = "List sessions",
    responses(
        (status = 200, body = crate::openapi::answers::SessionList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let sessions: Vec<SessionOut> = state.sessions.list()?.into_iter().map(Into::into).collect();
    Ok(Json(
        json!({ "count": sessions.len(), "sessions": sessions }),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}",
    operation_id = "sessions_get_one",
    tag = "sessions",
    summary = "Get a session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.get(&id)?.into()))
}

/// The session with `diagnostics.webhooks[]`: delivery health per webhook URL.
#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/status",
    operation_id = "sessions_status",
    tag = "sessions",
    summary = "A session with its webhooks' delivery health",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::SessionStatusOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn status(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let session = SessionOut::from(state.sessions.get(&id)?);
    let webhooks: Vec<Value> = state
        .webhooks
        .diagnostics(&id)
        .into_iter()
        .map(|(url, h)| {
            json!({
                "url": url,
                "circuit_open": h.circuit_open,
                "consecutive_failures": h.consecutive_failures,
                "retry_in_seconds": h.retry_in_seconds,
                "last_error": h.last_error,
                "skipped_while_suspended": h.skipped_while_suspended,
            })
        })
        .collect();
    let mut body = serde_json::to_value(session).map_err(ApiError::internal)?;
    body["diagnostics"] = json!({ "webhooks": webhooks });
    Ok(Json(body))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}",
    operation_id = "sessions_delete",
    tag = "sessions",
    summary = "Delete a session and everything stored for it",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::common::SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn delete(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    if !state.sessions.exists(&id) {
        return Err(switchboard_runtime::sessions::SessionError::NotFound(id).into());
    }
    // Retire pending deliveries first, so none can dead-letter into the
    // session's rows after the cascade removed them.
    state.webhooks.forget_session(&id);
    state.sessions.delete(&id).await?;
    Ok(Json(
        json!({ "success": true, "message": format!("session `{id}` and everything stored for it were deleted") }),
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/connect",
    operation_id = "sessions_connect",
    tag = "sessions",
    summary = "Connect (an unpaired session starts showing QR codes)",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn connect(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.connect(&id).await?.into()))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/disconnect",
    operation_id = "sessions_disconnect",
    tag = "sessions",
    summary = "Disconnect, keeping the credentials",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn disconnect(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.disconnect(&id).await?.into()))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/logout",
    operation_id = "sessions_logout",
    tag = "sessions",
    summary = "Log out: unlink the device and forget the credentials",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn logout(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.logout(&id).await?.into()))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/qr",
    operation_id = "sessions_qr",
    tag = "sessions",
    summary = "The current QR code of a connecting, unpaired session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::QrOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn qr(State(state): State<AppState>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Value>> {
    let (code, expires_at) = state.sessions.qr(&id)?;
    Ok(Json(json!({ "qr": code, "expires_at": expires_at })))
}

/// Body of `POST /api/v1/sessions/{id}/pair`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PairIn {
    /// The account's phone number, in international form.
    pub phone_number: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/pair",
    operation_id = "sessions_pair",
    tag = "sessions",
    summary = "Pair by code instead of QR",
    params(crate::openapi::common::SessionPath),
    request_body = PairIn,
    responses(
        (status = 200, body = crate::openapi::answers::PairOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn pair(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<PairIn>,
) -> ApiResult<Json<Value>> {
    let code = state.sessions.pair(&id, &body.phone_number).await?;
    Ok(Json(json!({ "pair_code": code })))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/pause",
    operation_id = "sessions_pause",
    tag = "sessions",
    summary = "Pause: stop sending and receiving, stay linked",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::PausedOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn pause(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    state.sessions.pause(&id).await?;
    Ok(Json(json!({ "paused": true })))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/resume",
    operation_id = "sessions_resume",
    tag = "sessions",
    summary = "Resume a paused session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::PausedOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn resume(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    state.sessions.resume(&id).await?;
    Ok(Json(json!({ "paused": false })))
}
