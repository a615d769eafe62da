//! Chats: the list (`GET …/chats`), one chat, its history (newest first,
//! cursor-paginated), and the chat-level actions that go to the network as
//! app-state changes (archive, pin, mute and unmute, mark unread, delete).

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiPath, ApiQuery, MaybeJson, Paging};
use super::message_actions::chat_jid;
use crate::domain::chat::ChatRecord;
use crate::domain::message::MessageRecord;
use crate::domain::time::unix_now;
use crate::openapi::common::{ChatAddress, SessionPath, SuccessMessage};
use switchboard_runtime::chats::ChatFilter;
use switchboard_runtime::network::chats::ChatAction;

/// The chat routes.
pub fn routes() -> Router<AppState> {
    let c = "/api/v1/sessions/{id}/chats/{jid}";
    Router::new()
        .route("/api/v1/sessions/{id}/chats", get(list))
        .route(c, get(get_one).delete(delete))
        .route(&format!("{c}/messages"), get(history))
        .route(&format!("{c}/archive"), post(archive))
        .route(&format!("{c}/pin"), post(pin))
        .route(&format!("{c}/mute"), post(mute))
        .route(&format!("{c}/unmute"), post(unmute))
        .route(&format!("{c}/unread"), post(unread))
}

/// A chat of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ChatPath {
    /// The session id.
    pub id: String,
    /// The chat: a JID of any kind, or a phone number.
    #[param(value_type = ChatAddress)]
    pub jid: String,
}

/// Query of `GET …/chats`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only archived chats (`true`), only the others (`false`); all when absent.
    archived: Option<bool>,
    /// Only chats with unread messages or marked unread.
    unread: Option<bool>,
    /// Page size: 100 when absent, clamped to 1..=1000.
    limit: Option<i64>,
    /// Chats to skip: 0 when absent; a negative value counts as 0.
    offset: Option<i64>,
}

/// `GET /api/v1/sessions/{id}/chats`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatListOut {
    /// The page: pinned chats first, then by most recent activity.
    pub chats: Vec<ChatRecord>,
    /// The page size used.
    pub limit: usize,
    /// Chats skipped.
    pub offset: usize,
    /// Matching chats in all.
    pub total: usize,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/chats",
    operation_id = "chats_list",
    tag = "chats",
    summary = "List the session's chats",
    description = "From the messages the gateway stored (last message, unread count) and what the account's devices said of each chat (archived, pinned, muted, marked unread). Local data: works in any connection state.",
    params(SessionPath, ListQuery),
    responses((status = 200, body = ChatListOut), crate::openapi::common::ApiErrors)
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<ChatListOut>> {
    let (limit, offset) = Paging {
        limit: q.limit,
        offset: q.offset,
    }
    .resolve();
    let filter = ChatFilter {
        archived: q.archived,
        unread_only: q.unread.unwrap_or(false),
    };
    let page = state.chats.list(&id, filter, limit, offset)?;
    Ok(Json(ChatListOut {
        chats: page.chats,
        limit,
        offset,
        total: page.total,
    }))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/chats/{jid}",
    operation_id = "chats_get",
    tag = "chats",
    summary = "One chat",
    params(ChatPath),
    responses((status = 200, body = ChatRecord), crate::openapi::common::ApiErrors)
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
) -> ApiResult<Json<ChatRecord>> {
    let chat = chat_jid("jid", &jid)?;
    Ok(Json(state.chats.get(&id, &chat)?))
}

/// Query of `GET …/chats/{jid}/messages`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct HistoryQuery {
    /// Page size: 50 when absent, clamped to 1..=500.
    limit: Option<i64>,
    /// The `next_cursor` of the previous page; the newest page when absent.
    #[param(pattern = "^[0-9]{1,19}$")]
    cursor: Option<String>,
}

/// `GET /api/v1/sessions/{id}/chats/{jid}/messages`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatHistoryOut {
    /// The page, newest first.
    pub messages: Vec<MessageRecord>,
    /// Pass as `cursor` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/chats/{jid}/messages",
    operation_id = "chats_history",
    tag = "chats",
    summary = "A chat's messages, newest first",
    description = "The message records the gateway stored for the chat (sent and received), one page at a time: follow `next_cursor` until it is `null`. Messages arriving meanwhile do not shift the pages.",
    params(ChatPath, HistoryQuery),
    responses((status = 200, body = ChatHistoryOut), crate::openapi::common::ApiErrors)
)]
async fn history(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> ApiResult<Json<ChatHistoryOut>> {
    let chat = chat_jid("jid", &jid)?;
    let limit = q.limit.unwrap_or(50).clamp(1, 500) as usize;
    let before = match q.cursor.as_deref() {
        None | Some("") => None,
        Some(c) => Some(c.parse::<u64>().map_err(|_| {
            ApiError::invalid_field(
                "cursor",
                "is not a cursor this route gave (pass `next_cursor` as it is)",
            )
        })?),
    };
    let page = state.chats.history(&id, &chat, before, limit)?;
    Ok(Json(ChatHistoryOut {
        messages: page.messages,
        next_cursor: page.next_cursor.map(|c| c.to_string()),
    }))
}

/// Body of `POST …/chats/{jid}/archive`; empty means archive.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChatArchiveIn)]
struct ArchiveIn {
    /// `true` (the default) archives, `false` unarchives.
    archived: Option<bool>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chats/{jid}/archive",
    operation_id = "chats_archive",
    tag = "chats",
    summary = "Archive or unarchive a chat",
    params(ChatPath),
    request_body(content = Option<ArchiveIn>),
    responses((status = 200, body = ChatRecord), crate::openapi::common::ApiErrors)
)]
async fn archive(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
    MaybeJson(body): MaybeJson<ArchiveIn>,
) -> ApiResult<Json<ChatRecord>> {
    let action = ChatAction::Archive(body.archived.unwrap_or(true));
    act(&state, &id, &jid, action).await
}

