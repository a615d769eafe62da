//! Actions on messages already sent or received: read receipts, revoke,
//! edit, pin, forward and star (`POST /sessions/{id}/messages/{action}`;
//! these literal segments win over the send route's `{kind}`). Bodies take
//! the spec's spellings and waxum's (`chat_jid`, `original_sender`, a pin's
//! `chat`, a forward's `text`) alike.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::post;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::domain::jid::Jid;
use crate::domain::message::MessageRecord;
use crate::openapi::common::{ChatAddress, SessionPath, UserAddress};
use switchboard_runtime::chats::{ActionRequest, ActionTarget};

/// Longest message id accepted.
const MAX_ID_CHARS: usize = 256;
/// Most message ids in one read.
pub const MAX_READ_IDS: usize = 1000;
/// Longest edited text, in characters.
const MAX_TEXT_CHARS: usize = 65_536;
/// The pin durations the network offers (24 hours, 7 days, 30 days), and
/// `0` to unpin.
pub const PIN_DURATIONS: [i64; 4] = [0, 86_400, 604_800, 2_592_000];

/// The message-action routes.
pub fn routes() -> Router<AppState> {
    let m = "/api/v1/sessions/{id}/messages";
    Router::new()
        .route(&format!("{m}/read"), post(read))
        .route(&format!("{m}/revoke"), post(revoke))
        .route(&format!("{m}/edit"), post(edit))
        .route(&format!("{m}/pin"), post(pin))
        .route(&format!("{m}/forward"), post(forward))
        .route(&format!("{m}/star"), post(star))
}

/// A chat address of a body: a JID of any kind or a phone number.
pub(super) fn chat_jid(field: &str, value: &str) -> ApiResult<Jid> {
    Jid::parse_recipient(value).map_err(|e| ApiError::invalid_field(field, e))
}

/// A message id of a body: not blank, at most 256 characters; trimmed.
fn message_id(field: &str, value: &str) -> ApiResult<String> {
    let id = value.trim();
    if id.is_empty() {
        return Err(ApiError::invalid_field(field, "must not be blank"));
    }
    if id.chars().count() > MAX_ID_CHARS {
        return Err(ApiError::invalid_field(
            field,
            format!("is longer than {MAX_ID_CHARS} characters"),
        ));
    }
    Ok(id.to_owned())
}

fn text(field: &str, value: &str) -> ApiResult<String> {
    if value.trim().is_empty() {
        return Err(ApiError::invalid_field(field, "must not be blank"));
    }
    if value.chars().count() > MAX_TEXT_CHARS {
        return Err(ApiError::invalid_field(
            field,
            format!("is longer than {MAX_TEXT_CHARS} characters"),
        ));
    }
    Ok(value.to_owned())
}

fn sender(field: &str, value: Option<&str>) -> ApiResult<Option<Jid>> {
    value
        .map(|v| super::contacts::account_jid(field, v))
        .transpose()
}

/// A message id in a body: not blank, at most 256 characters.
struct MessageIdSchema;

impl utoipa::PartialSchema for MessageIdSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_ID_CHARS))
            .pattern(Some(r"[^\s\x85]"))
            .into()
    }
}

impl utoipa::ToSchema for MessageIdSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("MessageId")
    }
}

/// A field that is accepted only as `null` (a field of waxum's bodies that
/// has no meaning here).
struct NullSchema;

impl utoipa::PartialSchema for NullSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Null)
            .into()
    }
}

impl utoipa::ToSchema for NullSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("NullOnly")
    }
}

/// A pin's duration: one of [`PIN_DURATIONS`].
struct PinDurationSchema;

impl utoipa::PartialSchema for PinDurationSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Integer)
            .enum_values(Some(PIN_DURATIONS))
            .default(Some(serde_json::json!(86_400)))
            .into()
    }
}

impl utoipa::ToSchema for PinDurationSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("PinDuration")
    }
}

/// `200` of an action sent as a message.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActionOut {
    /// Always `true`.
    pub success: bool,
    /// The id of the message the action went out as.
    pub message_id: String,
    /// The message acted on (`null` for a forwarded text).
    pub target_message_id: Option<String>,
    /// `revoke`, `edit`, `pin`, `unpin` or `forward`.
    pub kind: String,
    /// The chat it went to.
    pub to: String,
    /// Unix seconds.
    pub timestamp: i64,
}

