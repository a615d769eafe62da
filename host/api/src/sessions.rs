//! Session lifecycle: create, list, get, delete, connect, disconnect, logout,
//! status, QR code, pair by code, pause and resume.

use std::borrow::Cow;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::AppState;
use super::auth::Principal;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, MaybeJson};
use crate::openapi::common::{PhoneNumber, SessionPath, SuccessMessage};
use switchboard_runtime::sessions::{NewSession, SessionError, SessionInfo};

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
    /// The session id, 1 to 64 letters, digits, `_`, `-` and `.`, not
    /// starting with a dot; a UUID is generated when absent.
    #[schema(pattern = r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$")]
    pub id: Option<String>,
    /// A label; on the simulated network also the account's push name.
    pub name: Option<String>,
    /// The network backend; the gateway's default when absent. Which ones
    /// are available depends on the build and the configuration.
    pub network: Option<NetworkName>,
    /// Simulated network only: the account's phone number.
    #[schema(value_type = Option<PhoneNumber>)]
    pub phone: Option<String>,
    /// The proxy the session's WhatsApp connection and media transfers go
    /// through (`url: none` for a direct one); the gateway's default
    /// (`--proxy`) when absent. Its credentials are kept sealed and never
    /// shown.
    pub proxy: Option<super::session_proxy::ProxyIn>,
}

/// A network backend a session can be created on.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NetworkName {
    /// The simulated network (when enabled).
    Sim,
    /// The real network (when built in).
    Whatsapp,
}

impl NetworkName {
    /// The network's name as the runtime knows it.
    fn as_str(self) -> &'static str {
        match self {
            Self::Sim => "sim",
            Self::Whatsapp => "whatsapp",
        }
    }
}

/// The documented body of `POST /api/v1/sessions`: a [`CreateSessionIn`]
/// whose `phone`, when given, goes with the `sim` network (named, or the
/// gateway's default).
pub struct CreateSessionBody;

impl PartialSchema for CreateSessionBody {
    fn schema() -> RefOr<Schema> {
        let sim = ObjectBuilder::new().property(
            "network",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([NetworkName::Sim.as_str()])),
        );
        let no_phone =
            ObjectBuilder::new().property("phone", ObjectBuilder::new().schema_type(Type::Null));
        AllOfBuilder::new()
            .item(Ref::from_schema_name(CreateSessionIn::name()))
            .item(AnyOfBuilder::new().item(sim).item(no_phone))
            .description(Some(
                "Every field may be left out; `phone` is only for the `sim` network.",
            ))
            .into()
    }
}

impl ToSchema for CreateSessionBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("CreateSessionBody")
    }

    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        out.push((
            CreateSessionIn::name().into_owned(),
            CreateSessionIn::schema(),
        ));
        CreateSessionIn::schemas(out);
    }
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
    /// The account's reach-out timelock while it holds (WhatsApp's error
    /// 463: no messages to people it has no chat with); `null` otherwise.
    pub reach_out_timelock: Option<TimelockOut>,
    /// The automatic reconnect the session waits for: when (`at_ms`, Unix
    /// milliseconds; `delay_ms` the pause chosen), why, and the failures
    /// that chose the pause; `null` when none is pending.
    pub next_reconnect: Option<crate::domain::event_data::own::ReconnectScheduledData>,
    /// The session's own proxy (`url: none`: a direct connection);
    /// `null` when it takes the gateway's default. `GET …/proxy` tells
    /// which one its connections use.
    pub proxy: Option<super::session_proxy::ProxyOut>,
    /// Unix seconds of creation.
    pub created_at: i64,
}

