//! Sending messages (`POST /sessions/{id}/messages/{kind}`, now or, with a
//! future `send_at`, scheduled) and reading the stored history
//! (`GET /sessions/{id}/messages`).

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::Value;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery, Paging};
use super::scheduled::{self, ScheduledAccepted};
use crate::domain::jid::Jid;
use crate::domain::message::MessageRecord;
use crate::domain::send::{MediaSource, SendKind, SendRequest};
use crate::openapi::common::{SendPath, SessionPath};

/// The message routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/messages", get(list))
        .route("/api/v1/sessions/{id}/messages/{kind}", post(send))
}

/// `200` of `POST /api/v1/sessions/{id}/messages/{kind}`: sent now.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SentOut {
    /// The network's message id.
    pub message_id: String,
    /// Unix seconds.
    pub timestamp: i64,
    /// The chat JID it went to.
    pub to: String,
    /// The recipient's `@lid`, when the session knows it (learned, or
    /// revealed by the network when it sent); `null` otherwise and for
    /// groups.
    pub lid: Option<String>,
}

/// The answer of a send: [`SentOut`] (`200`) or [`ScheduledAccepted`] (`202`).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum SendOutcome {
    /// Sent now.
    Sent(SentOut),
    /// Stored for its `send_at`.
    Scheduled(ScheduledAccepted),
}

impl From<ScheduledAccepted> for SendOutcome {
    fn from(accepted: ScheduledAccepted) -> Self {
        Self::Scheduled(accepted)
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/{kind}",
    operation_id = "messages_send",
    tag = "messages",
    summary = "Send a message of one kind, now or at `send_at`",
    description = "The body's shape depends on `kind` (one of the `Send*` schemas); every body has `to` and may have `send_at` (ISO-8601): a future `send_at` stores the send and answers 202.",
    params(SendPath),
    request_body(content = crate::openapi::send_bodies::SendBody, description = "The body of the kind named in the path."),
    responses(
        (status = 200, description = "Sent.", body = SentOut),
        (status = 202, description = "Scheduled for `send_at`.", body = ScheduledAccepted),
        crate::openapi::common::ApiErrors,
    )
)]
async fn send(
    State(state): State<AppState>,
    ApiPath(SendPath { id, kind }): ApiPath<SendPath>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<(StatusCode, Json<SendOutcome>)> {
    let (status, outcome) = send_json(&state, &id, &kind, body, None).await?;
    Ok((status, Json(outcome)))
}

/// Sends one message of `kind` from its JSON body on session `id`, now or
/// (with a future `send_at`) scheduled: what `POST …/messages/{kind}` does,
/// with the same validation, transforms, send pacing, records, events and
/// errors. The broker's send queue takes this path too, with `message_id`
/// set (one per command), so a command delivered twice is one message on
/// the network.
pub async fn send_json(
    state: &AppState,
    id: &str,
    kind: &str,
    body: Value,
    message_id: Option<String>,
) -> ApiResult<(StatusCode, SendOutcome)> {
    let kind = SendKind::parse(kind).ok_or_else(|| {
        let known: Vec<&str> = SendKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::not_found(
            "unknown_send_kind",
            format!(
                "`{kind}` is not a send kind; use one of {}",
                known.join(", ")
            ),
        )
    })?;
    if !state.sessions.exists(id) {
        return Err(switchboard_runtime::sessions::SessionError::NotFound(id.to_owned()).into());
    }
    let send_at = scheduled::future_send_at(&body)?;
    // An immediate send to someone the account has no chat with, while its
    // reach-out timelock holds: stored for the lock's end, like a send
    // scheduled for then (a `to` that does not parse is refused below).
    let held = match send_at {
        None => body
            .get("to")
            .and_then(Value::as_str)
            .and_then(|to| Jid::parse_recipient(to).ok())
            .and_then(|to| state.sessions.hold_for(id, &to)),
        Some(_) => None,
    };
    let deferred = match (send_at, held) {
        (Some(send_at), _) => Some(Ok(send_at)),
        (None, Some(lock)) => Some(Err(lock)),
        (None, None) => None,
    };
    if let Some(deferred) = deferred {
        let request = SendRequest::from_json(kind, body.clone())?;
        match request.content.media_source() {
            Some(MediaSource::Stored(media_id)) => {
                crate::media::check_media_id(state, id, "media_id", media_id).await?;
            }
            Some(MediaSource::Url(url)) => state.send.check_media_url(url).await?,
            _ => {}
        }
        let (status, Json(outcome)) = match deferred {
            Ok(send_at) => scheduled::schedule(state, id, &request, body, send_at, message_id)?,
            Err(lock) => scheduled::hold(state, id, &request, body, lock, message_id)?,
        };
        return Ok((status, outcome));
    }
    let request = SendRequest::from_json(kind, body)?;
    let to = request.to.clone();
    // An ordinary send: paced by the session's send pacing (which may make
    // it wait its turn, or refuse it with `429 send_paced`).
    let record = state.send.send(id, request, message_id.as_deref()).await?;
    Ok((
        StatusCode::OK,
        SendOutcome::Sent(SentOut {
            message_id: record.message_id,
            timestamp: record.timestamp,
            to: record.chat,
            lid: state.chats.recipient_lid(id, &to).await,
        }),
    ))
}

/// The answer of `GET /api/v1/sessions/{id}/messages`: newest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MessageList {
    /// Records on this page.
    pub count: usize,
    /// The page size used.
    pub limit: usize,
    /// The page of message records.
    pub messages: Vec<MessageRecord>,
    /// Records skipped.
    pub offset: usize,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/messages",
    operation_id = "messages_list",
    tag = "messages",
    summary = "A session's stored messages, newest first",
    params(SessionPath, Paging),
    responses(
        (status = 200, body = MessageList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<MessageList>> {
    if !state.sessions.exists(&id) {
        return Err(switchboard_runtime::sessions::SessionError::NotFound(id).into());
    }
    let (limit, offset) = paging.resolve();
    let messages = state.store.list_messages(&id, offset, limit)?;
    Ok(Json(MessageList {
        count: messages.len(),
        limit,
        messages,
        offset,
    }))
}
