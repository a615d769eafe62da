//! Webhook registration, listing, deletion, re-enabling, the dead-letter queue
//! and its replay.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{delete, get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use switchboard_runtime::sessions::SessionError;
use switchboard_runtime::webhooks::NewWebhook;
use switchboard_runtime::webhooks::model::{DlqEntry, Webhook};

/// The webhook routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/webhooks", post(register).get(list))
        .route("/api/v1/sessions/{id}/webhooks/dlq", get(list_dlq))
        .route(
            "/api/v1/sessions/{id}/webhooks/dlq/{entry_id}/replay",
            post(replay),
        )
        .route(
            "/api/v1/sessions/{id}/webhooks/{webhook_id}",
            delete(remove),
        )
        .route(
            "/api/v1/sessions/{id}/webhooks/{webhook_id}/enable",
            post(enable),
        )
}

fn known_session(state: &AppState, id: &str) -> ApiResult<()> {
    if state.sessions.exists(id) {
        Ok(())
    } else {
        Err(SessionError::NotFound(id.to_owned()).into())
    }
}

/// Body of webhook registration.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WebhookIn)]
struct RegisterIn {
    url: String,
    events: Option<Vec<String>>,
    secret: Option<String>,
}

/// A webhook as listed (the secret is shown, as the spec lists it).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct WebhookOut {
    id: String,
    url: String,
    events: Vec<String>,
    secret: Option<String>,
    enabled: bool,
    created_at: i64,
}

impl From<Webhook> for WebhookOut {
    fn from(h: Webhook) -> Self {
        Self {
            id: h.id,
            url: h.url,
            events: h.events,
            secret: h.secret,
            enabled: h.enabled,
            created_at: h.created_at,
        }
    }
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/webhooks",
    operation_id = "webhooks_register",
    tag = "webhooks",
    summary = "Register a webhook",
    params(crate::openapi::common::SessionPath),
    request_body = RegisterIn,
    responses(
        (status = 201, body = crate::openapi::answers::WebhookCreated),
        crate::openapi::common::ApiErrors,
    )
)]
async fn register(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<RegisterIn>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    known_session(&state, &id)?;
    let hook = state
        .webhooks
        .register(
            &id,
            NewWebhook {
                url: body.url,
                events: body.events,
                secret: body.secret,
            },
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(
            json!({ "id": hook.id, "url": hook.url, "events": hook.events, "enabled": hook.enabled }),
        ),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/webhooks",
    operation_id = "webhooks_list",
    tag = "webhooks",
    summary = "A session's webhooks",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::WebhookList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    known_session(&state, &id)?;
    let hooks: Vec<WebhookOut> = state
        .webhooks
        .list(&id)
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(Json(json!({ "webhooks": hooks, "count": hooks.len() })))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/webhooks/{webhook_id}",
    operation_id = "webhooks_remove",
    tag = "webhooks",
    summary = "Delete a webhook",
    params(crate::openapi::common::WebhookPath),
    responses(
        (status = 200, body = crate::openapi::common::SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn remove(
    State(state): State<AppState>,
    ApiPath((id, webhook_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    known_session(&state, &id)?;
    state.webhooks.delete(&id, &webhook_id)?;
    Ok(Json(
        json!({ "success": true, "message": format!("webhook `{webhook_id}` deleted") }),
    ))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/webhooks/{webhook_id}/enable",
    operation_id = "webhooks_enable",
    tag = "webhooks",
    summary = "Re-enable a webhook (ends a suspension of its URL)",
    params(crate::openapi::common::WebhookPath),
    responses(
        (status = 200, body = crate::openapi::common::SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn enable(
    State(state): State<AppState>,
    ApiPath((id, webhook_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    known_session(&state, &id)?;
    let hook = state.webhooks.enable(&id, &webhook_id)?;
    Ok(Json(json!({
        "success": true,
        "message": format!("webhook `{}` is enabled; deliveries to {} resume now", hook.id, hook.url),
    })))
}

/// A dead-letter entry as listed: everything but the captured secret.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct DlqOut {
    id: String,
    session_id: String,
    webhook_id: Option<String>,
    webhook_url: String,
    event: String,
    payload: String,
    last_error: String,
    attempts: u32,
    failed_at: i64,
    delivery_id: String,
}

impl From<DlqEntry> for DlqOut {
    fn from(e: DlqEntry) -> Self {
        Self {
            id: e.id,
            session_id: e.session_id,
            webhook_id: e.webhook_id,
            webhook_url: e.webhook_url,
            event: e.event,
            payload: e.payload,
            last_error: e.last_error,
            attempts: e.attempts,
            failed_at: e.failed_at,
            delivery_id: e.delivery_id,
        }
    }
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/webhooks/dlq",
    operation_id = "webhooks_list_dlq",
    tag = "webhooks",
    summary = "The dead-lettered deliveries of a session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::DlqList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_dlq(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    known_session(&state, &id)?;
    let entries: Vec<DlqOut> = state
        .webhooks
        .dlq(&id)?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(Json(json!({ "entries": entries, "count": entries.len() })))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/webhooks/dlq/{entry_id}/replay",
    operation_id = "webhooks_replay",
    tag = "webhooks",
    summary = "Replay a dead-lettered delivery",
    params(crate::openapi::common::DlqPath),
    responses(
        (status = 200, body = crate::openapi::common::SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn replay(
    State(state): State<AppState>,
    ApiPath((id, entry_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    known_session(&state, &id)?;
    state.webhooks.replay(&id, &entry_id)?;
    Ok(Json(
        json!({ "success": true, "message": "replay scheduled" }),
    ))
}

impl From<switchboard_runtime::webhooks::WebhookError> for ApiError {
    fn from(e: switchboard_runtime::webhooks::WebhookError) -> Self {
        use switchboard_runtime::webhooks::WebhookError as W;
        let msg = e.to_string();
        match e {
            W::Invalid { .. } => ApiError::bad_request("invalid_field", msg),
            W::NotFound(_) => ApiError::not_found("webhook_not_found", msg),
            W::DlqNotFound(_) => ApiError::not_found("dlq_entry_not_found", msg),
            W::CircuitOpen(_) => ApiError::bad_request("circuit_open", msg),
            W::Store(s) => s.into(),
        }
    }
}
