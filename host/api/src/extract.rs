//! Extractors whose rejections are API errors: a JSON body (415 without a
//! JSON content type, 413 over the body limit, 400 naming the field that does
//! not fit), query strings and path segments.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A JSON request body.
pub struct ApiJson<T>(pub T);

/// A JSON request body that may be absent: an empty body is `T::default()`.
pub struct MaybeJson<T>(pub T);

fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
        .unwrap_or(false)
}

async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the gateway accepts (see --max-body-bytes)",
            )
        } else {
            ApiError::bad_request("unreadable_body", rejection.body_text())
        }
    })
}

/// Parses JSON, naming the path of the field that does not fit.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::bad_request(
                "malformed_json",
                format!("the body is not valid JSON: {inner}"),
            )
        } else if let Some(field) = missing_field(&inner.to_string()) {
            let full = if path == "." || path.is_empty() {
                field
            } else {
                format!("{path}.{field}")
            };
            ApiError::invalid_field(&full, "is required")
        } else if path == "." || path.is_empty() {
            ApiError::bad_request(
                "invalid_body",
                format!("the body does not fit this endpoint: {inner}"),
            )
        } else {
            ApiError::invalid_field(
                &path,
                format!("is invalid: {}", without_position(&inner.to_string())),
            )
        }
    })
}

/// The field named by serde's "missing field `x`" error.
fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split_once('`').map(|(field, _)| field.to_owned())
}

/// Drops serde_json's trailing ` at line N column M`: the field path says where.
fn without_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => &message[..i],
        _ => message,
    }
}

fn unsupported_media_type() -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "send the body as JSON with `Content-Type: application/json`",
    )
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let json = is_json(&req);
        let bytes = body_bytes(req, state).await?;
        if !json {
            return Err(unsupported_media_type());
        }
        parse_json(&bytes).map(ApiJson)
    }
}

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for MaybeJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let json = is_json(&req);
        let bytes = body_bytes(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(MaybeJson(T::default()));
        }
        if !json {
            return Err(unsupported_media_type());
        }
        parse_json(&bytes).map(MaybeJson)
    }
}

/// A query string.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| ApiQuery(q.0))
            .map_err(|r| ApiError::bad_request("invalid_query", r.body_text()))
    }
}

/// Path parameters.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| ApiPath(p.0))
            .map_err(|r| ApiError::bad_request("invalid_path", r.body_text()))
    }
}

/// `limit`/`offset` paging: limit defaults to 100 and is clamped to 1..=1000.
#[derive(Debug, Clone, Copy, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// Page size.
    pub limit: Option<i64>,
    /// Rows to skip.
    pub offset: Option<i64>,
}

impl Paging {
    /// The clamped `(limit, offset)`.
    pub fn resolve(self) -> (usize, usize) {
        let limit = self.limit.unwrap_or(100).clamp(1, 1000) as usize;
        let offset = self.offset.unwrap_or(0).max(0) as usize;
        (limit, offset)
    }
}
