//! Media routes: uploads (`POST …/media`, raw or multipart, streamed into
//! the media store under their own limit), the bytes of a media (`GET
//! …/media/{media_id}`: streamed, `Range`, `ETag`, or a redirect to a
//! presigned URL), its description, the retry of a failed download, and
//! deletion.

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use futures_util::stream;
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiPath, ApiQuery};
use crate::domain::media::{MediaObject, MediaRecord, MediaState, media_path, validate_media_id};
use crate::openapi::common::{SessionPath, SuccessMessage};
use switchboard_runtime::media::{MediaError, UploadMeta};
use switchboard_runtime::media_store::{MediaStoreError, PutError};

/// The media routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/sessions/{id}/media",
            // An upload is streamed to the store under the upload limit,
            // not read into memory under the JSON limit.
            post(upload).layer(DefaultBodyLimit::disable()),
        )
        .route(
            "/api/v1/sessions/{id}/media/{media_id}",
            get(bytes).delete(delete),
        )
        .route("/api/v1/sessions/{id}/media/{media_id}/info", get(info))
        .route("/api/v1/sessions/{id}/media/{media_id}/retry", post(retry))
}

/// A media of a session.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct MediaPath {
    /// The session id.
    pub id: String,
    /// The media id.
    #[param(min_length = 1, max_length = 64, pattern = r"^[A-Za-z0-9_-]+$")]
    pub media_id: String,
}

impl MediaPath {
    fn checked(self) -> ApiResult<Self> {
        validate_media_id(&self.media_id).map_err(|e| ApiError::invalid_field("media_id", e))?;
        Ok(self)
    }
}

/// What a raw upload says about itself in the query (a multipart upload
/// says it in its `file` part).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// The file name (a document's name when sent).
    pub filename: Option<String>,
    /// The MIME type, when the `Content-Type` header is not it.
    pub mimetype: Option<String>,
}

impl From<MediaError> for ApiError {
    fn from(e: MediaError) -> Self {
        let msg = e.to_string();
        match e {
            MediaError::NotFound { .. } => ApiError::not_found("media_not_found", msg),
            MediaError::NotStored { .. } => ApiError::conflict("media_not_stored", msg),
            MediaError::NotDownloadable(_) => ApiError::conflict("media_not_downloadable", msg),
            MediaError::NotConnected => ApiError::conflict("session_not_connected", msg),
            MediaError::EmptyUpload => ApiError::bad_request("empty_upload", msg),
            MediaError::Store(MediaStoreError::NotFound(_)) => ApiError::not_found(
                "media_not_found",
                "the media's bytes are no longer in the media store",
            ),
            MediaError::Store(e) => media_store_failed(e),
            MediaError::Upload(PutError::TooLarge { limit }) => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "upload_too_large",
                format!(
                    "the upload is larger than {limit} bytes, the upload limit (--media-max-upload-bytes)"
                ),
            ),
            MediaError::QuotaExceeded { .. } => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "quota_exceeded", msg)
            }
            MediaError::Upload(PutError::Body(e)) => ApiError::bad_request(
                "unreadable_body",
                format!("the upload could not be read to its end: {e}"),
            ),
            MediaError::Upload(PutError::Store(e)) => media_store_failed(e),
            MediaError::Record(e) => e.into(),
            MediaError::Internal(e) => ApiError::internal(e),
        }
    }
}

/// Checks, when a send is stored for later (scheduled, a blast), that the
/// `media_id` it names is a stored media of the session: refused now
/// rather than failing at its time. (It must still be there then: the
/// send core checks again.) `field` names it in the error.
pub(crate) async fn check_media_id(
    state: &AppState,
    session_id: &str,
    field: &str,
    media_id: &str,
) -> ApiResult<()> {
    match state.media.for_send(session_id, media_id).await {
        Ok(_) => Ok(()),
        Err(MediaError::NotFound { .. }) => Err(ApiError::invalid_field(
            field,
            format!("names no media of session `{session_id}` (upload it first)"),
        )),
        Err(e @ MediaError::NotStored { .. }) => Err(ApiError::invalid_field(
            field,
            format!("cannot be sent: {e}"),
        )),
        Err(e) => Err(e.into()),
    }
}