/// A reach-out timelock as a session shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TimelockOut {
    /// ISO-8601 time it ends: sends to people without a chat are held until
    /// then.
    pub until: String,
    /// Whether WhatsApp stated the end (else the gateway assumed
    /// `--reach-out-hold-secs` from when it learned of the lock).
    pub stated: bool,
    /// Whole seconds until it ends.
    pub retry_after_secs: i64,
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
            reach_out_timelock: info.state.timelock.and_then(|lock| {
                let now = crate::domain::time::unix_now();
                lock.holds_at(now).then(|| TimelockOut {
                    until: crate::domain::time::iso8601(lock.until),
                    stated: lock.stated,
                    retry_after_secs: lock.retry_after_secs(now),
                })
            }),
            next_reconnect: info.state.next_reconnect,
            proxy: r
                .proxy
                .as_ref()
                .map(super::session_proxy::ProxyOut::of_stored),
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
    request_body(content = Option<CreateSessionBody>, description = "Optional; every field may be left out."),
    responses(
        (status = 201, description = "Created.", body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    MaybeJson(body): MaybeJson<CreateSessionIn>,
) -> ApiResult<(StatusCode, Json<SessionOut>)> {
    // A token limited to some sessions creates one only under an id of its
    // own set, or a new id that joins its set. Any other id that is taken,
    // kept for another token or held by a session it cannot see, gets one
    // answer, word for word: it cannot tell which (the comment at the top
    // of `auth.rs`: a tenant cannot learn which sessions exist).
    let new = NewSession {
        id: body.id,
        name: body.name,
        network: body.network.map(|n| n.as_str().to_owned()),
        phone: body.phone,
        proxy: body
            .proxy
            .map(super::session_proxy::ProxyIn::choice)
            .transpose()?,
    };
    let scoped = match &principal {
        Principal::Token(t) => Some(t),
        Principal::Admin => None,
    };
    let joins_set = scoped.filter(|t| new.id.as_deref().is_none_or(|id| !t.sessions.covers(id)));
    if let (Some(t), Some(id)) = (joins_set, new.id.as_deref())
        && state.tokens.reserved_by_other(&t.id, id)
    {
        return Err(unavailable(id));
    }
    // A session that would join the token's set needs a place in its
    // quota, held until it has joined (two creates at once cannot both take
    // the last place).
    let _slot = match joins_set {
        Some(t) => state.tokens.reserve_session(&t.id).map_err(|full| {
            ApiError::conflict(
                "session_limit_reached",
                format!(
                    "token `{}` holds {} sessions, its limit (--token-max-sessions); delete one it no longer needs, or ask the operator for a larger limit",
                    full.token, full.limit
                ),
            )
        })?,
        None => None,
    };
    let info = match state.sessions.create(new).await {
        Err(SessionError::AlreadyExists(id)) if joins_set.is_some() => {
            return Err(unavailable(&id));
        }
        other => other?,
    };
    if let Some(t) = joins_set {
        state.tokens.add_session(&t.id, &info.record.id)?;
    }
    Ok((StatusCode::CREATED, Json(info.into())))
}

/// The answer a token limited to some sessions gets for an id outside its
/// set that is taken, however it is taken.
fn unavailable(id: &str) -> ApiError {
    ApiError::conflict(
        "session_exists",
        format!("session id `{id}` is not available; choose another"),
    )
}

/// The answer of `GET /api/v1/sessions`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionList {
    /// How many sessions.
    pub count: usize,
    /// Every session, ordered by id.
    pub sessions: Vec<SessionOut>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions",
    operation_id = "sessions_list",
    tag = "sessions",
    summary = "List sessions",
    responses(
        (status = 200, body = SessionList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
) -> ApiResult<Json<SessionList>> {
    let sessions: Vec<SessionOut> = state
        .sessions
        .list()?
        .into_iter()
        .filter(|s| principal.covers(&s.record.id))
        .map(Into::into)
        .collect();
    Ok(Json(SessionList {
        count: sessions.len(),
        sessions,
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}",
    operation_id = "sessions_get_one",
    tag = "sessions",
    summary = "Get a session",
    params(SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.get(&id)?.into()))
}

/// The answer of `GET /api/v1/sessions/{id}/status`: the session and its
/// webhooks' delivery health.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionStatusOut {
    /// The session.
    #[serde(flatten)]
    pub session: SessionOut,
    /// Delivery diagnostics.
    pub diagnostics: Diagnostics,
}

/// The `diagnostics` of a session's status.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Diagnostics {
    /// One entry per webhook URL of the session, sorted by URL.
    pub webhooks: Vec<WebhookHealth>,
}

/// Delivery health of one webhook URL.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookHealth {
    /// Whether the URL is suspended (deliveries skipped, one probe at a time).
    pub circuit_open: bool,
    /// Failed attempts in a row.
    pub consecutive_failures: u32,
    /// The last failure.
    pub last_error: Option<String>,
    /// Seconds until the next probe, while suspended.
    pub retry_in_seconds: Option<f64>,
    /// Deliveries skipped while suspended.
    pub skipped_while_suspended: u64,
    /// Deliveries to the URL pending in the durable outbox (ready, waiting
    /// for a retry or in flight), every session's together.
    pub pending: u64,
    /// Seconds since the oldest pending delivery was recorded; null when
    /// none is pending.
    pub oldest_pending_seconds: Option<f64>,
    /// The URL.
    pub url: String,
}

