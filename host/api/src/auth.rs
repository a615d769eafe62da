//! Bearer-token authentication of every `/api/v1` route, compared in constant time.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use subtle::ConstantTimeEq;

use super::AppState;
use super::error::ApiError;

/// Lets the request through only with `Authorization: Bearer <API_TOKEN>`.
pub async fn require_token(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let Some(value) = header else {
        return Err(ApiError::unauthorized(
            "missing token: send `Authorization: Bearer <API_TOKEN>`",
        ));
    };
    let presented = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => {
            return Err(ApiError::unauthorized(
                "the Authorization header must use the Bearer scheme",
            ));
        }
    };
    let expected = state.token.as_bytes();
    if presented.len() != expected.len() || !bool::from(presented.as_bytes().ct_eq(expected)) {
        return Err(ApiError::unauthorized(
            "the bearer token is not valid for this gateway",
        ));
    }
    Ok(next.run(req).await)
}
