//! Webhook registration, listing, deletion, re-enabling, the dead-letter queue
//! and its replay.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{delete, get, post};
use axum::{Extension, Router};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AllOfBuilder, AnyOfBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Ref, schema::SchemaType};
use utoipa::{PartialSchema, ToSchema};

use super::AppState;
use super::auth::Principal;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::event::EventName;
use crate::openapi::common::{DlqPath, SessionPath, SuccessMessage, WebhookPath};
use switchboard_runtime::sessions::SessionError;
use switchboard_runtime::webhooks::NewWebhook;
use switchboard_runtime::webhooks::model::{DlqEntry, DlqReason, SignatureScheme, Webhook};

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

/// A dead-letter entry's `reason` in the document: `failed` or `backlog_full`.
pub struct DlqReasonName;

impl PartialSchema for DlqReasonName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["failed", "backlog_full"]))
            .description(Some(
                "`failed`: its attempts failed; `backlog_full`: its URL had more deliveries \
                 pending than `WEBHOOK_BACKLOG_LIMIT`, and the oldest were moved here.",
            ))
            .into()
    }
}

impl ToSchema for DlqReasonName {
    fn name() -> std::borrow::Cow<'static, str> {
        "DlqReason".into()
    }
}

/// A webhook's `signature_scheme` in the document: `switchboard` or `standard`.
pub struct SignatureSchemeName;

impl PartialSchema for SignatureSchemeName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some([
                SignatureScheme::Switchboard.as_str(),
                SignatureScheme::Standard.as_str(),
            ]))
            .default(Some(SignatureScheme::default().as_str().into()))
            .description(Some(
                "How deliveries are signed. `switchboard` (the default): `X-Webhook-Signature: \
                 sha256=<hex>`, an HMAC-SHA256 of `<X-Webhook-Timestamp>.<raw body>` keyed by \
                 the secret's bytes, with `X-Webhook-Signature-Version: v2`. `standard`: the \
                 Standard Webhooks specification (https://www.standardwebhooks.com): \
                 `webhook-id` (the delivery id), `webhook-timestamp` and `webhook-signature: \
                 v1,<base64>`, an HMAC-SHA256 of `<id>.<timestamp>.<raw body>` keyed by the \
                 base64 key of a `whsec_` secret, so the `standardwebhooks` libraries verify it.",
            ))
            .into()
    }
}

impl ToSchema for SignatureSchemeName {
    fn name() -> std::borrow::Cow<'static, str> {
        "SignatureScheme".into()
    }
}

/// A Standard Webhooks secret as registration accepts it: an optional
/// `whsec_`, then the canonical padded base64 of a 24 to 64 byte key (8 to 21
/// groups of four characters, and a final group of one or two bytes whose
/// unused bits are zero), what `signing::standard_secret` takes.
pub const STANDARD_SECRET_PATTERN: &str = concat!(
    r"^(?:whsec_)?(?:",
    r"(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?",
    r"|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/][AQgw]==)?",
    r")$",
);

/// The documented body of `POST …/webhooks`: a [`RegisterIn`] whose
/// `secret`, with the `standard` scheme, is a Standard Webhooks secret.
pub struct RegisterBody;

impl PartialSchema for RegisterBody {
    fn schema() -> RefOr<Schema> {
        let not_standard = ObjectBuilder::new().property(
            "signature_scheme",
            ObjectBuilder::new()
                .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                .enum_values(Some([Some(SignatureScheme::Switchboard.as_str()), None])),
        );
        let standard_secret = ObjectBuilder::new().property(
            "secret",
            ObjectBuilder::new()
                .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
                .pattern(Some(STANDARD_SECRET_PATTERN)),
        );
        AllOfBuilder::new()
            .item(Ref::from_schema_name(RegisterIn::name()))
            .item(AnyOfBuilder::new().item(not_standard).item(standard_secret))
            .description(Some(
                "A webhook to register. With `signature_scheme: standard`, a `secret` is a \
                 Standard Webhooks secret (`whsec_` and the base64 of a 24 to 64 byte key), \
                 or left out to have one generated.",
            ))
            .into()
    }
}

impl ToSchema for RegisterBody {
    fn name() -> std::borrow::Cow<'static, str> {
        "WebhookBody".into()
    }

    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        out.push((RegisterIn::name().into_owned(), RegisterIn::schema()));
        RegisterIn::schemas(out);
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
    /// HMAC-SHA256 secret; deliveries are signed when set. With the
    /// `standard` scheme it is a Standard Webhooks secret: `whsec_` and the
    /// base64 of a 24 to 64 byte key; left out, one is generated and
    /// returned in the answer (a `standard` webhook is always signed).
    #[schema(min_length = 1)]
    secret: Option<String>,
    /// How deliveries are signed: `switchboard` (the default) or `standard`.
    #[schema(value_type = Option<SignatureSchemeName>)]
    signature_scheme: Option<SignatureScheme>,
}