fn action_out(record: MessageRecord) -> Json<ActionOut> {
    let target = record
        .body
        .get("message_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Json(ActionOut {
        success: true,
        message_id: record.message_id,
        target_message_id: target,
        kind: record.kind,
        to: record.chat,
        timestamp: record.timestamp,
    })
}

/// Body of `POST …/messages/read`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MarkReadIn)]
struct ReadIn {
    /// The chat. Also taken as `chat_jid`, waxum's spelling.
    #[serde(alias = "chat_jid")]
    #[schema(value_type = ChatAddress)]
    chat: String,
    /// The messages' author, in a group (read from the gateway's records
    /// when absent and the whole chat is read).
    #[schema(value_type = Option<UserAddress>)]
    sender: Option<String>,
    /// The messages to mark read (1 to 1000); absent: every unread
    /// received message of the chat.
    #[schema(min_items = 1, max_items = 1000, value_type = Option<Vec<MessageIdSchema>>)]
    message_ids: Option<Vec<String>>,
}

/// `200` of `POST …/messages/read`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadOut {
    /// Always `true`.
    pub success: bool,
    /// The messages read receipts went out for.
    pub message_ids: Vec<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/read",
    operation_id = "messages_read",
    tag = "messages",
    summary = "Mark messages, or a whole chat, read",
    description = "Sends read receipts (the senders see the blue ticks) and sets the chat's unread count to 0. Without `message_ids`, every unread received message of the chat the gateway holds is read.",
    params(SessionPath),
    request_body = ReadIn,
    responses((status = 200, body = ReadOut), crate::openapi::common::ApiErrors)
)]
async fn read(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<ReadIn>,
) -> ApiResult<Json<ReadOut>> {
    let chat = chat_jid("chat", &body.chat)?;
    let sender = sender("sender", body.sender.as_deref())?;
    let ids = match body.message_ids {
        None => None,
        Some(ids) if ids.is_empty() => {
            return Err(ApiError::invalid_field("message_ids", "must not be empty"));
        }
        Some(ids) if ids.len() > MAX_READ_IDS => {
            return Err(ApiError::invalid_field(
                "message_ids",
                format!("has {} entries; at most {MAX_READ_IDS}", ids.len()),
            ));
        }
        Some(ids) => Some(
            ids.iter()
                .enumerate()
                .map(|(i, m)| message_id(&format!("message_ids[{i}]"), m))
                .collect::<ApiResult<Vec<_>>>()?,
        ),
    };
    let read = state
        .chats
        .mark_read(&id, &chat, sender.as_ref(), ids)
        .await?;
    Ok(Json(ReadOut {
        success: true,
        message_ids: read,
    }))
}

/// Body of `POST …/messages/revoke`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RevokeIn)]
struct RevokeIn {
    /// The chat of the message. Also taken as `chat`.
    #[serde(alias = "chat")]
    #[schema(value_type = ChatAddress)]
    to: String,
    /// The message to delete for everyone.
    #[schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")]
    message_id: String,
    /// Its author, when it is someone else's message in a group this
    /// account administers (an admin revoke); also taken as `sender`.
    #[serde(alias = "sender")]
    #[schema(value_type = Option<UserAddress>)]
    original_sender: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/revoke",
    operation_id = "messages_revoke",
    tag = "messages",
    summary = "Delete a message for everyone",
    description = "This account's own message, or, with `original_sender`, someone else's in a group it administers. The other members get a `message` event of type `revoke` whose `quoted_message_id` names it.",
    params(SessionPath),
    request_body = RevokeIn,
    responses((status = 200, body = ActionOut), crate::openapi::common::ApiErrors)
)]
async fn revoke(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<RevokeIn>,
) -> ApiResult<Json<ActionOut>> {
    let original_sender = sender("original_sender", body.original_sender.as_deref())?;
    let target = ActionTarget {
        chat: chat_jid("to", &body.to)?,
        message_id: message_id("message_id", &body.message_id)?,
        from_me: Some(original_sender.is_none()),
        sender: original_sender,
    };
    let record = state.chats.act(&id, ActionRequest::Revoke(target)).await?;
    Ok(action_out(record))
}