/// Body of `POST …/chats/{jid}/pin`; empty means pin.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChatPinIn)]
struct PinIn {
    /// `true` (the default) pins, `false` unpins.
    pinned: Option<bool>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chats/{jid}/pin",
    operation_id = "chats_pin",
    tag = "chats",
    summary = "Pin a chat to the top of the list, or unpin it",
    params(ChatPath),
    request_body(content = Option<PinIn>),
    responses((status = 200, body = ChatRecord), crate::openapi::common::ApiErrors)
)]
async fn pin(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
    MaybeJson(body): MaybeJson<PinIn>,
) -> ApiResult<Json<ChatRecord>> {
    let action = ChatAction::Pin(body.pinned.unwrap_or(true));
    act(&state, &id, &jid, action).await
}

/// Body of `POST …/chats/{jid}/mute`; empty means for ever.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChatMuteIn)]
struct MuteIn {
    /// Mute for this many seconds; for ever when absent.
    #[schema(minimum = 1)]
    duration_seconds: Option<i64>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chats/{jid}/mute",
    operation_id = "chats_mute",
    tag = "chats",
    summary = "Mute a chat, for a while or for ever",
    params(ChatPath),
    request_body(content = Option<MuteIn>),
    responses((status = 200, body = ChatRecord), crate::openapi::common::ApiErrors)
)]
async fn mute(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
    MaybeJson(body): MaybeJson<MuteIn>,
) -> ApiResult<Json<ChatRecord>> {
    let action = match body.duration_seconds {
        None => ChatAction::Mute(None),
        Some(d) if d < 1 => {
            return Err(ApiError::invalid_field(
                "duration_seconds",
                "must be at least 1",
            ));
        }
        Some(d) => ChatAction::Mute(Some(unix_now().saturating_add(d))),
    };
    act(&state, &id, &jid, action).await
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chats/{jid}/unmute",
    operation_id = "chats_unmute",
    tag = "chats",
    summary = "Unmute a chat",
    params(ChatPath),
    responses((status = 200, body = ChatRecord), crate::openapi::common::ApiErrors)
)]
async fn unmute(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
) -> ApiResult<Json<ChatRecord>> {
    act(&state, &id, &jid, ChatAction::Unmute).await
}

/// Body of `POST …/chats/{jid}/unread`; empty means mark unread.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChatUnreadIn)]
struct UnreadIn {
    /// `true` (the default) marks the chat unread, `false` marks it read
    /// (on the account's devices; read receipts are `…/messages/read`).
    unread: Option<bool>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chats/{jid}/unread",
    operation_id = "chats_unread",
    tag = "chats",
    summary = "Mark a chat unread, or read",
    params(ChatPath),
    request_body(content = Option<UnreadIn>),
    responses((status = 200, body = ChatRecord), crate::openapi::common::ApiErrors)
)]
async fn unread(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
    MaybeJson(body): MaybeJson<UnreadIn>,
) -> ApiResult<Json<ChatRecord>> {
    let action = ChatAction::MarkUnread(body.unread.unwrap_or(true));
    act(&state, &id, &jid, action).await
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/chats/{jid}",
    operation_id = "chats_delete",
    tag = "chats",
    summary = "Delete a chat",
    description = "From the account's chat list (its devices) and, with its messages, from the gateway.",
    params(ChatPath),
    responses((status = 200, body = SuccessMessage), crate::openapi::common::ApiErrors)
)]
async fn delete(
    State(state): State<AppState>,
    ApiPath(ChatPath { id, jid }): ApiPath<ChatPath>,
) -> ApiResult<Json<SuccessMessage>> {
    let chat = chat_jid("jid", &jid)?;
    state
        .chats
        .chat_action(&id, &chat, ChatAction::Delete)
        .await?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("chat {chat} deleted"),
    }))
}

async fn act(
    state: &AppState,
    id: &str,
    jid: &str,
    action: ChatAction,
) -> ApiResult<Json<ChatRecord>> {
    let chat = chat_jid("jid", jid)?;
    match state.chats.chat_action(id, &chat, action).await? {
        Some(record) => Ok(Json(record)),
        None => Err(ApiError::internal("the chat was deleted by its own action")),
    }
}
