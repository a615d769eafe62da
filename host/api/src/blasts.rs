//! Blasts: create (`POST /sessions/{id}/blast`), list per session and
//! fleet-wide, get, list recipients, cancel and retry.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Json;
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use super::AppState;
use super::auth::Principal;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery, Paging};
use crate::domain::time::iso8601;
use crate::openapi::common::{BlastPath, SessionPath};
use switchboard_runtime::blast::BlastError;
use switchboard_runtime::blast::model::{
    BlastJob, BlastOptions, BlastRecipient, JobStatus, RecipientStatus, Refusal,
};
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

/// Query of the fleet-wide job listing.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct JobQuery {
    /// Only this session's jobs.
    session: Option<String>,
    /// Only jobs in this status.
    #[serde(default, deserialize_with = "job_status")]
    status: Option<JobStatus>,
}

/// Query of a session's job listing.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SessionJobQuery {
    /// Only jobs in this status.
    #[serde(default, deserialize_with = "job_status")]
    status: Option<JobStatus>,
}

/// Query of the recipient listing.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct RecipientQuery {
    /// Only recipients in this status.
    #[serde(default, deserialize_with = "recipient_status")]
    status: Option<RecipientStatus>,
    /// Page size (100; clamped to 1..=1000).
    limit: Option<i64>,
    /// Recipients to skip (0).
    offset: Option<i64>,
}

/// Reads an optional status filter: absent or blank is none; an unknown
/// status is refused, naming the known ones.
fn status<'de, D: Deserializer<'de>, T>(
    d: D,
    parse: fn(&str) -> Option<T>,
    names: fn() -> String,
) -> Result<Option<T>, D::Error> {
    let raw = Option::<String>::deserialize(d)?;
    match raw.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => parse(s)
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("`status` is `{s}`; use one of {}", names()))),
    }
}

fn job_status<'de, D: Deserializer<'de>>(d: D) -> Result<Option<JobStatus>, D::Error> {
    status(d, JobStatus::parse, JobStatus::names)
}

fn recipient_status<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RecipientStatus>, D::Error> {
    status(d, RecipientStatus::parse, RecipientStatus::names)
}

/// `201` of `POST /api/v1/sessions/{id}/blast`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlastCreated {
    /// The job id.
    pub job_id: String,
    /// Recipients queued (after dedup).
    pub total: u64,
    /// Recipients dropped as duplicates.
    pub skipped_dup: u64,
    /// `pending` (or `running`).
    pub status: JobStatus,
}

/// A blast job as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlastJobView {
    /// The job id.
    pub id: String,
    /// The job's session.
    pub session_id: String,
    /// The send kind, or a plugin's blast endpoint.
    pub endpoint: String,
    /// Where the job is.
    pub status: JobStatus,
    /// Pacing and retry options.
    pub options: BlastOptions,
    /// Recipients in the job.
    pub total: u64,
    /// Sent.
    pub sent_count: u64,
    /// Failed attempts (including ones later sent).
    pub failed_count: u64,
    /// Dead-lettered (retryable with `/retry`).
    pub dlq_count: u64,
    /// Skipped as duplicates.
    pub skipped_dup_count: u64,
    /// ISO-8601 start time asked for.
    pub send_at: Option<String>,
    /// ISO-8601.
    pub created_at: String,
    /// ISO-8601.
    pub started_at: Option<String>,
    /// ISO-8601.
    pub finished_at: Option<String>,
}

impl From<&BlastJob> for BlastJobView {
    fn from(j: &BlastJob) -> Self {
        Self {
            id: j.id.clone(),
            session_id: j.session_id.clone(),
            endpoint: j.endpoint.clone(),
            status: j.status,
            options: j.options,
            total: j.total,
            sent_count: j.sent_count,
            failed_count: j.failed_count,
            dlq_count: j.dlq_count,
            skipped_dup_count: j.skipped_dup_count,
            send_at: j.send_at.map(iso8601),
            created_at: iso8601(j.created_at),
            started_at: j.started_at.map(iso8601),
            finished_at: j.finished_at.map(iso8601),
        }
    }
}

impl From<BlastJob> for BlastJobView {
    fn from(j: BlastJob) -> Self {
        Self::from(&j)
    }
}

/// `GET /api/v1/blasts` and `GET /api/v1/sessions/{id}/blasts`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlastJobList {
    /// How many jobs.
    pub count: usize,
    /// Newest first.
    pub jobs: Vec<BlastJobView>,
}

