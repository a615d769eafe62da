//! Blasts: create (`POST /sessions/{id}/blast`), list per session and
//! fleet-wide, get, list recipients, cancel and retry.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery, Paging};
use switchboard_runtime::blast::BlastError;
use switchboard_runtime::blast::model::{BlastJob, JobStatus, RecipientStatus, Refusal};
use switchboard_runtime::blast::plan::BlastRequest;

/// The blast routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/sessions/{id}/blast", post(create))
        .route("/api/v1/sessions/{id}/blasts", get(list_session))
        .route("/api/v1/sessions/{id}/blasts/{job}", get(get_one))
        .route(
            "/api/v1/sessions/{id}/blasts/{job}/recipients",
            get(recipients),
        )
        .route("/api/v1/sessions/{id}/blasts/{job}/cancel", post(cancel))
        .route("/api/v1/sessions/{id}/blasts/{job}/retry", post(retry))
        .route("/api/v1/blasts", get(list_all))
}

impl From<BlastError> for ApiError {
    fn from(e: BlastError) -> Self {
        let msg = e.to_string();
        match e {
            BlastError::Session(s) => s.into(),
            BlastError::NotFound(_) => ApiError::not_found("blast_not_found", msg),
            BlastError::Invalid(f) => f.into(),
            BlastError::Refused(Refusal::NotCancellable(_)) => {
                ApiError::bad_request("not_cancellable", msg)
            }
            BlastError::Refused(Refusal::Running) => ApiError::bad_request("blast_running", msg),
            BlastError::Refused(Refusal::NothingToRetry) => {
                ApiError::bad_request("nothing_to_retry", msg)
            }
            BlastError::Store(s) => s.into(),
            BlastError::Internal(m) => ApiError::internal(m),
        }
    }
}

/// `?status=` of the job listings.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct JobQuery {
    session: Option<String>,
    status: Option<String>,
}

/// `?status=&limit=&offset=` of the recipient listing.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct RecipientQuery {
    status: Option<String>,
    limit: Option<i64>,
    offset: Option<i64>,
}

/// Parses an optional status filter; empty means none.
fn status<T>(
    raw: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    names: String,
) -> ApiResult<Option<T>> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => parse(s).map(Some).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_query",
                format!("`status` is `{s}`; use one of {names}"),
            )
        }),
    }
}

fn jobs(jobs: &[BlastJob]) -> Json<Value> {
    let views: Vec<Value> = jobs.iter().map(BlastJob::view).collect();
    Json(json!({ "count": views.len(), "jobs": views }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blast",
    operation_id = "blasts_create",
    tag = "blasts",
    summary = "Create a blast: one message to many recipients",
    params(crate::openapi::common::SessionPath),
    request_body = BlastRequest,
    responses(
        (status = 201, body = crate::openapi::answers::BlastCreated),
        crate::openapi::common::ApiErrors,
    )
)]
async fn create(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<BlastRequest>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let created = state.blasts.create(&id, req).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "job_id": created.job.id,
            "total": created.job.total,
            "skipped_dup": created.skipped_dup,
            "status": created.job.status.as_str(),
        })),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blasts",
    operation_id = "blasts_list_session",
    tag = "blasts",
    summary = "A session's blast jobs",
    params(crate::openapi::common::SessionPath, JobQuery),
    responses(
        (status = 200, body = crate::openapi::answers::BlastJobList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_session(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<JobQuery>,
) -> ApiResult<Json<Value>> {
    state.sessions.get(&id)?;
    let status = status(q.status.as_deref(), JobStatus::parse, JobStatus::names())?;
    Ok(jobs(&state.blasts.list(Some(&id), status)?))
}

#[utoipa::path(
    get,
    path = "/api/v1/blasts",
    operation_id = "blasts_list_all",
    tag = "blasts",
    summary = "Every blast job of the gateway",
    params(JobQuery),
    responses(
        (status = 200, body = crate::openapi::answers::BlastJobList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_all(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<JobQuery>,
) -> ApiResult<Json<Value>> {
    let status = status(q.status.as_deref(), JobStatus::parse, JobStatus::names())?;
    let session = q
        .session
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    Ok(jobs(&state.blasts.list(session, status)?))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blasts/{job}",
    operation_id = "blasts_get_one",
    tag = "blasts",
    summary = "A blast job",
    params(crate::openapi::common::BlastPath),
    responses(
        (status = 200, body = crate::openapi::answers::BlastJobView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath((id, job)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    Ok(Json(state.blasts.get(&id, &job)?.view()))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blasts/{job}/recipients",
    operation_id = "blasts_recipients",
    tag = "blasts",
    summary = "A page of a job's recipients",
    params(crate::openapi::common::BlastPath, RecipientQuery),
    responses(
        (status = 200, body = crate::openapi::answers::BlastRecipientList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn recipients(
    State(state): State<AppState>,
    ApiPath((id, job)): ApiPath<(String, String)>,
    ApiQuery(q): ApiQuery<RecipientQuery>,
) -> ApiResult<Json<Value>> {
    let status = status(
        q.status.as_deref(),
        RecipientStatus::parse,
        RecipientStatus::names(),
    )?;
    let (limit, offset) = Paging {
        limit: q.limit,
        offset: q.offset,
    }
    .resolve();
    let page = state.blasts.recipients(&id, &job, status, offset, limit)?;
    let views: Vec<Value> = page.iter().map(|r| r.view()).collect();
    Ok(Json(json!({ "count": views.len(), "recipients": views })))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blasts/{job}/cancel",
    operation_id = "blasts_cancel",
    tag = "blasts",
    summary = "Cancel a job",
    params(crate::openapi::common::BlastPath),
    responses(
        (status = 200, body = crate::openapi::answers::BlastJobView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn cancel(
    State(state): State<AppState>,
    ApiPath((id, job)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    Ok(Json(state.blasts.cancel(&id, &job)?.view()))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blasts/{job}/retry",
    operation_id = "blasts_retry",
    tag = "blasts",
    summary = "Retry a job's dead-lettered and failed recipients",
    params(crate::openapi::common::BlastPath),
    responses(
        (status = 200, body = crate::openapi::answers::BlastJobView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn retry(
    State(state): State<AppState>,
    ApiPath((id, job)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    Ok(Json(state.blasts.retry(&id, &job)?.view()))
}
