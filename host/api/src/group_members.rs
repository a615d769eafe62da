//! Group membership (`/sessions/{id}/groups/{group}/…`): add and remove
//! participants, promote and demote admins, and the invite link. The checks
//! they share with the other group routes live in `groups.rs`.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::error::ApiResult;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::groups::{group_path, known, operable, success, user_jids};
use crate::domain::group::ParticipantResult;
use crate::domain::jid::Jid;
use crate::openapi::common::{GroupPath, Success};
use switchboard_runtime::network::NetworkSession;

/// The membership routes.
pub fn routes() -> Router<AppState> {
    let g = "/api/v1/sessions/{id}/groups/{group}";
    Router::new()
        .route(
            &format!("{g}/participants"),
            post(add_participants).delete(remove_participants),
        )
        .route(&format!("{g}/admins"), post(promote).delete(demote))
        .route(&format!("{g}/invite-link"), get(invite_link))
}

/// Body of the participant and admin routes.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GroupParticipantsIn)]
pub(super) struct ParticipantsIn {
    /// The people: phone numbers or user JIDs, 1 to 1024 of them.
    #[schema(
        value_type = Vec<crate::openapi::common::PhoneOrUserJid>,
        min_items = 1,
        max_items = 1024
    )]
    participants: Vec<String>,
}

/// `POST`/`DELETE …/groups/{group}/participants`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ParticipantResults {
    /// One result per requested JID.
    pub results: Vec<ParticipantResult>,
}

/// `GET …/groups/{group}/invite-link`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct InviteLink {
    /// `https://chat.whatsapp.com/<code>`.
    pub invite_link: String,
}

/// The session, group and users of a participant or admin request, checked.
fn participants_request(
    state: &AppState,
    id: &str,
    group: &str,
    body: &ParticipantsIn,
) -> ApiResult<(Arc<dyn NetworkSession>, Jid, Vec<Jid>)> {
    known(state, id)?;
    let group = group_path(group)?;
    let users = user_jids(&body.participants, false)?;
    Ok((operable(state, id)?, group, users))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/groups/{group}/participants",
    operation_id = "groups_add_participants",
    tag = "groups",
    summary = "Add participants",
    params(GroupPath),
    request_body = ParticipantsIn,
    responses(
        (status = 200, body = ParticipantResults),
        crate::openapi::common::ApiErrors,
    )
)]
pub(super) async fn add_participants(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<ParticipantsIn>,
) -> ApiResult<Json<ParticipantResults>> {
    let (client, group, users) = participants_request(&state, &id, &group, &body)?;
    let results = client.add_participants(&group, &users).await?;
    Ok(Json(ParticipantResults { results }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/groups/{group}/participants",
    operation_id = "groups_remove_participants",
    tag = "groups",
    summary = "Remove participants",
    params(GroupPath),
    request_body = ParticipantsIn,
    responses(
        (status = 200, body = ParticipantResults),
        crate::openapi::common::ApiErrors,
    )
)]
pub(super) async fn remove_participants(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<ParticipantsIn>,
) -> ApiResult<Json<ParticipantResults>> {
    let (client, group, users) = participants_request(&state, &id, &group, &body)?;
    let results = client.remove_participants(&group, &users).await?;
    Ok(Json(ParticipantResults { results }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/groups/{group}/admins",
    operation_id = "groups_promote",
    tag = "groups",
    summary = "Make participants admins",
    params(GroupPath),
    request_body = ParticipantsIn,
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
pub(super) async fn promote(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<ParticipantsIn>,
) -> ApiResult<Json<Success>> {
    let (client, group, users) = participants_request(&state, &id, &group, &body)?;
    client.promote_participants(&group, &users).await?;
    Ok(success())
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/groups/{group}/admins",
    operation_id = "groups_demote",
    tag = "groups",
    summary = "Take admin rights away",
    params(GroupPath),
    request_body = ParticipantsIn,
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
pub(super) async fn demote(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiJson(body): ApiJson<ParticipantsIn>,
) -> ApiResult<Json<Success>> {
    let (client, group, users) = participants_request(&state, &id, &group, &body)?;
    client.demote_participants(&group, &users).await?;
    Ok(success())
}

/// Query of the invite-link route.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct InviteQuery {
    /// `true` revokes the current link and makes a new one.
    #[serde(default)]
    reset: bool,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/groups/{group}/invite-link",
    operation_id = "groups_invite_link",
    tag = "groups",
    summary = "The group's invite link (`reset=true` makes a new one)",
    params(GroupPath, InviteQuery),
    responses(
        (status = 200, body = InviteLink),
        crate::openapi::common::ApiErrors,
    )
)]
pub(super) async fn invite_link(
    State(state): State<AppState>,
    ApiPath(GroupPath { id, group }): ApiPath<GroupPath>,
    ApiQuery(query): ApiQuery<InviteQuery>,
) -> ApiResult<Json<InviteLink>> {
    known(&state, &id)?;
    let group = group_path(&group)?;
    let link = operable(&state, &id)?
        .invite_link(&group, query.reset)
        .await?;
    Ok(Json(InviteLink { invite_link: link }))
}