fn media_store_failed(e: MediaStoreError) -> ApiError {
    if let Some(fault) = e.fault() {
        return ApiError::storage(fault, e.to_string());
    }
    tracing::error!(error = %e, "the media store failed");
    ApiError::new(StatusCode::BAD_GATEWAY, "media_store_failed", e.to_string())
}

/// Stores an upload for later sends.
#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/media",
    operation_id = "media_upload",
    tag = "media",
    summary = "Upload media for later sends",
    description = "Streams the body into the media store (never whole into memory) and answers \
        the media id a send's `media_id` takes (any media kind, blasts and scheduled sends too). \
        The body is the raw bytes (`Content-Type` is the media's type; `filename` and `mimetype` \
        in the query), or `multipart/form-data` with one part named `file` (its own \
        `Content-Type` and file name). The upload limit (`--media-max-upload-bytes`, default \
        100 MiB) applies, not the JSON body limit: over it, `413 upload_too_large`. What a \
        session holds in uploads is bounded by its upload quota \
        (`--media-max-upload-bytes-per-session`, default 1 GiB): an upload that would take it \
        past is `413 quota_exceeded`, naming the quota and what the session holds, and nothing \
        of it is kept. Uploads are kept like all media, until the retention sweep removes them.",
    params(SessionPath, UploadQuery),
    request_body(
        description = "The raw bytes, or a multipart form with a `file` part.",
        content(
            (Vec<u8> = "application/octet-stream"),
            (UploadForm = "multipart/form-data"),
        )
    ),
    responses(
        (status = 201, description = "Stored.", body = MediaObject),
        crate::openapi::common::ApiErrors,
    )
)]
async fn upload(
    State(state): State<AppState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(query): ApiQuery<UploadQuery>,
    request: Request,
) -> ApiResult<(StatusCode, Json<MediaObject>)> {
    state.sessions.get(&id)?;
    // Under the free-space floor (or with the store failing) an upload is
    // refused before a byte of it is read.
    state.store.check_free_space()?;
    state.media.check_free_space(state.store.min_free_bytes())?;
    let limit = state.media.config().max_upload_bytes;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let is_multipart = content_type.as_deref().is_some_and(|t| {
        t.trim()
            .to_ascii_lowercase()
            .starts_with("multipart/form-data")
    });
    // A raw body's length is the file's: one that says it is too large is
    // refused unread. A form's includes its framing, so there the limit
    // applies to the file part as it streams.
    if !is_multipart && declared.is_some_and(|n| n > limit) {
        return Err(MediaError::Upload(PutError::TooLarge { limit }).into());
    }
    let record = if is_multipart {
        let mut form = Multipart::from_request(request, &state)
            .await
            .map_err(|e| ApiError::bad_request("malformed_multipart", e.body_text()))?;
        let field = loop {
            match form.next_field().await {
                Ok(Some(field)) if field.name() == Some("file") => break field,
                Ok(Some(_)) => continue,
                Ok(None) => {
                    return Err(ApiError::invalid_field(
                        "file",
                        "is required: a multipart upload carries its bytes in a part named `file`",
                    ));
                }
                Err(e) => return Err(ApiError::bad_request("malformed_multipart", e.body_text())),
            }
        };
        let meta = UploadMeta {
            mimetype: query
                .mimetype
                .clone()
                .or_else(|| field.content_type().map(str::to_owned)),
            filename: query
                .filename
                .clone()
                .or_else(|| field.file_name().map(str::to_owned)),
            declared_len: None,
        };
        let body = stream::unfold(field, |mut field| async move {
            match field.chunk().await {
                Ok(Some(chunk)) => Some((Ok(chunk), field)),
                Ok(None) => None,
                Err(e) => Some((Err(e.body_text()), field)),
            }
        });
        state.media.upload(&id, checked_meta(meta)?, body).await?
    } else {
        let meta = UploadMeta {
            mimetype: query.mimetype.clone().or(content_type),
            filename: query.filename.clone(),
            declared_len: declared,
        };
        let body = request.into_body().into_data_stream();
        state.media.upload(&id, checked_meta(meta)?, body).await?
    };
    Ok((StatusCode::CREATED, Json(state.media.object(&record))))
}

