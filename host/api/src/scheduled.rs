//! Scheduled sends: scheduling (the `send_at` branch of
//! `POST /sessions/{id}/messages/{kind}`), listing per session and fleet-wide,
//! reading one and cancelling one.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiPath, ApiQuery, Paging};
use crate::domain::send::SendRequest;
use crate::domain::time::{iso8601, parse_iso8601, unix_now};
use switchboard_runtime::scheduler::ScheduleError;
use switchboard_runtime::scheduler::model::{ScheduledSend, ScheduledStatus};
use switchboard_runtime::sessions::SessionError;

/// The scheduled-send routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/scheduled", get(list_all))
        .route("/api/v1/sessions/{id}/scheduled", get(list))
        .route(
            "/api/v1/sessions/{id}/scheduled/{scheduled_id}",
            get(get_one).delete(cancel),
        )
}

/// The `send_at` of a send body when it is in the future: `Ok(None)` when it
/// is absent, `null`, not a string (the body's validation names that) or not
/// after the current second; `400 invalid_field` naming `send_at` when it does
/// not parse.
pub fn future_send_at(body: &Value) -> ApiResult<Option<i64>> {
    let Some(Value::String(s)) = body.get("send_at") else {
        return Ok(None);
    };
    let at = parse_iso8601(s).map_err(|m| ApiError::invalid_field("send_at", m))?;
    Ok((at > unix_now()).then_some(at))
}

/// Validates and stores a send for `send_at`; answers `202` with
/// `{scheduled_id, send_at, status}`.
pub fn schedule(
    state: &AppState,
    session_id: &str,
    request: &SendRequest,
    body: Value,
    send_at: i64,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let send = state
        .scheduler
        .schedule(session_id, request, body, send_at)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({
            "scheduled_id": send.id,
            "send_at": iso8601(send.send_at),
            "status": send.status,
        })),
    ))
}

/// A scheduled send as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ScheduledOut {
    scheduled_id: String,
    session_id: String,
    kind: String,
    to: String,
    send_at: String,
    status: ScheduledStatus,
    created_at: String,
    attempts: u32,
    message_id: Option<String>,
    sent_at: Option<String>,
    finished_at: Option<String>,
    last_error: Option<String>,
    body: Value,
}

impl From<ScheduledSend> for ScheduledOut {
    fn from(s: ScheduledSend) -> Self {
        let sent = s.status == ScheduledStatus::Sent;
        Self {
            scheduled_id: s.id,
            session_id: s.session_id,
            kind: s.kind,
            to: s.to,
            send_at: iso8601(s.send_at),
            status: s.status,
            created_at: iso8601(s.created_at),
            attempts: s.attempts,
            message_id: sent.then_some(s.message_id),
            sent_at: s.sent_at.map(iso8601),
            finished_at: s.finished_at.map(iso8601),
            last_error: s.last_error,
            body: s.body,
        }
    }
}

/// Query of the listings.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Comma-separated statuses.
    status: Option<String>,
    /// Fleet-wide listing only: one session.
    session: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
}

impl ListQuery {
    fn statuses(&self) -> ApiResult<Vec<ScheduledStatus>> {
        let Some(list) = self.status.as_deref() else {
            return Ok(Vec::new());
        };
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                ScheduledStatus::parse(s).ok_or_else(|| {
                    let known: Vec<&str> =
                        ScheduledStatus::ALL.iter().map(|s| s.as_str()).collect();
                    ApiError::bad_request(
                        "invalid_query",
                        format!(
                            "`status` names an unknown status `{s}`; use {}",
                            known.join(", ")
                        ),
                    )
                })
            })
            .collect()
    }

    fn paging(&self) -> (usize, usize) {
        Paging {
            limit: self.limit,
            offset: self.offset,
        }
        .resolve()
    }
}

fn known_session(state: &AppState, id: &str) -> ApiResult<()> {
    if state.sessions.exists(id) {
        Ok(())
    } else {
        Err(SessionError::NotFound(id.to_owned()).into())
    }
}

fn page(sends: Vec<ScheduledSend>, limit: usize, offset: usize) -> Json<Value> {
    let sends: Vec<ScheduledOut> = sends.into_iter().map(Into::into).collect();
    Json(json!({ "scheduled": sends, "count": sends.len(), "limit": limit, "offset": offset }))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/scheduled",
    operation_id = "scheduled_list",
    tag = "scheduled",
    summary = "A session's scheduled sends",
    params(crate::openapi::common::SessionPath, ListQuery),
    responses(
        (status = 200, body = crate::openapi::answers::ScheduledList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Value>> {
    known_session(&state, &id)?;
    if query.session.is_some() {
        return Err(ApiError::bad_request(
            "invalid_query",
            "`session` filters the fleet-wide listing (GET /api/v1/scheduled); this path names the session",
        ));
    }
    let statuses = query.statuses()?;
    let (limit, offset) = query.paging();
    let sends = state.scheduler.list(Some(&id), &statuses, offset, limit)?;
    Ok(page(sends, limit, offset))
}

#[utoipa::path(
    get,
    path = "/api/v1/scheduled",
    operation_id = "scheduled_list_all",
    tag = "scheduled",
    summary = "Every scheduled send of the gateway",
    params(ListQuery),
    responses(
        (status = 200, body = crate::openapi::answers::ScheduledList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_all(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Value>> {
    let statuses = query.statuses()?;
    let (limit, offset) = query.paging();
    let session = query.session.as_deref().filter(|s| !s.is_empty());
    let sends = state.scheduler.list(session, &statuses, offset, limit)?;
    Ok(page(sends, limit, offset))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/scheduled/{scheduled_id}",
    operation_id = "scheduled_get_one",
    tag = "scheduled",
    summary = "A scheduled send",
    params(crate::openapi::common::ScheduledPath),
    responses(
        (status = 200, body = ScheduledOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath((id, scheduled_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<ScheduledOut>> {
    known_session(&state, &id)?;
    Ok(Json(state.scheduler.get(&id, &scheduled_id)?.into()))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/scheduled/{scheduled_id}",
    operation_id = "scheduled_cancel",
    tag = "scheduled",
    summary = "Cancel a scheduled send",
    params(crate::openapi::common::ScheduledPath),
    responses(
        (status = 200, body = ScheduledOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn cancel(
    State(state): State<AppState>,
    ApiPath((id, scheduled_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<ScheduledOut>> {
    known_session(&state, &id)?;
    Ok(Json(state.scheduler.cancel(&id, &scheduled_id)?.into()))
}

impl From<ScheduleError> for ApiError {
    fn from(e: ScheduleError) -> Self {
        let msg = e.to_string();
        match e {
            ScheduleError::SessionNotFound(_) => ApiError::not_found("session_not_found", msg),
            ScheduleError::NotFound(_) => ApiError::not_found("scheduled_send_not_found", msg),
            ScheduleError::NotCancellable { .. } => ApiError::bad_request("not_cancellable", msg),
            ScheduleError::InProgress(_) => ApiError::conflict("send_in_progress", msg),
            ScheduleError::Store(s) => s.into(),
        }
    }
}
