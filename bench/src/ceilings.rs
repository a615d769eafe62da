//! The raw ceilings, measured in the same run as the gateway: an axum
//! hello-world behind the same bearer-token check the gateway's `/api/v1`
//! uses, and signed 1 KB POSTs straight to the benchmark's receiver.

use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use http_body_util::Full;
use subtle::ConstantTimeEq;
use switchboard::webhooks::signing::{
    DELIVERY_ID_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, VERSION_HEADER, sign_v2,
};

use crate::load::{Http, LoadResult, closed_loop};
use crate::receiver::Receiver;

/// Starts the hello-world on `127.0.0.1:0` (on the current runtime); its base URL.
pub async fn hello_world(token: &'static str) -> anyhow::Result<String> {
    let app = Router::new()
        .route("/api/v1/hello", get(|| async { "hello, world" }))
        .layer(middleware::from_fn_with_state(token, require_token));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{addr}"))
}

/// The gateway's check: `Authorization: Bearer <token>`, compared in constant time.
async fn require_token(State(token): State<&'static str>, req: Request, next: Next) -> Response {
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    match presented {
        Some(t) if t.len() == token.len() && bool::from(t.as_bytes().ct_eq(token.as_bytes())) => {
            next.run(req).await
        }
        _ => (StatusCode::UNAUTHORIZED, "unauthorized").into_response(),
    }
}

/// Closed-loop GETs of the hello-world.
pub async fn hello_load(
    http: &Http,
    base: &str,
    token: &str,
    concurrency: usize,
    duration: Duration,
) -> LoadResult {
    let uri: hyper::Uri = format!("{base}/api/v1/hello").parse().expect("uri");
    let auth = format!("Bearer {token}");
    closed_loop(http, concurrency, duration, StatusCode::OK, move |_| {
        hyper::Request::get(uri.clone())
            .header(header::AUTHORIZATION, &auth)
            .body(Full::new(Bytes::new()))
            .expect("request")
    })
    .await
}

/// A ~1 KB envelope shaped like a `message` event.
pub fn envelope_1kb(n: u64) -> Bytes {
    let filler = "lorem ipsum dolor sit amet ".repeat(30);
    Bytes::from(format!(
        r#"{{"session_id":"bench","event":"message","timestamp":1700000000,"data":{{"message_id":"RAW-{n}","from":"15550001111@s.whatsapp.net","chat":"15550001111@s.whatsapp.net","push_name":"Bench","message_type":"text","text":"{filler}","is_group":false,"from_me":false,"timestamp":1700000000}}}}"#
    ))
}

/// Closed-loop signed POSTs of a 1 KB envelope to `receiver`, signed per
/// request as the gateway signs deliveries.
pub async fn raw_signed_posts(
    http: &Http,
    receiver: &Receiver,
    concurrency: usize,
    duration: Duration,
) -> LoadResult {
    let uri: hyper::Uri = receiver.url().parse().expect("uri");
    let body = envelope_1kb(0);
    closed_loop(http, concurrency, duration, StatusCode::OK, move |i| {
        let ts = switchboard::domain::time::unix_now();
        hyper::Request::post(uri.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(EVENT_HEADER, "message")
            .header(DELIVERY_ID_HEADER, format!("raw-{i}"))
            .header(TIMESTAMP_HEADER, ts.to_string())
            .header(SIGNATURE_HEADER, sign_v2(b"bench-secret", ts, &body))
            .header(VERSION_HEADER, "v2")
            .body(Full::new(body.clone()))
            .expect("request")
    })
    .await
}
