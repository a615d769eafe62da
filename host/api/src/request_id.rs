//! Request ids: every request gets one — the caller's `x-request-id` when it
//! is sensible (1 to 128 visible ASCII characters), a fresh UUID otherwise —
//! echoed in the response's `x-request-id` and carried by a `request` span,
//! so every log line written while serving the request names it.

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

/// The request id header.
pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest incoming request id that is kept.
const MAX_LEN: usize = 128;

/// Whether a caller's request id is kept as is.
fn acceptable(id: &str) -> bool {
    (1..=MAX_LEN).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic())
}

/// Assigns the request id, runs the request inside its span and echoes it.
pub async fn assign(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| acceptable(v))
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    // Visible ASCII only, so always a valid header value.
    let value = HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
    req.headers_mut().insert(REQUEST_ID.clone(), value.clone());
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let span =
        tracing::info_span!("request", request_id = %id, method = %req.method(), route = %route);
    let started = std::time::Instant::now();
    let mut response = next.run(req).instrument(span.clone()).await;
    span.in_scope(|| {
        tracing::debug!(
            status = response.status().as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            "request finished"
        )
    });
    response.headers_mut().insert(REQUEST_ID.clone(), value);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sensible_caller_id_is_kept_and_an_odd_one_replaced() {
        assert!(acceptable("req-42.abc:7"));
        assert!(acceptable(&"a".repeat(128)));
        assert!(!acceptable(""));
        assert!(!acceptable(&"a".repeat(129)));
        assert!(!acceptable("has space"));
        assert!(!acceptable("newline\n"));
    }
}
