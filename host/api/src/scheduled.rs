//! Scheduled sends: scheduling (the `send_at` branch of
//! `POST /sessions/{id}/messages/{kind}`), listing per session and fleet-wide,
//! reading one and cancelling one.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::get;
use axum::{Extension, Router};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::AppState;
use super::auth::Principal;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiPath, ApiQuery, Paging};
use crate::domain::send::SendRequest;
use crate::domain::time::{iso8601, parse_iso8601, unix_now};
use crate::domain::token::SessionSet;
use crate::openapi::common::{ScheduledPath, SessionPath};
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

/// `202` of `POST /api/v1/sessions/{id}/messages/{kind}` with a future `send_at`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScheduledAccepted {
    /// The scheduled send's id.
    pub scheduled_id: String,
    /// ISO-8601 time it is due.
    pub send_at: String,
    /// `scheduled`.
    pub status: ScheduledStatus,
    /// Why an immediate send was stored instead of sent: `reach_out_timelock`
    /// (held until the account's reach-out timelock ends; `send_at` is its
    /// end). Absent for a send scheduled by its `send_at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<&'static str>,
}

/// Validates and stores a send for `send_at`, to go out under `message_id`
/// (a new id when `None`); answers `202` with [`ScheduledAccepted`] (or the
/// handler's answer made from it).
pub fn schedule<T: From<ScheduledAccepted>>(
    state: &AppState,
    session_id: &str,
    request: &SendRequest,
    body: Value,
    send_at: i64,
    message_id: Option<String>,
) -> ApiResult<(StatusCode, Json<T>)> {
    let send = state
        .scheduler
        .schedule(session_id, request, body, send_at, message_id)?;
    let accepted = ScheduledAccepted {
        scheduled_id: send.id,
        send_at: iso8601(send.send_at),
        status: send.status,
        held: None,
    };
    Ok((StatusCode::ACCEPTED, Json(accepted.into())))
}

/// Stores an immediate send that the account's reach-out timelock holds
/// (see [`switchboard_runtime::sessions::Sessions::hold_for`]) as a send
/// scheduled for the lock's end; answers `202` with [`ScheduledAccepted`]
/// marked `held`.
pub fn hold<T: From<ScheduledAccepted>>(
    state: &AppState,
    session_id: &str,
    request: &SendRequest,
    body: Value,
    lock: switchboard_runtime::sessions::Timelock,
    message_id: Option<String>,
) -> ApiResult<(StatusCode, Json<T>)> {
    let reason = switchboard_runtime::sessions::SessionError::Timelocked {
        session: session_id.to_owned(),
        lock,
        refused: false,
    }
    .to_string();
    let send = state
        .scheduler
        .schedule_held(session_id, request, body, lock.until, message_id, reason)?;
    let accepted = ScheduledAccepted {
        scheduled_id: send.id,
        send_at: iso8601(send.send_at),
        status: send.status,
        held: Some("reach_out_timelock"),
    };
    Ok((StatusCode::ACCEPTED, Json(accepted.into())))
}

/// A scheduled send as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScheduledOut {
    /// The scheduled send's id (a UUID; ids sort oldest first).
    scheduled_id: String,
    /// The session that sends it.
    session_id: String,
    /// The send kind (`text`, `cta-url`, …).
    kind: String,
    /// The recipient's JID.
    to: String,
    /// ISO-8601 time it is due.
    send_at: String,
    /// Where it is in its life.
    status: ScheduledStatus,
    /// ISO-8601 time it was scheduled.
    created_at: String,
    /// How many times it was handed to the network.
    attempts: u32,
    /// The network's message id, once sent.
    message_id: Option<String>,
    /// ISO-8601 time the network recorded for the sent message.
    sent_at: Option<String>,
    /// ISO-8601 time it became sent, failed or cancelled.
    finished_at: Option<String>,
    /// Why the latest attempt did not send it (or why it waits).
    last_error: Option<String>,
    /// The content as it will be delivered, without `to` (media `data` as its size).
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

/// Query of the fleet-wide listing.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct FleetQuery {
    /// Only sends in these statuses (comma-separated; all when absent or empty).
    #[serde(default, deserialize_with = "statuses")]
    #[param(style = Form, explode = false)]
    status: Vec<ScheduledStatus>,
    /// Only this session's sends.
    session: Option<String>,
    /// Page size (100; clamped to 1..=1000).
    limit: Option<i64>,
    /// Sends to skip (0).
    offset: Option<i64>,
}

/// Query of a session's listing: the path names the session, so `session`
/// (of the fleet-wide listing) is refused here and not documented.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SessionQuery {
    /// Only sends in these statuses (comma-separated; all when absent or empty).
    #[serde(default, deserialize_with = "statuses")]
    #[param(style = Form, explode = false)]
    status: Vec<ScheduledStatus>,
    /// Refused: it filters the fleet-wide listing.
    #[param(ignore)]
    session: Option<String>,
    /// Page size (100; clamped to 1..=1000).
    limit: Option<i64>,
    /// Sends to skip (0).
    offset: Option<i64>,
}