/// Body of `POST …/messages/edit`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = EditIn)]
struct EditIn {
    /// The chat of the message. Also taken as `chat`.
    #[serde(alias = "chat")]
    #[schema(value_type = ChatAddress)]
    to: String,
    /// The message to edit (this account's own).
    #[schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")]
    message_id: String,
    /// The new text (for a picture, video or document: the new caption);
    /// not blank, at most 65,536 characters.
    #[schema(min_length = 1, max_length = 65536, pattern = r"[^\s\x85]")]
    text: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/edit",
    operation_id = "messages_edit",
    tag = "messages",
    summary = "Edit a message's text or caption",
    description = "The recipients get a `message` event of type `edit` with the new `text` (or `caption`) and `quoted_message_id` naming the message.",
    params(SessionPath),
    request_body = EditIn,
    responses((status = 200, body = ActionOut), crate::openapi::common::ApiErrors)
)]
async fn edit(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<EditIn>,
) -> ApiResult<Json<ActionOut>> {
    let target = ActionTarget {
        chat: chat_jid("to", &body.to)?,
        message_id: message_id("message_id", &body.message_id)?,
        // The gateway's record says whose it is; the network refuses an
        // edit of a message that is not this account's.
        from_me: None,
        sender: None,
    };
    let text = text("text", &body.text)?;
    let record = state
        .chats
        .act(&id, ActionRequest::Edit(target, text))
        .await?;
    Ok(action_out(record))
}

/// Body of `POST …/messages/pin`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PinIn)]
struct PinIn {
    /// The chat of the message (waxum's spelling). Also taken as `to`.
    #[serde(alias = "to")]
    #[schema(value_type = ChatAddress)]
    chat: String,
    /// The message to pin or unpin.
    #[schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")]
    message_id: String,
    /// How long it stays pinned: 86400 (24 h, the default), 604800 (7 days)
    /// or 2592000 (30 days); 0 unpins it.
    #[schema(value_type = Option<PinDurationSchema>)]
    duration_seconds: Option<i64>,
    /// Whether this account sent it; read from the gateway's records when
    /// absent.
    from_me: Option<bool>,
    /// Its author, for someone else's message in a group; read from the
    /// gateway's records when absent.
    #[schema(value_type = Option<UserAddress>)]
    sender: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/pin",
    operation_id = "messages_pin",
    tag = "messages",
    summary = "Pin a message in its chat for everyone, or unpin it",
    description = "The other members get a `message` event of type `pin` (or `unpin`) whose `quoted_message_id` names it.",
    params(SessionPath),
    request_body = PinIn,
    responses((status = 200, body = ActionOut), crate::openapi::common::ApiErrors)
)]
async fn pin(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<PinIn>,
) -> ApiResult<Json<ActionOut>> {
    let duration = body.duration_seconds.unwrap_or(86_400);
    if !PIN_DURATIONS.contains(&duration) {
        return Err(ApiError::invalid_field(
            "duration_seconds",
            "must be 86400 (24 hours), 604800 (7 days), 2592000 (30 days) or 0 (unpin)",
        ));
    }
    let target = ActionTarget {
        chat: chat_jid("chat", &body.chat)?,
        message_id: message_id("message_id", &body.message_id)?,
        from_me: body.from_me,
        sender: sender("sender", body.sender.as_deref())?,
    };
    let record = state
        .chats
        .act(&id, ActionRequest::Pin(target, duration as u32))
        .await?;
    Ok(action_out(record))
}

/// `POST …/messages/forward` of a message the gateway holds.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ForwardMessageIn)]
struct ForwardMessageIn {
    /// Where it goes.
    #[schema(value_type = ChatAddress)]
    to: String,
    /// The message to forward: one the session sent or received.
    #[schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")]
    message_id: String,
}

