//! P3, the REST API under concurrent closed-loop load: a read (session
//! status) and a write (a text send on the sim, which stores the outbox
//! entry and the message record before answering).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{StatusCode, header};

use crate::gateway::{Gateway, TOKEN};
use crate::load::{Http, LoadResult, closed_loop};

/// The session P3 runs on.
pub const SESSION: &str = "p3";

/// Closed-loop `GET /sessions/p3/status`.
pub async fn reads(
    gw: &Gateway,
    http: &Http,
    concurrency: usize,
    duration: Duration,
) -> LoadResult {
    let uri: hyper::Uri = format!("{}/api/v1/sessions/{SESSION}/status", gw.base())
        .parse()
        .expect("uri");
    let auth = format!("Bearer {TOKEN}");
    closed_loop(http, concurrency, duration, StatusCode::OK, move |_| {
        hyper::Request::get(uri.clone())
            .header(header::AUTHORIZATION, &auth)
            .body(Full::new(Bytes::new()))
            .expect("request")
    })
    .await
}

/// Closed-loop `POST /sessions/p3/messages/text`.
pub async fn writes(
    gw: &Gateway,
    http: &Http,
    concurrency: usize,
    duration: Duration,
) -> LoadResult {
    let uri: hyper::Uri = format!("{}/api/v1/sessions/{SESSION}/messages/text", gw.base())
        .parse()
        .expect("uri");
    let auth = format!("Bearer {TOKEN}");
    closed_loop(http, concurrency, duration, StatusCode::OK, move |i| {
        let body = format!(
            r#"{{"to":"4915{:07}","text":"bench send {i}"}}"#,
            i % 10_000_000
        );
        hyper::Request::post(uri.clone())
            .header(header::AUTHORIZATION, &auth)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .expect("request")
    })
    .await
}