impl From<Vec<BlastJob>> for BlastJobList {
    fn from(jobs: Vec<BlastJob>) -> Self {
        let jobs: Vec<BlastJobView> = jobs.iter().map(BlastJobView::from).collect();
        Self {
            count: jobs.len(),
            jobs,
        }
    }
}

/// One recipient of a blast job.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlastRecipientView {
    /// Position in the job (1-based, in the request's order).
    pub id: u64,
    /// The recipient's JID.
    pub recipient: String,
    /// Where it is.
    pub status: RecipientStatus,
    /// Attempts made.
    pub attempts: u32,
    /// The last failure.
    pub last_error: Option<String>,
    /// The message id chosen for it.
    pub message_id: Option<String>,
    /// ISO-8601.
    pub updated_at: String,
    /// ISO-8601 time until which it is held, still `pending`, for the
    /// account's reach-out timelock (it has no chat with this recipient);
    /// `null` when not held.
    pub held_until: Option<String>,
}

impl From<&BlastRecipient> for BlastRecipientView {
    fn from(r: &BlastRecipient) -> Self {
        Self {
            id: r.id,
            recipient: r.recipient.clone(),
            status: r.status,
            attempts: r.attempts,
            last_error: r.last_error.clone(),
            message_id: r.message_id.clone(),
            updated_at: iso8601(r.updated_at),
            held_until: r.held_until.map(iso8601),
        }
    }
}

