//! Presence and typing, at waxum's paths: the account shown available or
//! unavailable (`presence/set`), a subscription to a contact's presence
//! (`presence/subscribe`), and typing, recording or neither in a chat
//! (`chatstate/send`, and `chatstate/typing` for typing alone).

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::post;
use serde::Deserialize;
use utoipa::ToSchema;

use super::AppState;
use super::error::ApiResult;
use super::extract::{ApiJson, ApiPath};
use super::message_actions::chat_jid;
use crate::openapi::common::{ChatAddress, SessionPath, Success, UserAddress};
use switchboard_runtime::network::chats::ChatState;

/// The presence and typing routes.
pub fn routes() -> Router<AppState> {
    let s = "/api/v1/sessions/{id}";
    Router::new()
        .route(&format!("{s}/presence/set"), post(set_presence))
        .route(&format!("{s}/presence/subscribe"), post(subscribe))
        .route(&format!("{s}/chatstate/send"), post(send_chat_state))
        .route(&format!("{s}/chatstate/typing"), post(typing))
}

fn success() -> Json<Success> {
    Json(Success { success: true })
}

/// Whether the account shows as online.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum PresenceStatus {
    /// Online.
    Available,
    /// Offline.
    Unavailable,
}

/// Body of `POST …/presence/set`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SetPresenceIn)]
struct SetPresenceIn {
    /// `available` or `unavailable`.
    status: PresenceStatus,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/presence/set",
    operation_id = "presence_set",
    tag = "presence",
    summary = "Show the account available or unavailable",
    description = "Contacts subscribed to this account's presence get a `presence` event.",
    params(SessionPath),
    request_body = SetPresenceIn,
    responses((status = 200, body = Success), crate::openapi::common::ApiErrors)
)]
async fn set_presence(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<SetPresenceIn>,
) -> ApiResult<Json<Success>> {
    let available = matches!(body.status, PresenceStatus::Available);
    state.chats.set_presence(&id, available).await?;
    Ok(success())
}

/// Body of `POST …/presence/subscribe`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SubscribePresenceIn)]
struct SubscribeIn {
    /// The contact: a phone number, user JID or `@lid`.
    #[schema(value_type = UserAddress)]
    jid: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/presence/subscribe",
    operation_id = "presence_subscribe",
    tag = "presence",
    summary = "Be told when a contact comes online or goes offline",
    description = "The contact's presence changes arrive as `presence` events (its current one at once, when the network tells it).",
    params(SessionPath),
    request_body = SubscribeIn,
    responses((status = 200, body = Success), crate::openapi::common::ApiErrors)
)]
async fn subscribe(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<SubscribeIn>,
) -> ApiResult<Json<Success>> {
    let jid = super::contacts::account_jid("jid", &body.jid)?;
    state.chats.subscribe_presence(&id, &jid).await?;
    Ok(success())
}

/// Body of `POST …/chatstate/send`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChatStateIn)]
struct ChatStateIn {
    /// The chat. Also taken as `chat`.
    #[serde(alias = "chat")]
    #[schema(value_type = ChatAddress)]
    to: String,
    /// `composing` (typing), `recording` (a voice note) or `paused`.
    #[schema(value_type = ChatState)]
    state: ChatState,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chatstate/send",
    operation_id = "chatstate_send",
    tag = "presence",
    summary = "Show typing, recording or neither in a chat",
    description = "The chat's other members get a `chat_presence` event (`state` `composing` or `paused`, `media` `text` or `audio`).",
    params(SessionPath),
    request_body = ChatStateIn,
    responses((status = 200, body = Success), crate::openapi::common::ApiErrors)
)]
async fn send_chat_state(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<ChatStateIn>,
) -> ApiResult<Json<Success>> {
    let chat = chat_jid("to", &body.to)?;
    state.chats.send_chat_state(&id, &chat, body.state).await?;
    Ok(success())
}

/// Body of `POST …/chatstate/typing`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TypingIn)]
struct TypingIn {
    /// The chat.
    #[schema(value_type = ChatAddress)]
    to: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/chatstate/typing",
    operation_id = "chatstate_typing",
    tag = "presence",
    summary = "Show typing in a chat",
    description = "`chatstate/send` with `state: composing`.",
    params(SessionPath),
    request_body = TypingIn,
    responses((status = 200, body = Success), crate::openapi::common::ApiErrors)
)]
async fn typing(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<TypingIn>,
) -> ApiResult<Json<Success>> {
    let chat = chat_jid("to", &body.to)?;
    state
        .chats
        .send_chat_state(&id, &chat, ChatState::Composing)
        .await?;
    Ok(success())
}