/// The session with `diagnostics.webhooks[]`: delivery health per webhook URL.
#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/status",
    operation_id = "sessions_status",
    tag = "sessions",
    summary = "A session with its webhooks' delivery health",
    params(SessionPath),
    responses(
        (status = 200, body = SessionStatusOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn status(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionStatusOut>> {
    let session = SessionOut::from(state.sessions.get(&id)?);
    let webhooks = state
        .webhooks
        .diagnostics(&id)
        .into_iter()
        .map(|(url, h)| {
            let backlog = state.webhooks.backlog(&id, &url);
            WebhookHealth {
                circuit_open: h.circuit_open,
                consecutive_failures: h.consecutive_failures,
                last_error: h.last_error,
                retry_in_seconds: h.retry_in_seconds,
                skipped_while_suspended: h.skipped_while_suspended,
                pending: backlog.pending,
                oldest_pending_seconds: backlog.oldest_seconds,
                url,
            }
        })
        .collect();
    Ok(Json(SessionStatusOut {
        session,
        diagnostics: Diagnostics { webhooks },
    }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}",
    operation_id = "sessions_delete",
    tag = "sessions",
    summary = "Delete a session and everything stored for it",
    params(SessionPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn delete(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SuccessMessage>> {
    if !state.sessions.exists(&id) {
        return Err(switchboard_runtime::sessions::SessionError::NotFound(id).into());
    }
    // Retire pending deliveries first, so none can dead-letter into the
    // session's rows after the cascade removed them.
    state.webhooks.forget_session(&id);
    state.events.forget_session(&id);
    state.sessions.delete(&id).await?;
    // Again now the rows are gone: a registration that stored its webhook
    // before the cascade leaves nothing in memory either.
    state.webhooks.forget_session(&id);
    // A later session of this id may be another tenant's: no token keeps it.
    state.tokens.remove_session(&id)?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("session `{id}` and everything stored for it were deleted"),
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/connect",
    operation_id = "sessions_connect",
    tag = "sessions",
    summary = "Connect (an unpaired session starts showing QR codes)",
    params(SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn connect(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.connect(&id).await?.into()))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/disconnect",
    operation_id = "sessions_disconnect",
    tag = "sessions",
    summary = "Disconnect, keeping the credentials",
    params(SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn disconnect(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.disconnect(&id).await?.into()))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/logout",
    operation_id = "sessions_logout",
    tag = "sessions",
    summary = "Log out: unlink the device and forget the credentials",
    params(SessionPath),
    responses(
        (status = 200, body = SessionOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn logout(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SessionOut>> {
    Ok(Json(state.sessions.logout(&id).await?.into()))
}

/// The answer of `GET /api/v1/sessions/{id}/qr`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct QrOut {
    /// Unix seconds when it is replaced.
    pub expires_at: i64,
    /// The current QR code's content (rotates).
    pub qr: String,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/qr",
    operation_id = "sessions_qr",
    tag = "sessions",
    summary = "The current QR code of a connecting, unpaired session",
    params(SessionPath),
    responses(
        (status = 200, body = QrOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn qr(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<QrOut>> {
    let (qr, expires_at) = state.sessions.qr(&id)?;
    Ok(Json(QrOut { expires_at, qr }))
}

/// Body of `POST /api/v1/sessions/{id}/pair`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PairIn {
    /// The account's phone number, in international form.
    #[schema(value_type = PhoneNumber)]
    pub phone_number: String,
}

/// The answer of `POST /api/v1/sessions/{id}/pair`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PairOut {
    /// The code to type on the phone, `ABCD-EFGH`.
    pub pair_code: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/pair",
    operation_id = "sessions_pair",
    tag = "sessions",
    summary = "Pair by code instead of QR",
    params(SessionPath),
    request_body = PairIn,
    responses(
        (status = 200, body = PairOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn pair(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<PairIn>,
) -> ApiResult<Json<PairOut>> {
    let pair_code = state.sessions.pair(&id, &body.phone_number).await?;
    Ok(Json(PairOut { pair_code }))
}

/// The answer of `POST /api/v1/sessions/{id}/pause` and `/resume`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PausedOut {
    /// Whether the session is now paused.
    pub paused: bool,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/pause",
    operation_id = "sessions_pause",
    tag = "sessions",
    summary = "Pause: stop sending and receiving, stay linked",
    params(SessionPath),
    responses(
        (status = 200, body = PausedOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn pause(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<PausedOut>> {
    state.sessions.pause(&id).await?;
    Ok(Json(PausedOut { paused: true }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/resume",
    operation_id = "sessions_resume",
    tag = "sessions",
    summary = "Resume a paused session",
    params(SessionPath),
    responses(
        (status = 200, body = PausedOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn resume(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<PausedOut>> {
    state.sessions.resume(&id).await?;
    Ok(Json(PausedOut { paused: false }))
}