/// Refuses a file name or MIME type that could not be sent as one.
fn checked_meta(mut meta: UploadMeta) -> ApiResult<UploadMeta> {
    if let Some(name) = meta.filename.as_mut() {
        *name = name.trim().to_owned();
        let bad = name.chars().count() > 255
            || name.contains(['/', '\\'])
            || name.chars().any(char::is_control)
            || name == "."
            || name == "..";
        if bad {
            return Err(ApiError::invalid_field(
                "filename",
                "must be a bare file name of at most 255 characters, without `/`, `\\` or control characters",
            ));
        }
        if name.is_empty() {
            meta.filename = None;
        }
    }
    if let Some(mime) = meta.mimetype.as_deref() {
        let essence = mime.split(';').next().unwrap_or("").trim();
        let ok = mime.len() <= 255
            && essence
                .split_once('/')
                .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
            && !mime.chars().any(char::is_control);
        if !ok {
            return Err(ApiError::invalid_field(
                "mimetype",
                "must be a MIME type, `type/subtype[; parameters]`",
            ));
        }
    }
    Ok(meta)
}

/// The parts of a multipart upload.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// The bytes of a media.
#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/media/{media_id}",
    operation_id = "media_get",
    tag = "media",
    summary = "Read a media's bytes",
    description = "Streams the bytes with `Content-Type`, `Content-Length`, `ETag` (the SHA-256) \
        and `Accept-Ranges`; a single `Range` (`bytes=a-b`, `bytes=a-`, `bytes=-n`) answers \
        `206` with `Content-Range`, one outside the media `416`; `If-None-Match` with the \
        `ETag` answers `304`. Pictures, sound and video are `inline`, anything else an \
        `attachment`; `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox` \
        always. A media still `pending` (lazy mode) is downloaded first (`409 \
        session_not_connected` when the session cannot, the media staying `pending`); a \
        `failed` one answers `409 media_not_stored` with the reason (retry with `POST …/retry`). \
        With a presigning S3 store (`--media-s3-presign-secs`) the answer is `302` to a \
        presigned URL.",
    params(MediaPath),
    responses(
        (status = 200, description = "The bytes.", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 206, description = "The range asked for.", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 302, description = "Redirect to a presigned URL (presigning S3 store)."),
        (status = 304, description = "Unchanged (`If-None-Match`)."),
        (status = 416, description = "The range is outside the media.", body = crate::openapi::common::ErrorBody),
        crate::openapi::common::ApiErrors,
    )
)]
async fn bytes(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<MediaPath>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let MediaPath { id, media_id } = path.checked()?;
    let client = state.sessions.client(&id)?;
    let record = state.media.open(&id, &media_id, Some(client)).await?;
    if record.state != MediaState::Stored {
        return Err(not_stored(&record));
    }
    if let Some(url) = state.media.presigned(&record).await? {
        return Ok((StatusCode::FOUND, [(header::LOCATION, url.to_string())]).into_response());
    }
    let etag = record.sha256.as_deref().map(|s| format!("\"{s}\""));
    if let (Some(etag), Some(asked)) = (&etag, headers.get(header::IF_NONE_MATCH))
        && asked
            .to_str()
            .is_ok_and(|a| a.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
    {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag.clone())]).into_response());
    }
    let size = record.file_length.unwrap_or(0);
    let range = match headers.get(header::RANGE).and_then(|v| v.to_str().ok()) {
        None => None,
        Some(value) => match parse_range(value, size) {
            RangeAsk::Whole => None,
            RangeAsk::Part(r) => Some(r),
            RangeAsk::Unsatisfiable => return Ok(unsatisfiable(size)),
        },
    };
    let blob = match state.media.read(&record, range.clone()).await {
        Ok(blob) => blob,
        Err(MediaError::Store(MediaStoreError::RangeNotSatisfiable { size })) => {
            return Ok(unsatisfiable(size));
        }
        Err(e) => return Err(e.into()),
    };
    let mut response = Response::new(Body::from_stream(blob.stream));
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header_value(&record.mimetype, "application/octet-stream"),
    );
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(blob.range.end - blob.range.start),
    );
    if let Some(etag) = etag {
        h.insert(header::ETAG, header_value(&etag, "\"\""));
    }
    let mime = record.mimetype.to_ascii_lowercase();
    let playable = ["image/", "audio/", "video/"]
        .iter()
        .any(|p| mime.starts_with(p))
        && !mime.starts_with("image/svg");
    h.insert(
        header::CONTENT_DISPOSITION,
        disposition(record.filename.as_deref(), playable),
    );
    // The type is the sender's word: never sniffed into something else, and
    // a document (HTML, SVG, …) opened from the gateway's origin runs no script.
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox"),
    );
    if range.is_some() {
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
        let content_range = format!(
            "bytes {}-{}/{}",
            blob.range.start,
            blob.range.end.saturating_sub(1),
            blob.size
        );
        response.headers_mut().insert(
            header::CONTENT_RANGE,
            header_value(&content_range, "bytes */0"),
        );
    }
    Ok(response)
}

