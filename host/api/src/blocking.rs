//! The account's blocklist (waxum's routes): list it, block and unblock an
//! account, check one. The network keeps the list (WhatsApp's server, the
//! sim's store), so every answer is the network's, never a copy the
//! gateway keeps.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::contacts::account_jid;
use super::error::ApiResult;
use super::extract::{ApiJson, ApiPath};
use crate::openapi::common::{SessionJidPath, SessionPath};
use switchboard_runtime::network::contacts::Blocked;

/// The blocking routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/blocking/list", get(list))
        .route("/api/v1/sessions/{id}/blocking/block", post(block))
        .route("/api/v1/sessions/{id}/blocking/unblock", post(unblock))
        .route("/api/v1/sessions/{id}/blocking/check/{jid}", get(check))
}

/// `GET …/blocking/list`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Blocklist {
    /// The blocked accounts' JIDs (waxum's field).
    pub blocked: Vec<String>,
    /// How many there are.
    pub count: usize,
    /// Each blocked account with when it was blocked, when the network says.
    pub entries: Vec<Blocked>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blocking/list",
    operation_id = "blocking_list",
    tag = "contacts",
    summary = "The accounts this account blocked",
    params(SessionPath),
    responses(
        (status = 200, body = Blocklist),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<Blocklist>> {
    state.sessions.get(&id)?;
    let (client, _) = state.sessions.sender(&id)?;
    let entries = client.blocklist().await?;
    Ok(Json(Blocklist {
        blocked: entries.iter().map(|e| e.jid.clone()).collect(),
        count: entries.len(),
        entries,
    }))
}

/// Body of `POST …/blocking/block` and `…/unblock`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = BlockIn)]
struct BlockIn {
    /// The account: a phone number, a user JID or a LID.
    #[schema(value_type = crate::openapi::common::UserAddress)]
    jid: String,
}

/// What a block or an unblock did.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockOut {
    /// The account, as the gateway read it.
    pub jid: String,
    /// Whether it is blocked now.
    pub blocked: bool,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blocking/block",
    operation_id = "blocking_block",
    tag = "contacts",
    summary = "Block an account: its messages and calls no longer reach this one",
    params(SessionPath),
    request_body = BlockIn,
    responses(
        (status = 200, body = BlockOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn block(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<BlockIn>,
) -> ApiResult<Json<BlockOut>> {
    set(state, id, body, true).await
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blocking/unblock",
    operation_id = "blocking_unblock",
    tag = "contacts",
    summary = "Unblock an account",
    params(SessionPath),
    request_body = BlockIn,
    responses(
        (status = 200, body = BlockOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn unblock(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<BlockIn>,
) -> ApiResult<Json<BlockOut>> {
    set(state, id, body, false).await
}

async fn set(
    state: AppState,
    id: String,
    body: BlockIn,
    blocked: bool,
) -> ApiResult<Json<BlockOut>> {
    state.sessions.get(&id)?;
    let jid = account_jid("jid", &body.jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    client.set_blocked(&jid, blocked).await?;
    Ok(Json(BlockOut {
        jid: jid.to_string(),
        blocked,
    }))
}

/// `GET …/blocking/check/{jid}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlockCheck {
    /// The account, as the gateway read it.
    pub jid: String,
    /// Whether this account blocked it.
    pub is_blocked: bool,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blocking/check/{jid}",
    operation_id = "blocking_check",
    tag = "contacts",
    summary = "Whether this account blocked an account",
    params(SessionJidPath),
    responses(
        (status = 200, body = BlockCheck),
        crate::openapi::common::ApiErrors,
    )
)]
async fn check(
    State(state): State<AppState>,
    ApiPath(SessionJidPath { id, jid }): ApiPath<SessionJidPath>,
) -> ApiResult<Json<BlockCheck>> {
    state.sessions.get(&id)?;
    let jid = account_jid("jid", &jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let is_blocked = client.is_blocked(&jid).await?;
    Ok(Json(BlockCheck {
        jid: jid.to_string(),
        is_blocked,
    }))
}
