//! Contacts: the stored directory of a session (`GET …/contacts`, local data
//! only) and the lookups the network answers (check phones, contact info,
//! profile picture, user info).

use axum::Router;
use axum::extract::State;
use axum::response::Json;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery, Paging};
use crate::domain::jid::{Jid, JidKind};

/// Most phones or JIDs in one lookup.
pub const MAX_LOOKUP: usize = 1000;

/// The contacts routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/contacts", get(list))
        .route("/api/v1/sessions/{id}/contacts/check", post(check))
        .route("/api/v1/sessions/{id}/contacts/info", post(info))
        .route("/api/v1/sessions/{id}/contacts/users", post(users))
        .route("/api/v1/sessions/{id}/contacts/{jid}/picture", get(picture))
}

/// An account's address: a user JID, a phone number or an `@lid`.
pub(super) fn account_jid(field: &str, value: &str) -> ApiResult<Jid> {
    let jid = Jid::parse_recipient(value).map_err(|e| ApiError::invalid_field(field, e))?;
    match jid.kind() {
        JidKind::User | JidKind::Lid => Ok(jid),
        _ => Err(ApiError::invalid_field(
            field,
            format!("`{jid}` is not a user: give a user JID, a phone number or an `@lid`"),
        )),
    }
}

/// A non-empty list of at most [`MAX_LOOKUP`] entries, each checked by `one`
/// (errors name the entry, `jids[2]`); duplicates are dropped, order kept.
pub(super) fn checked_list<T: PartialEq>(
    field: &str,
    values: &[String],
    one: impl Fn(&str, &str) -> ApiResult<T>,
) -> ApiResult<Vec<T>> {
    if values.is_empty() {
        return Err(ApiError::invalid_field(field, "must not be empty"));
    }
    if values.len() > MAX_LOOKUP {
        return Err(ApiError::invalid_field(
            field,
            format!(
                "has {} entries; at most {MAX_LOOKUP} are allowed",
                values.len()
            ),
        ));
    }
    let mut out: Vec<T> = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let item = one(&format!("{field}[{i}]"), v)?;
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(out)
}

/// Query of `GET …/contacts`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    q: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/contacts",
    operation_id = "contacts_list",
    tag = "contacts",
    summary = "Search the session's contact directory",
    params(crate::openapi::common::SessionPath, ListQuery),
    responses(
        (status = 200, body = crate::openapi::answers::ContactPage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> ApiResult<Json<Value>> {
    let (limit, offset) = Paging {
        limit: query.limit,
        offset: query.offset,
    }
    .resolve();
    let q = query.q.unwrap_or_default();
    let page = state.sessions.contacts(&id, &q, limit, offset)?;
    Ok(Json(json!({
        "contacts": page.contacts,
        "total": page.total,
        "limit": limit,
        "offset": offset,
    })))
}

/// Body of `POST …/contacts/check`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = PhoneCheckIn)]
struct CheckIn {
    phones: Vec<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/contacts/check",
    operation_id = "contacts_check",
    tag = "contacts",
    summary = "Which phone numbers have an account",
    params(crate::openapi::common::SessionPath),
    request_body = CheckIn,
    responses(
        (status = 200, body = crate::openapi::answers::PhoneChecks),
        crate::openapi::common::ApiErrors,
    )
)]
async fn check(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<CheckIn>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    // Each entry keeps the spelling it was given, for the answer.
    let asked = checked_list("phones", &body.phones, |field, p| {
        let jid = Jid::parse_recipient(p).map_err(|e| ApiError::invalid_field(field, e))?;
        let digits = jid.phone().ok_or_else(|| {
            ApiError::invalid_field(field, format!("`{p}` is not a phone number"))
        })?;
        Ok((p.to_owned(), digits.to_owned()))
    })?;
    let digits: Vec<String> = asked.iter().map(|(_, d)| d.clone()).collect();
    let (client, _) = state.sessions.sender(&id)?;
    let checks = client.check_phones(&digits).await?;
    let results: Vec<Value> = asked
        .iter()
        .zip(checks)
        .map(|((given, _), c)| json!({ "phone": given, "exists": c.jid.is_some(), "jid": c.jid }))
        .collect();
    Ok(Json(json!({ "results": results })))
}

/// Body of `POST …/contacts/info`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ContactInfoIn)]
struct InfoIn {
    jid: String,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/contacts/info",
    operation_id = "contacts_info",
    tag = "contacts",
    summary = "A contact's info from the network",
    params(crate::openapi::common::SessionPath),
    request_body = InfoIn,
    responses(
        (status = 200, body = switchboard_runtime::network::contacts::ContactInfo),
        crate::openapi::common::ApiErrors,
    )
)]
async fn info(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<InfoIn>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    let jid = account_jid("jid", &body.jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let info = client.contact_info(&jid).await?;
    Ok(Json(json!(info)))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/contacts/{jid}/picture",
    operation_id = "contacts_picture",
    tag = "contacts",
    summary = "A contact's profile picture",
    params(crate::openapi::common::SessionJidPath),
    responses(
        (status = 200, body = switchboard_runtime::network::contacts::ProfilePicture),
        crate::openapi::common::ApiErrors,
    )
)]
async fn picture(
    State(state): State<AppState>,
    ApiPath((id, jid)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    let jid = account_jid("jid", &jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let picture = client.profile_picture(&jid).await?.ok_or_else(|| {
        ApiError::not_found(
            "no_profile_picture",
            format!("{jid} has no profile picture (or does not show it to this account)"),
        )
    })?;
    Ok(Json(json!(picture)))
}

/// Body of `POST …/contacts/users`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = UserInfoIn)]
struct UsersIn {
    jids: Vec<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/contacts/users",
    operation_id = "contacts_users",
    tag = "contacts",
    summary = "User info for several JIDs",
    params(crate::openapi::common::SessionPath),
    request_body = UsersIn,
    responses(
        (status = 200, body = crate::openapi::answers::UserInfos),
        crate::openapi::common::ApiErrors,
    )
)]
async fn users(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<UsersIn>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    let jids = checked_list("jids", &body.jids, account_jid)?;
    let (client, _) = state.sessions.sender(&id)?;
    let users = client.user_info(&jids).await?;
    Ok(Json(json!({ "users": users })))
}
