//! The simulated network's control routes over an account: its address book
//! (what app-state sync delivers to the session), locking the account, and
//! the spam reports the network received.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, MaybeJson};
use crate::domain::jid::{Jid, JidKind};
use switchboard_runtime::network::sim::SimNetwork;
use switchboard_runtime::store::SimAddressEntry;

/// The sim account routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/sim/sessions/{id}/address-book",
            post(put_entry).get(list_entries),
        )
        .route("/api/v1/sim/sessions/{id}/lock", post(lock))
        .route("/api/v1/sim/sessions/{id}/spam-reports", get(spam_reports))
}

fn sim(state: &AppState) -> ApiResult<&SimNetwork> {
    state
        .sim
        .as_ref()
        .ok_or_else(|| ApiError::not_found("sim_disabled", "the simulated network is not enabled"))
}

/// Body of `POST /api/v1/sim/sessions/{id}/address-book`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AddressEntryIn)]
struct EntryIn {
    phone: String,
    full_name: Option<String>,
    first_name: Option<String>,
    lid: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/address-book",
    operation_id = "sim_put_entry",
    tag = "sim",
    summary = "Add or change an address-book entry of the account",
    params(crate::openapi::common::SessionPath),
    request_body = EntryIn,
    responses(
        (status = 201, body = switchboard_runtime::store::SimAddressEntry),
        crate::openapi::common::ApiErrors,
    )
)]
async fn put_entry(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<EntryIn>,
) -> ApiResult<(StatusCode, Json<SimAddressEntry>)> {
    let sim = sim(&state)?;
    let phone = Jid::user(&body.phone)
        .map_err(|e| ApiError::invalid_field("phone", e))?
        .user_part()
        .to_owned();
    let lid = match body.lid {
        None => None,
        Some(l) => {
            let with_server = if l.contains('@') {
                l
            } else {
                format!("{l}@lid")
            };
            let lid = Jid::parse(&with_server).map_err(|e| ApiError::invalid_field("lid", e))?;
            if lid.kind() != JidKind::Lid {
                return Err(ApiError::invalid_field(
                    "lid",
                    "must be an `<id>@lid` identifier",
                ));
            }
            Some(lid.to_string())
        }
    };
    let blank_is_none = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let entry = SimAddressEntry {
        phone,
        full_name: blank_is_none(body.full_name),
        first_name: blank_is_none(body.first_name),
        lid,
        version: 0,
    };
    let stored = sim.put_address_entry(&id, entry).await?;
    Ok((StatusCode::CREATED, Json(stored)))
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/sessions/{id}/address-book",
    operation_id = "sim_list_entries",
    tag = "sim",
    summary = "The account's address book",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::AddressBook),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_entries(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let entries = sim(&state)?.address_book(&id)?;
    Ok(Json(json!({ "entries": entries, "count": entries.len() })))
}

/// Body of `POST /api/v1/sim/sessions/{id}/lock`; may be empty.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LockIn)]
struct LockIn {
    reason: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/lock",
    operation_id = "sim_lock",
    tag = "sim",
    summary = "Lock the account, as the network would",
    params(crate::openapi::common::SessionPath),
    request_body(content = Option<LockIn>, description = "Optional."),
    responses(
        (status = 200, body = crate::openapi::answers::Locked),
        crate::openapi::common::ApiErrors,
    )
)]
async fn lock(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    MaybeJson(body): MaybeJson<LockIn>,
) -> ApiResult<Json<Value>> {
    let reason = body
        .reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "locked by the network".to_owned());
    sim(&state)?.lock_account(&id, reason.clone()).await?;
    Ok(Json(json!({ "success": true, "reason": reason })))
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/sessions/{id}/spam-reports",
    operation_id = "sim_spam_reports",
    tag = "sim",
    summary = "The spam reports the network received from the session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = crate::openapi::answers::SpamReports),
        crate::openapi::common::ApiErrors,
    )
)]
async fn spam_reports(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let reports = sim(&state)?.spam_reports(&id)?;
    Ok(Json(json!({ "reports": reports, "count": reports.len() })))
}