/// `GET …/blasts/{job}/recipients`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlastRecipientList {
    /// Recipients on this page.
    pub count: usize,
    /// The page.
    pub recipients: Vec<BlastRecipientView>,
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blast",
    operation_id = "blasts_create",
    tag = "blasts",
    summary = "Create a blast: one message to many recipients",
    params(SessionPath),
    request_body = BlastRequest,
    responses(
        (status = 201, body = BlastCreated),
        crate::openapi::common::ApiErrors,
    )
)]
async fn create(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiJson(req): ApiJson<BlastRequest>,
) -> ApiResult<(StatusCode, Json<BlastCreated>)> {
    // A blast adds work the store must record for every recipient: under
    // the free-space floor, or with the store failing, none is taken.
    state.store.check_free_space()?;
    // The media a blast sends is checked once, before any job exists.
    if let Some(media_id) = req.body.get("media_id").and_then(serde_json::Value::as_str)
        && state.sessions.exists(&id)
    {
        crate::media::check_media_id(&state, &id, "body.media_id", media_id).await?;
    }
    // So is a media URL: one that leads inward is refused before any job.
    if matches!(
        req.endpoint.as_str(),
        "image" | "video" | "audio" | "document"
    ) && let Some(url) = req.body.get("url").and_then(serde_json::Value::as_str)
        && state.sessions.exists(&id)
    {
        state.send.check_media_url(url).await?;
    }
    let created = state.blasts.create(&id, req).await?;
    Ok((
        StatusCode::CREATED,
        Json(BlastCreated {
            job_id: created.job.id,
            total: created.job.total,
            skipped_dup: created.skipped_dup,
            status: created.job.status,
        }),
    ))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blasts",
    operation_id = "blasts_list_session",
    tag = "blasts",
    summary = "A session's blast jobs",
    params(SessionPath, SessionJobQuery),
    responses(
        (status = 200, body = BlastJobList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_session(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(q): ApiQuery<SessionJobQuery>,
) -> ApiResult<Json<BlastJobList>> {
    state.sessions.get(&id)?;
    Ok(Json(state.blasts.list(Some(&id), q.status)?.into()))
}

#[utoipa::path(
    get,
    path = "/api/v1/blasts",
    operation_id = "blasts_list_all",
    tag = "blasts",
    summary = "Every blast job of the gateway",
    params(JobQuery),
    responses(
        (status = 200, body = BlastJobList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn list_all(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    ApiQuery(q): ApiQuery<JobQuery>,
) -> ApiResult<Json<BlastJobList>> {
    let session = q
        .session
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let mut jobs = state.blasts.list(session, q.status)?;
    // A token limited to some sessions sees their jobs only.
    jobs.retain(|j| principal.covers(&j.session_id));
    Ok(Json(jobs.into()))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blasts/{job}",
    operation_id = "blasts_get_one",
    tag = "blasts",
    summary = "A blast job",
    params(BlastPath),
    responses(
        (status = 200, body = BlastJobView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn get_one(
    State(state): State<AppState>,
    ApiPath(BlastPath { id, job }): ApiPath<BlastPath>,
) -> ApiResult<Json<BlastJobView>> {
    Ok(Json(state.blasts.get(&id, &job)?.into()))
}

#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/blasts/{job}/recipients",
    operation_id = "blasts_recipients",
    tag = "blasts",
    summary = "A page of a job's recipients",
    params(BlastPath, RecipientQuery),
    responses(
        (status = 200, body = BlastRecipientList),
        crate::openapi::common::ApiErrors,
    )
)]
async fn recipients(
    State(state): State<AppState>,
    ApiPath(BlastPath { id, job }): ApiPath<BlastPath>,
    ApiQuery(q): ApiQuery<RecipientQuery>,
) -> ApiResult<Json<BlastRecipientList>> {
    let (limit, offset) = Paging {
        limit: q.limit,
        offset: q.offset,
    }
    .resolve();
    let page = state
        .blasts
        .recipients(&id, &job, q.status, offset, limit)?;
    let recipients: Vec<BlastRecipientView> = page.iter().map(Into::into).collect();
    Ok(Json(BlastRecipientList {
        count: recipients.len(),
        recipients,
    }))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blasts/{job}/cancel",
    operation_id = "blasts_cancel",
    tag = "blasts",
    summary = "Cancel a job",
    params(BlastPath),
    responses(
        (status = 200, body = BlastJobView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn cancel(
    State(state): State<AppState>,
    ApiPath(BlastPath { id, job }): ApiPath<BlastPath>,
) -> ApiResult<Json<BlastJobView>> {
    Ok(Json(state.blasts.cancel(&id, &job)?.into()))
}

#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/blasts/{job}/retry",
    operation_id = "blasts_retry",
    tag = "blasts",
    summary = "Retry a job's dead-lettered and failed recipients",
    params(BlastPath),
    responses(
        (status = 200, body = BlastJobView),
        crate::openapi::common::ApiErrors,
    )
)]
async fn retry(
    State(state): State<AppState>,
    ApiPath(BlastPath { id, job }): ApiPath<BlastPath>,
) -> ApiResult<Json<BlastJobView>> {
    Ok(Json(state.blasts.retry(&id, &job)?.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> BlastJob {
        BlastJob {
            id: "j".into(),
            seq: 4,
            session_id: "s".into(),
            account: "1@s.whatsapp.net".into(),
            endpoint: "text".into(),
            status: JobStatus::CompletedWithFailures,
            options: BlastOptions::default(),
            total: 3,
            sent_count: 2,
            failed_count: 1,
            dlq_count: 1,
            skipped_dup_count: 0,
            send_at: None,
            created_at: 10,
            started_at: Some(11),
            finished_at: Some(12),
            in_flight: None,
            reason: None,
        }
    }

    #[test]
    fn the_job_view_has_the_spec_fields_with_iso_times() {
        let v = serde_json::to_value(BlastJobView::from(&job())).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "created_at",
                "dlq_count",
                "endpoint",
                "failed_count",
                "finished_at",
                "id",
                "options",
                "send_at",
                "sent_count",
                "session_id",
                "skipped_dup_count",
                "started_at",
                "status",
                "total"
            ]
        );
        assert_eq!(v["created_at"], "1970-01-01T00:00:10Z");
        assert_eq!(v["status"], "completed_with_failures");
        assert_eq!(v["options"]["delay_ms"], 1000);
    }

    #[test]
    fn the_recipient_view_shows_times_as_iso_and_status_by_name() {
        let r = BlastRecipient {
            id: 1,
            recipient: "15550001111@s.whatsapp.net".into(),
            status: RecipientStatus::Dlq,
            attempts: 3,
            last_error: Some("offline".into()),
            message_id: None,
            updated_at: 12,
            held_until: None,
        };
        let v = serde_json::to_value(BlastRecipientView::from(&r)).unwrap();
        assert_eq!(v["status"], "dlq");
        assert_eq!(v["updated_at"], "1970-01-01T00:00:12Z");
        assert_eq!(v["attempts"], 3);
        assert!(v["message_id"].is_null());
    }

    #[test]
    fn a_blank_status_is_no_filter_and_an_unknown_one_names_the_known_ones() {
        let parse = |q: &str| {
            let uri: axum::http::Uri = format!("/r?{q}").parse().unwrap();
            axum::extract::Query::<RecipientQuery>::try_from_uri(&uri).map(|q| q.0)
        };
        assert_eq!(parse("status=").unwrap().status, None);
        assert_eq!(parse("").unwrap().status, None);
        assert_eq!(
            parse("status=%20dlq").unwrap().status,
            Some(RecipientStatus::Dlq)
        );
        let err = parse("status=ready").unwrap_err().body_text();
        assert!(
            err.contains("`ready`") && err.contains("skipped_dup"),
            "{err}"
        );
    }
}