/// A webhook as listed (the secret is shown, as the spec lists it, to the
/// admin token only: a minted token sees `null`, so a token that may read
/// a session cannot sign deliveries in its name).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookOut {
    /// The webhook id (a UUID).
    id: String,
    /// Where deliveries are POSTed.
    url: String,
    /// The subscribed event names (or `all`).
    events: Vec<String>,
    /// HMAC-SHA256 secret; deliveries are signed when set. `null` for a
    /// minted token (see `signed`).
    secret: Option<String>,
    /// Whether deliveries are signed (whether it has a secret).
    signed: bool,
    /// Whether deliveries are attempted.
    enabled: bool,
    /// Unix seconds of registration.
    created_at: i64,
    /// How deliveries are signed.
    #[schema(value_type = SignatureSchemeName)]
    signature_scheme: SignatureScheme,
}

impl From<Webhook> for WebhookOut {
    fn from(h: Webhook) -> Self {
        Self {
            id: h.id,
            url: h.url,
            events: h.events,
            signed: h.secret.is_some(),
            secret: h.secret,
            enabled: h.enabled,
            created_at: h.created_at,
            signature_scheme: h.signature_scheme,
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
    request_body = RegisterBody,
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
    let incarnation = state.sessions.get(&id)?.record.incarnation;
    let hook = state
        .webhooks
        .register(
            &id,
            incarnation,
            NewWebhook {
                url: body.url,
                events: body.events,
                secret: body.secret,
                signature_scheme: body.signature_scheme.unwrap_or_default(),
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
            secret: hook.secret,
            signature_scheme: hook.signature_scheme,
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
    /// The signing secret (null when deliveries are unsigned); for a
    /// `standard` webhook registered without one, the secret generated for
    /// it, shown here so the receiver can be given it.
    pub secret: Option<String>,
    /// How deliveries are signed.
    #[schema(value_type = SignatureSchemeName)]
    pub signature_scheme: SignatureScheme,
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
    Extension(principal): Extension<Principal>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<WebhookList>> {
    known_session(&state, &id)?;
    let admin = matches!(principal, Principal::Admin);
    let hooks: Vec<WebhookOut> = state
        .webhooks
        .list(&id)
        .into_iter()
        .map(WebhookOut::from)
        .map(|mut h| {
            if !admin {
                h.secret = None;
            }
            h
        })
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
    /// The delivery id, kept across retries, restarts and replays of one event.
    delivery_id: String,
    /// Why it was dead-lettered: `failed` (its attempts failed) or
    /// `backlog_full` (its URL had more deliveries pending than
    /// `WEBHOOK_BACKLOG_LIMIT`; the oldest were moved here).
    #[schema(value_type = DlqReasonName)]
    reason: DlqReason,
    /// How a replay signs it (captured at failure time).
    #[schema(value_type = SignatureSchemeName)]
    signature_scheme: SignatureScheme,
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
            reason: e.reason,
            signature_scheme: e.signature_scheme,
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
            W::SessionGone(_) => ApiError::not_found("session_not_found", msg),
            W::TooMany { .. } => ApiError::conflict("webhook_limit_reached", msg),
            W::Store(s) => s.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::STANDARD_SECRET_PATTERN;

    #[test]
    fn the_registration_body_asks_for_a_standard_secret_only_with_the_standard_scheme() {
        let doc = crate::openapi::document(false);
        let op = &doc["paths"]["/api/v1/sessions/{id}/webhooks"]["post"];
        assert_eq!(
            op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/WebhookBody",
            "{op}"
        );
        let schemas = &doc["components"]["schemas"];
        let body = &schemas["WebhookBody"]["allOf"];
        assert_eq!(body[0]["$ref"], "#/components/schemas/WebhookIn", "{body}");
        let either = &body[1]["anyOf"];
        assert_eq!(
            either[0]["properties"]["signature_scheme"]["enum"],
            json!(["switchboard", null]),
            "{either}"
        );
        assert_eq!(
            either[1]["properties"]["secret"]["pattern"], STANDARD_SECRET_PATTERN,
            "{either}"
        );
        let scheme = &schemas["WebhookIn"]["properties"]["signature_scheme"]["oneOf"];
        assert!(
            scheme
                .as_array()
                .is_some_and(|all| all.contains(&json!({"type": "null"}))),
            "{scheme}"
        );
        assert_eq!(
            schemas["SignatureScheme"]["enum"],
            json!(["switchboard", "standard"])
        );
        assert_eq!(schemas["SignatureScheme"]["default"], "switchboard");
        for shown in ["WebhookCreated", "WebhookOut"] {
            let properties = &schemas[shown]["properties"];
            assert_eq!(
                properties["signature_scheme"]["$ref"], "#/components/schemas/SignatureScheme",
                "{shown}: {properties}"
            );
            assert!(properties["secret"].is_object(), "{shown}: {properties}");
        }
    }

    #[test]
    fn a_generated_standard_secret_has_the_documented_shape() {
        // The pattern's shortest form: `whsec_` and 8 groups of 4 characters
        // (24 bytes, no padding), which is what is generated.
        let secret = switchboard_runtime::webhooks::signing::new_standard_secret();
        let b64 = secret.strip_prefix("whsec_").expect("the prefix");
        assert_eq!(b64.len(), 32, "{secret}");
        assert!(
            b64.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/'),
            "{secret}"
        );
    }
}