/// Reads a comma-separated list of statuses; blank entries are skipped and
/// an unknown status is refused, naming the known ones.
fn statuses<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ScheduledStatus>, D::Error> {
    let Some(list) = Option::<String>::deserialize(d)? else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            ScheduledStatus::parse(s).ok_or_else(|| {
                let known: Vec<&str> = ScheduledStatus::ALL.iter().map(|s| s.as_str()).collect();
                D::Error::custom(format!(
                    "`status` names an unknown status `{s}`; use {}",
                    known.join(", ")
                ))
            })
        })
        .collect()
}

fn paging(limit: Option<i64>, offset: Option<i64>) -> (usize, usize) {
    Paging { limit, offset }.resolve()
}

fn known_session(state: &AppState, id: &str) -> ApiResult<()> {
    if state.sessions.exists(id) {
        Ok(())
    } else {
        Err(SessionError::NotFound(id.to_owned()).into())
    }
}

/// `GET /api/v1/scheduled` and `GET /api/v1/sessions/{id}/scheduled`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScheduledList {
    /// The page of scheduled sends.
    pub scheduled: Vec<ScheduledOut>,
    /// Sends on this page.
    pub count: usize,
    /// The page size used.
    pub limit: usize,
    /// Sends skipped.
    pub offset: usize,
}

fn page(sends: Vec<ScheduledSend>, limit: usize, offset: usize) -> Json<ScheduledList> {
    let scheduled: Vec<ScheduledOut> = sends.into_iter().map(Into::into).collect();
    Json(ScheduledList {
        count: scheduled.len(),
        scheduled,
        limit,
        offset,
    })
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/scheduled",
    operation_id = "scheduled_list",
    tag = "scheduled",
    summary = "A session's scheduled sends",
    params(SessionPath, SessionQuery),
    responses(
        (status = 200, body = ScheduledList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<SessionQuery>,
) -> ApiResult<Json<ScheduledList>> {
    known_session(&state, &id)?;
    if query.session.is_some() {
        return Err(ApiError::bad_request(
            "invalid_query",
            "`session` filters the fleet-wide listing (GET /api/v1/scheduled); this path names the session",
        ));
    }
    let (limit, offset) = paging(query.limit, query.offset);
    let sends = state
        .scheduler
        .list(Some(&id), &query.status, offset, limit)?;
    Ok(page(sends, limit, offset))
}

#[utoipa::path(
    get,
    path = "/api/v1/scheduled",
    operation_id = "scheduled_list_all",
    tag = "scheduled",
    summary = "Every scheduled send of the gateway",
    params(FleetQuery),
    responses(
        (status = 200, body = ScheduledList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_all(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(query): ApiQuery<FleetQuery>,
) -> ApiResult<Json<ScheduledList>> {
    let (limit, offset) = paging(query.limit, query.offset);
    let session = query.session.as_deref().filter(|s| !s.is_empty());
    let sends = match (&principal, session) {
        (_, Some(s)) if !principal.covers(s) => Vec::new(),
        (Principal::Token(t), None) => match &t.sessions {
            // A token limited to some sessions sees theirs only: each
            // session's sends, merged in the fleet list's order (newest
            // first), then paged.
            SessionSet::Only(ids) => {
                let mut all = Vec::new();
                for sid in ids {
                    all.extend(
                        state
                            .scheduler
                            .list(Some(sid), &query.status, 0, usize::MAX)?,
                    );
                }
                all.sort_by(|a, b| b.id.cmp(&a.id));
                all.into_iter().skip(offset).take(limit).collect()
            }
            SessionSet::All(_) => state.scheduler.list(None, &query.status, offset, limit)?,
        },
        _ => state
            .scheduler
            .list(session, &query.status, offset, limit)?,
    };
    Ok(page(sends, limit, offset))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/scheduled/{scheduled_id}",
    operation_id = "scheduled_get_one",
    tag = "scheduled",
    summary = "A scheduled send",
    params(ScheduledPath),
    responses(
        (status = 200, body = ScheduledOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(ScheduledPath { id, scheduled_id }): ApiPath<ScheduledPath>,
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
    params(ScheduledPath),
    responses(
        (status = 200, body = ScheduledOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn cancel(
    State(state): State<AppState>,
    ApiPath(ScheduledPath { id, scheduled_id }): ApiPath<ScheduledPath>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: serde::de::DeserializeOwned>(q: &str) -> Result<T, String> {
        let uri: axum::http::Uri = format!("/s?{q}").parse().unwrap();
        axum::extract::Query::<T>::try_from_uri(&uri)
            .map(|q| q.0)
            .map_err(|e| e.body_text())
    }

    #[test]
    fn statuses_are_a_comma_separated_list_and_an_unknown_one_is_named() {
        let q: FleetQuery = parse("status=scheduled,%20cancelled,&session=a").unwrap();
        assert_eq!(
            q.status,
            [ScheduledStatus::Scheduled, ScheduledStatus::Cancelled]
        );
        assert!(parse::<FleetQuery>("status=").unwrap().status.is_empty());
        assert!(parse::<SessionQuery>("").unwrap().status.is_empty());
        let err = parse::<SessionQuery>("status=sent,pending").unwrap_err();
        assert!(
            err.contains("`pending`") && err.contains("scheduled"),
            "{err}"
        );
        assert!(
            parse::<SessionQuery>("session=a")
                .unwrap()
                .session
                .is_some()
        );
    }
}
