//! Extractors whose rejections are API errors: a JSON body (415 without a
//! JSON content type, 413 over the body limit, 400 naming the field that does
//! not fit), a raw body (413 over the body limit), query strings and path
//! segments.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::{Number, Value};

use super::error::ApiError;

/// A JSON request body.
pub struct ApiJson<T>(pub T);

/// A raw request body, such as a plugin component's bytes.
pub struct ApiBytes(pub Bytes);

/// A JSON request body that may be absent: an empty body, or the JSON
/// `null` the document's optional body allows, is `T::default()`.
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

/// The body limit a route applies, for the `413` answer to name: set as a
/// request extension beside the `DefaultBodyLimit` that enforces it.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit {
    /// The limit in bytes.
    pub bytes: usize,
    /// What it is, as the answer says it (`the JSON body limit
    /// (--max-body-bytes)`).
    pub name: &'static str,
    /// Where a larger payload goes instead, if anywhere.
    pub instead: &'static str,
}

fn too_large(limit: Option<BodyLimit>) -> ApiError {
    let message = match limit {
        Some(l) => format!(
            "the request body is larger than {} bytes, {}{}",
            l.bytes, l.name, l.instead
        ),
        None => "the request body is larger than the gateway accepts".to_owned(),
    };
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message)
}

async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    let limit = req.extensions().get::<BodyLimit>().copied();
    // A body that says it is too large is refused before a byte of it is
    // read (the limit would otherwise be met only after reading that much).
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let (Some(l), Some(n)) = (limit, declared)
        && n > l.bytes as u64
    {
        return Err(too_large(limit));
    }
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large(limit)
        } else {
            ApiError::bad_request("unreadable_body", rejection.body_text())
        }
    })
}

/// Parses JSON, naming the path of the field that does not fit. A whole
/// number written with a fraction (`2.0`) where an integer is expected is
/// that integer, as JSON Schema (and so the API document) counts it: clients
/// whose JSON writer prints numbers as floats are not refused for it. Only
/// the fields that want an integer are rewritten; a float passed through
/// untyped (a location's accuracy) stays as it was written.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
    })?;
    // Each retry rewrites one more number; a body cannot hold more integer
    // fields than numbers, and the bound keeps a pathological one cheap.
    for _ in 0..MAX_INTEGER_REWRITES {
        match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(parsed) => return Ok(parsed),
            Err(err) if wants_integer(err.inner()) && integer_at(&mut value, err.path()) => {}
            Err(err) => return Err(field_error(err)),
        }
    }
    serde_path_to_error::deserialize(&value).map_err(field_error)
}

/// How many whole floats one body may have rewritten as integers.
const MAX_INTEGER_REWRITES: usize = 64;

/// Whether serde refused a float where it wanted an integer.
fn wants_integer(err: &serde_json::Error) -> bool {
    let message = err.to_string();
    let Some(expected) = message
        .strip_prefix("invalid type: floating point `")
        .and_then(|rest| rest.split_once("`, expected ").map(|(_, e)| e))
    else {
        return false;
    };
    let expected = expected.split(" at line ").next().unwrap_or(expected);
    expected.contains("integer")
        || ["i", "u"].iter().any(|sign| {
            expected
                .strip_prefix(sign)
                .is_some_and(|bits| bits == "size" || bits.parse::<u8>().is_ok())
        })
}

/// Rewrites the number at `path` as the integer it equals, if it is a whole
/// float an `f64` holds exactly (below 2^53 in magnitude); whether it did.
fn integer_at(value: &mut Value, path: &serde_path_to_error::Path) -> bool {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    let mut at = value;
    for segment in path.iter() {
        at = match (segment, at) {
            (serde_path_to_error::Segment::Map { key }, Value::Object(map)) => {
                match map.get_mut(key) {
                    Some(next) => next,
                    None => return false,
                }
            }
            (serde_path_to_error::Segment::Seq { index }, Value::Array(items)) => {
                match items.get_mut(*index) {
                    Some(next) => next,
                    None => return false,
                }
            }
            _ => return false,
        };
    }
    let Value::Number(n) = at else {
        return false;
    };
    let Some(f) = n.as_f64().filter(|_| n.is_f64()) else {
        return false;
    };
    if f.fract() != 0.0 || f.abs() >= EXACT {
        return false;
    }
    // Exact by the bound above; -0.0 becomes 0.
    *n = if f >= 0.0 {
        Number::from(f as u64)
    } else {
        Number::from(f as i64)
    };
    true
}

/// The API error for a body that does not fit: the field it names, or the
/// body as a whole.
fn field_error(err: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = err.path().to_string();
    let inner = err.into_inner();
    if let Some(field) = missing_field(&inner.to_string()) {
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

impl<S: Send + Sync> FromRequest<S> for ApiBytes {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        body_bytes(req, state).await.map(ApiBytes)
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
        if bytes.trim_ascii() == b"null" {
            return Ok(MaybeJson(T::default()));
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

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    struct Counts {
        n: i32,
        list: Vec<u64>,
        ratio: f64,
    }

    #[test]
    fn whole_floats_are_accepted_where_integers_are_expected() {
        let c: Counts = parse_json(br#"{"n": -113.0, "list": [2.0, 0, -0.0], "ratio": 1.0}"#)
            .expect("whole floats are integers");
        assert_eq!(c.n, -113);
        assert_eq!(c.list, vec![2, 0, 0]);
        assert_eq!(c.ratio, 1.0);
    }

    #[derive(Debug, Deserialize)]
    struct Passthrough {
        n: u32,
        data: Value,
    }

    #[test]
    fn a_whole_float_passed_through_untyped_stays_a_float() {
        let p: Passthrough = parse_json(br#"{"n": 3.0, "data": {"accuracy": 5.0}}"#).unwrap();
        assert_eq!(p.n, 3);
        assert!(p.data["accuracy"].is_f64(), "{}", p.data);
    }

    #[test]
    fn a_fraction_is_still_refused_where_an_integer_is_expected() {
        let err = parse_json::<Counts>(br#"{"n": 2.5, "list": [], "ratio": 1}"#).unwrap_err();
        assert_eq!(err.code, "invalid_field");
        let err = parse_json::<Counts>(br#"{"n": 1, "list": [1e300], "ratio": 1}"#).unwrap_err();
        assert_eq!(err.code, "invalid_field");
    }

    #[test]
    fn malformed_json_is_named_as_such() {
        let err = parse_json::<Counts>(br#"{"n": 1,"#).unwrap_err();
        assert_eq!(err.code, "malformed_json");
    }
}
