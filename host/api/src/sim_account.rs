//! The simulated network's control routes over an account: its address book
//! (what app-state sync delivers to the session), locking the account,
//! replacing its connection by another client's, the spam reports the
//! network received, and the messages the account starred.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, MaybeJson};
use super::openapi::common::{SessionPath, Success};
use super::sim::sim;
use crate::domain::jid::{Jid, JidKind};
use switchboard_runtime::network::sim::{ReceivedReport, StarredMessage};
use switchboard_runtime::store::SimAddressEntry;

/// The sim account routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/sim/sessions/{id}/address-book",
            post(put_entry).get(list_entries),
        )
        .route("/api/v1/sim/sessions/{id}/lock", post(lock))
        .route("/api/v1/sim/sessions/{id}/replace", post(replace))
        .route("/api/v1/sim/sessions/{id}/spam-reports", get(spam_reports))
        .route("/api/v1/sim/sessions/{id}/starred", get(starred))
}

/// Body of `POST /api/v1/sim/sessions/{id}/address-book`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = AddressEntryIn)]
struct EntryIn {
    /// The contact's phone number.
    #[schema(value_type = crate::openapi::common::PhoneNumber)]
    phone: String,
    /// The contact's full name; blank means none.
    full_name: Option<String>,
    /// The contact's first name; blank means none.
    first_name: Option<String>,
    /// The contact's linked identity: `<digits>@lid` or the bare digits.
    #[schema(pattern = r"^[0-9]{1,20}(?:@lid)?$")]
    lid: Option<String>,
}

/// `GET /api/v1/sim/sessions/{id}/address-book`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AddressBook {
    /// The account's address book.
    pub entries: Vec<SimAddressEntry>,
    /// How many.
    pub count: usize,
}

/// `POST /api/v1/sim/sessions/{id}/lock`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Locked {
    /// Always `true`.
    pub success: bool,
    /// The reason the session will see.
    pub reason: String,
}

/// `GET /api/v1/sim/sessions/{id}/spam-reports`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SpamReports {
    /// Reports the network received from the session.
    pub reports: Vec<ReceivedReport>,
    /// How many.
    pub count: usize,
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
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
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
        (status = 200, body = AddressBook),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_entries(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<AddressBook>> {
    let entries = sim(&state)?.address_book(&id)?;
    Ok(Json(AddressBook {
        count: entries.len(),
        entries,
    }))
}

/// Body of `POST /api/v1/sim/sessions/{id}/lock`; may be empty.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LockIn)]
struct LockIn {
    /// The reason the session will see; a default when absent or blank.
    reason: Option<String>,
    /// How long the network says the lock lasts, in seconds from now (as a
    /// temporary ban states its expiry): the cooldown is at least that long.
    #[schema(minimum = 1, maximum = 31536000)]
    expires_in_secs: Option<u64>,
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
        (status = 200, body = Locked),
        crate::openapi::common::ApiErrors,
    )
)]
async fn lock(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    MaybeJson(body): MaybeJson<LockIn>,
) -> ApiResult<Json<Locked>> {
    let reason = body
        .reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "locked by the network".to_owned());
    let until = match body.expires_in_secs {
        None => None,
        Some(s @ 1..=31_536_000) => Some(crate::domain::time::unix_now() + s as i64),
        Some(_) => {
            return Err(ApiError::invalid_field(
                "expires_in_secs",
                "must be between 1 and 31536000",
            ));
        }
    };
    sim(&state)?
        .lock_account(&id, reason.clone(), until)
        .await?;
    Ok(Json(Locked {
        success: true,
        reason,
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sim/sessions/{id}/replace",
    operation_id = "sim_replace",
    tag = "sim",
    summary = "Connect another client with the session's device, replacing its connection",
    params(SessionPath),
    responses(
        (status = 200, body = Success),
        crate::openapi::common::ApiErrors,
    )
)]
async fn replace(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<Success>> {
    sim(&state)?.replace_connection(&id).await?;
    Ok(Json(Success { success: true }))
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/sessions/{id}/spam-reports",
    operation_id = "sim_spam_reports",
    tag = "sim",
    summary = "The spam reports the network received from the session",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = SpamReports),
        crate::openapi::common::ApiErrors,
    )
)]
async fn spam_reports(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<SpamReports>> {
    let reports = sim(&state)?.spam_reports(&id)?;
    Ok(Json(SpamReports {
        count: reports.len(),
        reports,
    }))
}

/// `GET /api/v1/sim/sessions/{id}/starred`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StarredMessages {
    /// The starred messages, by chat and id.
    pub starred: Vec<StarredMessage>,
}

#[utoipa::path(
    get,
    path = "/api/v1/sim/sessions/{id}/starred",
    operation_id = "sim_starred",
    tag = "sim",
    summary = "The messages the session's account starred",
    params(crate::openapi::common::SessionPath),
    responses(
        (status = 200, body = StarredMessages),
        crate::openapi::common::ApiErrors,
    )
)]
async fn starred(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> ApiResult<Json<StarredMessages>> {
    Ok(Json(StarredMessages {
        starred: sim(&state)?.starred(&id)?,
    }))
}