fn not_stored(record: &MediaRecord) -> ApiError {
    let reason = record.error.as_deref().unwrap_or("not downloaded");
    ApiError::conflict(
        "media_not_stored",
        format!(
            "media `{}` could not be downloaded: {reason}; try again with POST {}/retry",
            record.id,
            media_path(&record.session_id, &record.id)
        ),
    )
}

fn unsatisfiable(size: u64) -> Response {
    let mut response = ApiError::new(
        StatusCode::RANGE_NOT_SATISFIABLE,
        "range_not_satisfiable",
        format!("the range asked for is outside the media's {size} bytes"),
    )
    .into_response();
    response.headers_mut().insert(
        header::CONTENT_RANGE,
        header_value(&format!("bytes */{size}"), "bytes */0"),
    );
    response
}

fn header_value(value: &str, fallback: &'static str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap_or_else(|_| HeaderValue::from_static(fallback))
}

/// `inline` for pictures, sound and video, `attachment` for anything else
/// (a document is saved, not rendered), with the file name when there is
/// one (RFC 6266; a name that is not plain ASCII goes percent-encoded in
/// `filename*`).
fn disposition(filename: Option<&str>, inline: bool) -> HeaderValue {
    let how = if inline { "inline" } else { "attachment" };
    let Some(name) = filename else {
        return HeaderValue::from_static(if inline { "inline" } else { "attachment" });
    };
    let plain = name
        .chars()
        .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ');
    let value = if plain {
        format!("{how}; filename=\"{name}\"")
    } else {
        let encoded: String = name
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        format!("{how}; filename*=UTF-8''{encoded}")
    };
    header_value(&value, how)
}

/// What a `Range` header asks for.
#[derive(Debug, PartialEq, Eq)]
enum RangeAsk {
    /// The whole media (no usable range: a unit other than bytes, several
    /// ranges, or a malformed one, all of which RFC 9110 lets a server
    /// answer with the whole).
    Whole,
    /// This part, end exclusive.
    Part(std::ops::Range<u64>),
    /// Outside the media.
    Unsatisfiable,
}

/// Reads a single byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`) against
/// a media of `size` bytes.
fn parse_range(value: &str, size: u64) -> RangeAsk {
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return RangeAsk::Whole;
    };
    if spec.contains(',') {
        return RangeAsk::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeAsk::Whole;
    };
    let (first, last) = (first.trim(), last.trim());
    let number = |s: &str| s.parse::<u64>().ok();
    match (first.is_empty(), last.is_empty()) {
        (true, true) => RangeAsk::Whole,
        (true, false) => match number(last) {
            None => RangeAsk::Whole,
            Some(0) => RangeAsk::Unsatisfiable,
            Some(_) if size == 0 => RangeAsk::Unsatisfiable,
            Some(n) => RangeAsk::Part(size.saturating_sub(n)..size),
        },
        (false, _) => {
            let Some(start) = number(first) else {
                return RangeAsk::Whole;
            };
            let end = if last.is_empty() {
                Some(size.saturating_sub(1))
            } else {
                number(last)
            };
            match end {
                None => RangeAsk::Whole,
                Some(_) if start >= size => RangeAsk::Unsatisfiable,
                Some(end) if end < start => RangeAsk::Whole,
                Some(end) => RangeAsk::Part(start..end.min(size - 1) + 1),
            }
        }
    }
}

