//! The account's own profile: read it, and change the name others see
//! (push name), the about text and the profile picture. Every answer is
//! the network's (WhatsApp's server, the sim).

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, put};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath};
use crate::openapi::common::SessionPath;
use switchboard_runtime::network::profile::OwnProfile;

/// The profile routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/profile", get(get_profile))
        .route("/api/v1/sessions/{id}/profile/name", put(set_name))
        .route("/api/v1/sessions/{id}/profile/about", put(set_about))
        .route(
            "/api/v1/sessions/{id}/profile/picture",
            put(set_picture).delete(remove_picture),
        )
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/profile",
    operation_id = "profile_get",
    tag = "profile",
    summary = "The account's own profile: push name, about text, picture",
    params(SessionPath),
    responses(
        (status = 200, body = OwnProfile),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_profile(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<OwnProfile>> {
    Ok(Json(state.sessions.own_profile(&id).await?))
}

/// Body of `PUT …/profile/name`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct NameIn {
    /// The name others see, 1 to 25 characters, not blank (it is
    /// trimmed).
    #[schema(min_length = 1, max_length = 25, pattern = r"\S")]
    name: String,
}

/// The answer of `PUT …/profile/name`.
#[derive(Debug, Serialize, ToSchema)]
struct NameOut {
    /// The push name now (trimmed).
    push_name: String,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/profile/name",
    operation_id = "profile_set_name",
    tag = "profile",
    summary = "Set the name others see (push name)",
    params(SessionPath),
    request_body = NameIn,
    responses(
        (status = 200, body = NameOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_name(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<NameIn>,
) -> ApiResult<Json<NameOut>> {
    state.sessions.set_push_name(&id, &body.name).await?;
    Ok(Json(NameOut {
        push_name: body.name.trim().to_owned(),
    }))
}

/// Body of `PUT …/profile/about`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct AboutIn {
    /// The about text, at most 139 characters; empty clears it.
    #[schema(max_length = 139)]
    about: String,
}

/// The answer of `PUT …/profile/about`.
#[derive(Debug, Serialize, ToSchema)]
struct AboutOut {
    /// The about text now; `null` once cleared.
    about: Option<String>,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/profile/about",
    operation_id = "profile_set_about",
    tag = "profile",
    summary = "Set the about text",
    params(SessionPath),
    request_body = AboutIn,
    responses(
        (status = 200, body = AboutOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_about(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<AboutIn>,
) -> ApiResult<Json<AboutOut>> {
    state.sessions.set_about(&id, &body.about).await?;
    Ok(Json(AboutOut {
        about: Some(body.about).filter(|a| !a.is_empty()),
    }))
}

/// Body of `PUT …/profile/picture`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct PictureIn {
    /// The picture, base64: a JPEG, PNG or WebP of at most 10 MiB. The
    /// real network gets its centre square as a 640 × 640 JPEG.
    #[schema(format = Byte)]
    data: String,
}

/// The answer of `PUT` and `DELETE …/profile/picture`.
#[derive(Debug, Serialize, ToSchema)]
struct PictureOut {
    /// The new picture's id (`null` once removed, or when the network
    /// gives none).
    picture_id: Option<String>,
    /// Whether the account has a picture now.
    has_picture: bool,
}

#[utoipa::path(
    put,
    path = "/api/v1/sessions/{id}/profile/picture",
    operation_id = "profile_set_picture",
    tag = "profile",
    summary = "Set the profile picture",
    params(SessionPath),
    request_body = PictureIn,
    responses(
        (status = 200, body = PictureOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn set_picture(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(body): ApiJson<PictureIn>,
) -> ApiResult<Json<PictureOut>> {
    let image = base64::engine::general_purpose::STANDARD
        .decode(body.data.trim())
        .map_err(|e| ApiError::invalid_field("data", format!("is not base64: {e}")))?;
    let picture_id = state.sessions.set_picture(&id, image).await?;
    Ok(Json(PictureOut {
        picture_id,
        has_picture: true,
    }))
}

#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/profile/picture",
    operation_id = "profile_remove_picture",
    tag = "profile",
    summary = "Remove the profile picture",
    params(SessionPath),
    responses(
        (status = 200, body = PictureOut),
        crate::openapi::common::ApiErrors,
    )
)]
async fn remove_picture(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<PictureOut>> {
    state.sessions.remove_picture(&id).await?;
    Ok(Json(PictureOut {
        picture_id: None,
        has_picture: false,
    }))
}
