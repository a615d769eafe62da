//! `GET /sessions/{id}/lid/{jid}`: an account's other address. Given an
//! `@lid`, its phone; given a phone number or user JID, its `@lid`. The
//! session's learned mapping answers first, then the network.

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::get;
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use super::error::ApiResult;
use super::extract::ApiPath;
use crate::openapi::common::UserAddress;
use switchboard_runtime::chats::LidAnswer;

/// The identity route.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/sessions/{id}/lid/{jid}", get(look_up))
}

/// An address of an account of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct LidPath {
    /// The session id.
    id: String,
    /// An `@lid`, a user JID or a phone number.
    #[param(value_type = UserAddress)]
    jid: String,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/lid/{jid}",
    operation_id = "lid_lookup",
    tag = "contacts",
    summary = "Turn an `@lid` into a phone number, or a phone number into its `@lid`",
    description = "`source` says where the answer came from: `learned` (the mapping this session learned from messages, contacts and earlier lookups; works in any connection state) or `network` (asked now, which needs the session logged in, and learned from then on). `404` when neither knows it.",
    params(LidPath),
    responses((status = 200, body = LidAnswer), crate::openapi::common::ApiErrors)
)]
async fn look_up(
    State(state): State<AppState>,
    ApiPath(LidPath { id, jid }): ApiPath<LidPath>,
) -> ApiResult<Json<LidAnswer>> {
    let address = super::contacts::account_jid("jid", &jid)?;
    Ok(Json(state.chats.look_up_lid(&id, &address).await?))
}
