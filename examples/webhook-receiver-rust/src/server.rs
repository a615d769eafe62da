//! The HTTP side: an axum router that verifies each delivery, deduplicates on
//! `X-Webhook-Delivery-Id` and hands accepted events to a callback.
//!
//! Answers: 200 accepted (also for a duplicate, which is not processed again),
//! 400 stale timestamp or malformed request, 401 bad or missing signature,
//! 500 when the callback fails (Switchboard will retry).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;

use crate::{DEFAULT_TOLERANCE_SECS, HeaderLookup, RecentIds, headers, unix_now, verify};

/// One accepted delivery, as passed to the event callback.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// `X-Webhook-Delivery-Id`.
    pub delivery_id: String,
    /// The envelope's `event` (falls back to `X-Webhook-Event`).
    pub event: String,
    /// The envelope's `session_id`.
    pub session_id: String,
    /// The whole JSON envelope.
    pub envelope: serde_json::Value,
}

/// What the receiver does with an accepted delivery. An `Err` answers 500
/// and forgets the delivery id, so Switchboard's retry is processed.
pub type EventHandler = Arc<dyn Fn(&Delivery) -> Result<(), String> + Send + Sync>;

/// The receiver's settings.
#[derive(Clone)]
pub struct Config {
    /// The webhook's secret (the HMAC key).
    pub secret: Vec<u8>,
    /// The largest accepted clock difference, in seconds.
    pub tolerance_secs: i64,
    /// Accept legacy body-only signatures (no replay protection).
    pub allow_legacy: bool,
    /// Called once per accepted, not yet seen delivery. Keep it fast: Switchboard
    /// waits 5 s at most; queue real work elsewhere.
    pub on_event: EventHandler,
}

impl Config {
    /// Settings with the default tolerance, legacy refused, and a handler that
    /// prints `event session_id delivery_id` to stdout.
    pub fn new(secret: impl Into<Vec<u8>>) -> Self {
        Self {
            secret: secret.into(),
            tolerance_secs: DEFAULT_TOLERANCE_SECS,
            allow_legacy: false,
            on_event: Arc::new(print_event),
        }
    }
}

/// The default event handler: one line per accepted event.
pub fn print_event(d: &Delivery) -> Result<(), String> {
    println!("{} {} {}", d.event, d.session_id, d.delivery_id);
    Ok(())
}

struct Shared {
    config: Config,
    recent: Mutex<RecentIds>,
}

/// The receiver: POST on any path. Other methods get 405.
pub fn router(config: Config) -> Router {
    let shared = Arc::new(Shared {
        config,
        recent: Mutex::new(RecentIds::default()),
    });
    Router::new()
        .route("/", post(receive))
        .route("/{*path}", post(receive))
        .with_state(shared)
}

/// Log a refusal to stderr and answer with its status.
fn reject(status: StatusCode, reason: &str) -> (StatusCode, String) {
    eprintln!("receiver: rejected ({}): {reason}", status.as_u16());
    (status, format!("{reason}\n"))
}

async fn receive(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    // The raw bytes: the signature covers these, not re-encoded JSON.
    body: Bytes,
) -> (StatusCode, String) {
    let cfg = &shared.config;
    if let Err(e) = verify(
        &cfg.secret,
        &headers,
        &body,
        unix_now(),
        cfg.tolerance_secs,
        cfg.allow_legacy,
    ) {
        return reject(e.status(), &e.to_string());
    }

    let Some(delivery_id) = headers
        .header(headers::DELIVERY_ID)
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        return reject(StatusCode::BAD_REQUEST, "missing X-Webhook-Delivery-Id");
    };
    let envelope: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => return reject(StatusCode::BAD_REQUEST, "body is not a JSON object"),
    };
    let text = |key: &str| {
        envelope
            .get(key)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let delivery = Delivery {
        delivery_id: delivery_id.to_owned(),
        event: text("event")
            .or_else(|| headers.header(headers::EVENT).map(str::to_owned))
            .unwrap_or_default(),
        session_id: text("session_id").unwrap_or_default(),
        envelope,
    };

    // Only after the signature checks out: otherwise anyone could fill the set
    // with ids and make us drop real deliveries.
    let fresh = lock(&shared.recent).insert(delivery_id);
    if !fresh {
        eprintln!("receiver: duplicate delivery {delivery_id}: already processed");
        return (StatusCode::OK, "duplicate\n".into());
    }
    if let Err(e) = (cfg.on_event)(&delivery) {
        lock(&shared.recent).remove(delivery_id);
        eprintln!("receiver: handler failed for {delivery_id}: {e}");
        return (StatusCode::INTERNAL_SERVER_ERROR, "handler failed\n".into());
    }
    (StatusCode::OK, "ok\n".into())
}