/// A media's description.
#[utoipa::path(
    get,
    path = "/api/v1/sessions/{id}/media/{media_id}/info",
    operation_id = "media_info",
    tag = "media",
    summary = "Describe a media",
    description = "The media object (as in `message` events and upload answers), without \
        downloading anything: its `state` says whether the bytes are `stored`, `pending` \
        (lazy mode) or `failed` (with `error`).",
    params(MediaPath),
    responses(
        (status = 200, body = MediaObject),
        crate::openapi::common::ApiErrors,
    )
)]
async fn info(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<MediaPath>,
) -> ApiResult<Json<MediaObject>> {
    let MediaPath { id, media_id } = path.checked()?;
    state.sessions.get(&id)?;
    let record = state.media.describe(&id, &media_id).await?;
    Ok(Json(state.media.object(&record)))
}

/// Downloads a failed (or pending) media again.
#[utoipa::path(
    post,
    path = "/api/v1/sessions/{id}/media/{media_id}/retry",
    operation_id = "media_retry",
    tag = "media",
    summary = "Download a failed media again",
    description = "Downloads the media again through its session (which must be connected) and \
        answers its object: `stored`, or `502 media_download_failed` with the reason. A stored \
        media is answered as it is; an upload has nothing to download (`409`); a session that \
        is not connected is `409 session_not_connected` and the media keeps its state.",
    params(MediaPath),
    responses(
        (status = 200, body = MediaObject),
        crate::openapi::common::ApiErrors,
    )
)]
async fn retry(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<MediaPath>,
) -> ApiResult<Json<MediaObject>> {
    let MediaPath { id, media_id } = path.checked()?;
    let client = state.sessions.client(&id)?;
    let record = state.media.retry(&id, &media_id, Some(client)).await?;
    if record.state != MediaState::Stored {
        return Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "media_download_failed",
            format!(
                "the download of media `{media_id}` failed again: {}",
                record.error.as_deref().unwrap_or("no reason given")
            ),
        ));
    }
    Ok(Json(state.media.object(&record)))
}

/// Removes a media: its bytes and its record.
#[utoipa::path(
    delete,
    path = "/api/v1/sessions/{id}/media/{media_id}",
    operation_id = "media_delete",
    tag = "media",
    summary = "Delete a media",
    params(MediaPath),
    responses(
        (status = 200, body = SuccessMessage),
        crate::openapi::common::ApiErrors,
    )
)]
async fn delete(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<MediaPath>,
) -> ApiResult<Json<SuccessMessage>> {
    let MediaPath { id, media_id } = path.checked()?;
    state.sessions.get(&id)?;
    state.media.delete(&id, &media_id).await?;
    Ok(Json(SuccessMessage {
        success: true,
        message: format!("media `{media_id}` deleted"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_byte_range_is_read_in_each_of_its_forms() {
        assert_eq!(parse_range("bytes=0-9", 100), RangeAsk::Part(0..10));
        assert_eq!(parse_range("bytes=90-", 100), RangeAsk::Part(90..100));
        assert_eq!(parse_range("bytes=-10", 100), RangeAsk::Part(90..100));
        assert_eq!(parse_range("bytes=-500", 100), RangeAsk::Part(0..100));
        assert_eq!(parse_range("bytes=95-200", 100), RangeAsk::Part(95..100));
    }

    #[test]
    fn a_range_outside_the_media_is_unsatisfiable() {
        assert_eq!(parse_range("bytes=100-", 100), RangeAsk::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), RangeAsk::Unsatisfiable);
        assert_eq!(parse_range("bytes=100-105", 100), RangeAsk::Unsatisfiable);
        assert_eq!(parse_range("bytes=0-0", 0), RangeAsk::Unsatisfiable);
    }

    #[test]
    fn ranges_the_gateway_does_not_serve_give_the_whole_media() {
        for value in [
            "items=0-1",
            "bytes=0-1,5-6",
            "bytes=x-1",
            "bytes=5-1",
            "bytes=-",
            "bytes",
        ] {
            assert_eq!(parse_range(value, 100), RangeAsk::Whole, "{value}");
        }
    }

    #[test]
    fn a_file_name_outside_plain_ascii_is_percent_encoded() {
        assert_eq!(
            disposition(Some("a b.jpg"), true),
            "inline; filename=\"a b.jpg\""
        );
        assert_eq!(
            disposition(Some("bericht-ä.pdf"), false),
            "attachment; filename*=UTF-8''bericht-%C3%A4.pdf"
        );
        assert_eq!(disposition(None, true), "inline");
        assert_eq!(disposition(None, false), "attachment");
    }
}
