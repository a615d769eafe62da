//! Sending messages (`POST /sessions/{id}/messages/{kind}`, now or, with a
//! future `send_at`, scheduled) and reading the stored history
//! (`GET /sessions/{id}/messages`).

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery, Paging};
use super::scheduled;
use crate::domain::send::{SendKind, SendRequest};

/// The message routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/messages", get(list))
        .route("/api/v1/sessions/{id}/messages/{kind}", post(send))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/{kind}",
    operation_id = "messages_send",
    tag = "messages",
    summary = "Send a message of one kind, now or at `send_at`",
    description = "The body's shape depends on `kind` (one of the `Send*` schemas); every body has `to` and may have `send_at` (ISO-8601): a future `send_at` stores the send and answers 202.",
    params(crate::openapi::common::SendPath),
    request_body(content = crate::openapi::send_bodies::SendBody, description = "The body of the kind named in the path."),
    responses(
        (status = 200, description = "Sent.", body = crate::openapi::answers::SentOut),
        (status = 202, description = "Scheduled for `send_at`.", body = crate::openapi::answers::ScheduledAccepted),
        crate::openapi::common::ApiErrors,
    )
)]
async fn send(
    State(state): State<AppState>,
    ApiPath((id, kind)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let kind = SendKind::parse(&kind).ok_or_else(|| {
        let known: Vec<&str> = SendKind::ALL.iter().map(|k| k.as_str()).collect();
        ApiError::not_found(
            "unknown_send_kind",
            format!(
                "`{kind}` is not a send kind; use one of {}",
                known.join(", ")
            ),
        )
    })?;
    if !state.sessions.exists(&id) {
        return Err(switchboard_runtime::sessions::SessionError::NotFound(id).into());
    }
    if let Some(send_at) = scheduled::future_send_at(&body)? {
        let request = SendRequest::from_json(kind, body.clone())?;
        return scheduled::schedule(&state, &id, &request, body, send_at);
    }
    let request = SendRequest::from_json(kind, body)?;
    let record = state.send.send(&id, request).await?;
    Ok((
        StatusCode::OK,
        Json(json!({
            "message_id": record.message_id,
            "to": record.chat,
            "timestamp": record.timestamp,
        })),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/messages",
    operation_id = "messages_list",
    tag = "messages",
    summary = "A session's stored messages, newest first",
    params(crate::openapi::common::SessionPath, crate::extract::Paging),
    responses(
        (status = 200, body = crate::openapi::answers::MessageList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(paging): ApiQuery<Paging>,
) -> ApiResult<Json<Value>> {
    if !state.sessions.exists(&id) {
        return Err(switchboard_runtime::sessions::SessionError::NotFound(id).into());
    }
    let (limit, offset) = paging.resolve();
    let messages = state.store.list_messages(&id, offset, limit)?;
    Ok(Json(
        json!({ "messages": messages, "count": messages.len(), "limit": limit, "offset": offset }),
    ))
}