/// The set stays usable even if a handler panicked while it was locked.
fn lock(m: &Mutex<RecentIds>) -> std::sync::MutexGuard<'_, RecentIds> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{sign_legacy, sign_v2};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    const SECRET: &[u8] = b"s3cret";
    const BODY: &str = r#"{"session_id":"s1","event":"message","timestamp":1795313840,"data":{"text":"hi"},"offline":false}"#;

    type Seen = Arc<Mutex<Vec<(String, String)>>>;

    /// Start the real server on 127.0.0.1:0; returns its address and the
    /// (event, delivery id) pairs it processed.
    async fn start() -> (std::net::SocketAddr, Seen) {
        let seen: Seen = Arc::default();
        let sink = seen.clone();
        let mut config = Config::new(SECRET);
        config.on_event = Arc::new(move |d: &Delivery| {
            sink.lock()
                .unwrap()
                .push((d.event.clone(), d.delivery_id.clone()));
            Ok(())
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router(config)).await });
        (addr, seen)
    }

    /// POST by hand over HTTP/1.1 (no client dependency); returns the status.
    async fn post(addr: std::net::SocketAddr, headers: &[(&str, String)], body: &str) -> u16 {
        let mut req = format!(
            "POST /hooks/switchboard HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(req.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap()
    }

    fn v2(ts: i64, secret: &[u8], body: &str, id: &str) -> Vec<(&'static str, String)> {
        vec![
            ("Content-Type", "application/json".into()),
            ("X-Webhook-Event", "message".into()),
            ("X-Webhook-Delivery-Id", id.into()),
            ("X-Webhook-Timestamp", ts.to_string()),
            ("X-Webhook-Signature", sign_v2(secret, ts, body.as_bytes())),
            ("X-Webhook-Signature-Version", "v2".into()),
        ]
    }

    #[tokio::test]
    async fn duplicate_delivery_is_answered_200_and_processed_once() {
        let (addr, seen) = start().await;
        for _ in 0..3 {
            // the first delivery and two retries
            assert_eq!(
                post(addr, &v2(unix_now(), SECRET, BODY, "dup-1"), BODY).await,
                200
            );
        }
        assert_eq!(*seen.lock().unwrap(), [("message".into(), "dup-1".into())]);
    }

    #[tokio::test]
    async fn distinct_deliveries_are_each_processed() {
        let (addr, seen) = start().await;
        for id in ["a", "b"] {
            assert_eq!(
                post(addr, &v2(unix_now(), SECRET, BODY, id), BODY).await,
                200
            );
        }
        let ids: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|(_, id)| id.clone())
            .collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[tokio::test]
    async fn status_codes() {
        let (addr, seen) = start().await;
        let now = unix_now();
        let tampered = BODY.replace("hi", "ho");
        assert_eq!(
            post(addr, &v2(now, SECRET, BODY, "x"), &tampered).await,
            401
        );
        assert_eq!(post(addr, &v2(now, b"wrong", BODY, "x"), BODY).await, 401);
        assert_eq!(
            post(addr, &v2(now - 3600, SECRET, BODY, "x"), BODY).await,
            400
        );
        assert_eq!(
            post(addr, &v2(now + 3600, SECRET, BODY, "x"), BODY).await,
            400
        );
        let legacy = [
            ("X-Webhook-Delivery-Id", "x".to_owned()),
            ("X-Webhook-Signature", sign_legacy(SECRET, BODY.as_bytes())),
        ];
        assert_eq!(post(addr, &legacy, BODY).await, 401);
        assert_eq!(post(addr, &[], BODY).await, 401);
        let mut no_id = v2(now, SECRET, BODY, "x");
        no_id.retain(|(k, _)| *k != "X-Webhook-Delivery-Id");
        assert_eq!(post(addr, &no_id, BODY).await, 400);
        assert_eq!(post(addr, &v2(now, SECRET, "[1]", "x"), "[1]").await, 400);
        assert!(seen.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_rejected_delivery_does_not_consume_its_id() {
        let (addr, seen) = start().await;
        assert_eq!(
            post(addr, &v2(unix_now(), b"wrong", BODY, "z"), BODY).await,
            401
        );
        assert_eq!(
            post(addr, &v2(unix_now(), SECRET, BODY, "z"), BODY).await,
            200
        );
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}