/// `POST …/messages/forward` of a text (waxum's form): sent marked forwarded.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ForwardTextIn)]
struct ForwardTextIn {
    /// Where it goes.
    #[schema(value_type = ChatAddress)]
    to: String,
    /// The text; not blank, at most 65,536 characters.
    #[schema(min_length = 1, max_length = 65536, pattern = r"[^\s\x85]")]
    text: String,
    /// Accepted for waxum's clients; must be null: a forward is not a reply.
    #[schema(value_type = Option<NullSchema>)]
    reply_to: Option<Value>,
    /// Accepted for waxum's clients; must be null: a forward is sent now.
    #[schema(value_type = Option<NullSchema>)]
    send_at: Option<Value>,
}

/// Body of `POST …/messages/forward`: a held message (`message_id`) or a
/// text (`text`), not both. (The handler tells them apart itself, for
/// clearer errors than an untagged enum gives; this type is the schema.)
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ForwardIn {
    /// Forward a message the session sent or received.
    Message(ForwardMessageIn),
    /// Send a text marked forwarded.
    Text(ForwardTextIn),
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/forward",
    operation_id = "messages_forward",
    tag = "messages",
    summary = "Forward a message to another chat",
    description = "A copy of a message the session sent or received, marked forwarded (the recipient's `message` event has `forwarded: true`); or, with `text`, a text marked forwarded.",
    params(SessionPath),
    request_body = ForwardIn,
    responses((status = 200, body = ActionOut), crate::openapi::common::ApiErrors)
)]
async fn forward(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<ActionOut>> {
    let has = |k: &str| body.get(k).is_some_and(|v| !v.is_null());
    let request = match (has("message_id"), has("text")) {
        (true, true) => {
            return Err(ApiError::invalid_field(
                "message_id",
                "and `text` exclude each other: forward a held message or a text",
            ));
        }
        (false, false) => {
            return Err(ApiError::invalid_field(
                "message_id",
                "is required (or `text`, to forward a text)",
            ));
        }
        (true, false) => {
            let b: ForwardMessageIn = super::extract::parse_json(body.to_string().as_bytes())?;
            ActionRequest::Forward {
                to: chat_jid("to", &b.to)?,
                message_id: message_id("message_id", &b.message_id)?,
            }
        }
        (false, true) => {
            let b: ForwardTextIn = super::extract::parse_json(body.to_string().as_bytes())?;
            for (field, v) in [("reply_to", &b.reply_to), ("send_at", &b.send_at)] {
                if v.as_ref().is_some_and(|v| !v.is_null()) {
                    return Err(ApiError::invalid_field(
                        field,
                        "must be null: a forward is sent now, as a copy, not a reply",
                    ));
                }
            }
            ActionRequest::ForwardText {
                to: chat_jid("to", &b.to)?,
                text: text("text", &b.text)?,
            }
        }
    };
    let record = state.chats.act(&id, request).await?;
    Ok(action_out(record))
}

/// Body of `POST …/messages/star`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = StarIn)]
struct StarIn {
    /// The chat of the message. Also taken as `to`.
    #[serde(alias = "to")]
    #[schema(value_type = ChatAddress)]
    chat: String,
    /// The message.
    #[schema(min_length = 1, max_length = 256, pattern = r"[^\s\x85]")]
    message_id: String,
    /// `true` (the default) stars it, `false` unstars it.
    #[schema(default = true)]
    starred: Option<bool>,
    /// Whether this account sent it; read from the gateway's records when absent.
    from_me: Option<bool>,
    /// Its author, for someone else's message in a group; read from the
    /// gateway's records when absent.
    #[schema(value_type = Option<UserAddress>)]
    sender: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/messages/star",
    operation_id = "messages_star",
    tag = "messages",
    summary = "Star or unstar a message",
    description = "Kept in the account's app state: its other devices see it; the other party does not.",
    params(SessionPath),
    request_body = StarIn,
    responses((status = 200, body = crate::openapi::common::Success), crate::openapi::common::ApiErrors)
)]
async fn star(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<StarIn>,
) -> ApiResult<Json<crate::openapi::common::Success>> {
    let target = ActionTarget {
        chat: chat_jid("chat", &body.chat)?,
        message_id: message_id("message_id", &body.message_id)?,
        from_me: body.from_me,
        sender: sender("sender", body.sender.as_deref())?,
    };
    state
        .chats
        .star(&id, target, body.starred.unwrap_or(true))
        .await?;
    Ok(Json(crate::openapi::common::Success { success: true }))
}
