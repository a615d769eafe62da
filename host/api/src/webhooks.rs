//! Webhook registration, listing, deletion, re-enabling, the dead-letter queue
//! and its replay.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{delete, get, post};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::event::EventName;
use crate::openapi::common::{DlqPath, SessionPath, SuccessMessage, WebhookPath};
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

/// The URLs a webhook registration accepts, as far as their form goes: an
/// `http` or `https` URL with a host name or an IPv4 address, an optional
/// port, then any path, query and fragment. Whether the host may be reached
/// (internal addresses are refused unless `WEBHOOK_ALLOW_PRIVATE=true`, and
/// a name must resolve) is checked at registration, not described here.
pub const WEBHOOK_URL_PATTERN: &str = concat!(
    r"^https?://",
    r"(?:(?:[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\.)*[A-Za-z]+",
    r"|(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}",
    r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))",
    r"(?::[0-9]{1,4})?",
    r"(?:[/?#][!-~]*)?$",
);

/// Longest webhook URL.
const MAX_URL_CHARS: usize = 2048;

/// A webhook URL in the document: [`WEBHOOK_URL_PATTERN`], at most 2048 characters.
pub struct WebhookUrl;

impl PartialSchema for WebhookUrl {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(WEBHOOK_URL_PATTERN))
            .max_length(Some(MAX_URL_CHARS))
            .description(Some(
                "An `http` or `https` URL. Unless the gateway runs with \
                 `WEBHOOK_ALLOW_PRIVATE=true`, it must lead to a public address: an IP \
                 literal that is not internal, or a host name that resolves to a public address.",
            ))
            .examples(["https://example.com/hooks/switchboard"])
            .into()
    }
}

impl ToSchema for WebhookUrl {
    fn name() -> std::borrow::Cow<'static, str> {
        "WebhookUrl".into()
    }
}

/// An event name a subscriber may name, or `all` for every event (webhook
/// `events`, the stream's `events`).
pub struct SubscribedEvent;

impl PartialSchema for SubscribedEvent {
    fn schema() -> RefOr<Schema> {
        let names = EventName::ALL
            .iter()
            .map(|e| e.as_str())
            .chain(std::iter::once("all"));
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("An event name, or `all` for every event."))
            .enum_values(Some(names))
            .into()
    }
}

impl ToSchema for SubscribedEvent {
    fn name() -> std::borrow::Cow<'static, str> {
        "SubscribedEvent".into()
    }
}

/// Body of webhook registration.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WebhookIn)]
struct RegisterIn {
    /// Where deliveries are POSTed.
    #[schema(value_type = WebhookUrl)]
    url: String,
    /// The events to deliver (all when absent or null).
    #[schema(value_type = Option<Vec<SubscribedEvent>>, min_items = 1)]
    events: Option<Vec<String>>,
    /// HMAC-SHA256 secret; deliveries are signed when set.
    #[schema(min_length = 1)]
    secret: Option<String>,
}

/// A webhook as listed (the secret is shown, as the spec lists it).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookOut {
    /// The webhook id (a UUID).
    id: String,
    /// Where deliveries are POSTed.
    url: String,
    /// The subscribed event names (or `all`).
    events: Vec<String>,
    /// HMAC-SHA256 secret; deliveries are signed when set.
    secret: Option<String>,
    /// Whether deliveries are attempted.
    enabled: bool,
    /// Unix seconds of registration.
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
    params(SessionPath),
    request_body = RegisterIn,
    responses(
        (status = 201, body = WebhookCreated),
        crate::openapi::common::ApiErrors,
    )
)]
async fn register(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<RegisterIn>,
) -> ApiResult<(StatusCode, Json<WebhookCreated>)> {
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
        Json(WebhookCreated {
            id: hook.id,
            url: hook.url,
            events: hook.events,
            enabled: hook.enabled,
        }),
    ))
}

/// `201` of `POST …/webhooks`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookCreated {
    /// The webhook id (a UUID).
    pub id: String,
    /// The URL, normalized.
    pub url: String,
    /// The subscribed event names (or `all`).
    pub events: Vec<String>,
    /// Whether deliveries are attempted.
    pub enabled: bool,
}

/// `GET …/webhooks`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookList {
    /// The session's webhooks.
    pub webhooks: Vec<WebhookOut>,
    /// How many.
    pub count: usize,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/webhooks",
    operation_id = "webhooks_list",
    tag = "webhooks",
    summary = "A session's webhooks",
    params(SessionPath),
    responses(
        (status = 200, body = WebhookList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<WebhookList>> {
    known_session(&state, &id)?;
    let hooks: Vec<WebhookOut> = state
        .webhooks
        .list(&id)
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(Json(WebhookList {
        count: hooks.len(),
        webhooks: hooks,
    }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/webhooks/{webhook_id}",
    operation_id = "webhooks_remove",
    tag = "webhooks",
    summary = "Delete a webhook",
    params(WebhookPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn remove(
    State(state): State<AppState>,
    ApiPath(WebhookPath { id, webhook_id }): ApiPath<WebhookPath>,
) -> ApiResult<Json<SuccessMessage>> {
    known_session(&state, &id)?;
    state.webhooks.delete(&id, &webhook_id)?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("webhook `{webhook_id}` deleted"),
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/webhooks/{webhook_id}/enable",
    operation_id = "webhooks_enable",
    tag = "webhooks",
    summary = "Re-enable a webhook (ends a suspension of its URL)",
    params(WebhookPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn enable(
    State(state): State<AppState>,
    ApiPath(WebhookPath { id, webhook_id }): ApiPath<WebhookPath>,
) -> ApiResult<Json<SuccessMessage>> {
    known_session(&state, &id)?;
    let hook = state.webhooks.enable(&id, &webhook_id)?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!(
            "webhook `{}` is enabled; deliveries to {} resume now",
            hook.id, hook.url
        ),
    }))
}

/// A dead-letter entry as listed: everything but the captured secret.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DlqOut {
    /// The entry id (a UUID).
    id: String,
    /// The session of the event.
    session_id: String,
    /// The webhook it was for, when it still exists.
    webhook_id: Option<String>,
    /// The URL it was for.
    webhook_url: String,
    /// The event name.
    event: String,
    /// The serialized envelope that failed, verbatim.
    payload: String,
    /// Why the last attempt failed.
    last_error: String,
    /// Attempts made.
    attempts: u32,
    /// Unix seconds of dead-lettering.
    failed_at: i64,
    /// The delivery id, kept across retries and replays of one event.
    delivery_id: String,
}

/// `GET …/webhooks/dlq`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DlqList {
    /// Dead-lettered deliveries.
    pub entries: Vec<DlqOut>,
    /// How many.
    pub count: usize,
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
    params(SessionPath),
    responses(
        (status = 200, body = DlqList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_dlq(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<DlqList>> {
    known_session(&state, &id)?;
    let entries: Vec<DlqOut> = state
        .webhooks
        .dlq(&id)?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(Json(DlqList {
        count: entries.len(),
        entries,
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/webhooks/dlq/{entry_id}/replay",
    operation_id = "webhooks_replay",
    tag = "webhooks",
    summary = "Replay a dead-lettered delivery",
    params(DlqPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn replay(
    State(state): State<AppState>,
    ApiPath(DlqPath { id, entry_id }): ApiPath<DlqPath>,
) -> ApiResult<Json<SuccessMessage>> {
    known_session(&state, &id)?;
    state.webhooks.replay(&id, &entry_id)?;
    Ok(Json(SuccessMessage {
        success: true,
        message: "replay scheduled".into(),
    }))
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
