//! A real webhook receiver for end-to-end tests, and small helpers for the
//! gateway's webhook routes.
//!
//! [`TestReceiver`] is an HTTP server on `127.0.0.1:0` that records every
//! request (method, path, lowercased headers, raw body, arrival time) and
//! answers as told at run time. [`verify_v2`] checks an outbound signature
//! with its own HMAC-SHA256, independent of the gateway's signing code.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::sync::watch;

use crate::{TestServer, eventually};

/// How the receiver answers a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Respond {
    /// `200 OK`.
    Ok,
    /// This status, at once.
    Status(u16),
    /// No answer until the client gives up (or the receiver is dropped).
    Hang,
    /// This status after the pause.
    Slow(Duration, u16),
}

impl From<u16> for Respond {
    fn from(status: u16) -> Self {
        Respond::Status(status)
    }
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The path, e.g. `/hook`.
    pub path: String,
    /// The headers by lowercased name; repeated headers are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The raw body.
    pub body: Vec<u8>,
    /// When the request arrived.
    pub at: Instant,
    /// How many earlier requests were still unanswered when this one arrived.
    pub unanswered_before: usize,
}

impl Received {
    /// The body as JSON; panics when it is not JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the webhook body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// A header by (any-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// `X-Webhook-Event`, or `""`.
    pub fn event(&self) -> &str {
        self.header("x-webhook-event").unwrap_or_default()
    }

    /// `X-Webhook-Delivery-Id`, or `""`.
    pub fn delivery_id(&self) -> &str {
        self.header("x-webhook-delivery-id").unwrap_or_default()
    }
}

struct Book {
    default: Respond,
    /// When set, a request whose v2 signature does not verify with it is
    /// answered 401, as a receiver that checks signatures answers.
    secret: Option<String>,
    queue: VecDeque<Respond>,
    received: Vec<Received>,
    unanswered: usize,
}

struct Shared {
    book: Mutex<Book>,
    /// Set to true when the receiver is dropped: hanging requests then end.
    release: watch::Sender<bool>,
}

impl Shared {
    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Counts a request as answered once its handler ends (or is dropped).
struct Unanswered(Arc<Shared>);

impl Drop for Unanswered {
    fn drop(&mut self) {
        self.0.book().unanswered -= 1;
    }
}

/// A webhook receiver on `127.0.0.1:<port>`; stops when dropped.
pub struct TestReceiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl TestReceiver {
    /// Starts a receiver that answers `200 OK`.
    pub async fn start() -> TestReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("receiver binds");
        let addr = listener.local_addr().expect("receiver address");
        let shared = Arc::new(Shared {
            book: Mutex::new(Book {
                default: Respond::Ok,
                secret: None,
                queue: VecDeque::new(),
                received: Vec::new(),
                unanswered: 0,
            }),
            release: watch::Sender::new(false),
        });
        let app = Router::new().fallback(record).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestReceiver { addr, shared, task }
    }

    /// `http://127.0.0.1:<port>/hook`.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Answers every later request this way (after any queued one-shot answers).
    pub fn set(&self, respond: Respond) {
        self.shared.book().default = respond;
    }

    /// Answers 401 to every later request whose v2 signature does not verify
    /// with `secret` (unsigned ones too), as a receiver that checks
    /// signatures does; the others are answered as set.
    pub fn require_signature(&self, secret: &str) {
        self.shared.book().secret = Some(secret.to_owned());
    }

    /// Queues one-shot answers used in order before the default, e.g. `[500, 500, 200]`.
    pub fn push_answers<R: Into<Respond>>(&self, answers: impl IntoIterator<Item = R>) {
        self.shared
            .book()
            .queue
            .extend(answers.into_iter().map(Into::into));
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Received> {
        self.shared.book().received.clone()
    }

    /// How many requests arrived so far.
    pub fn count(&self) -> usize {
        self.shared.book().received.len()
    }

    /// Requests that arrived and have no answer yet (hanging or slow).
    pub fn unanswered(&self) -> usize {
        self.shared.book().unanswered
    }

    /// Waits until at least `n` requests arrived; returns all of them.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        eventually(&format!("{n} request(s) at {}", self.url()), || async {
            let got = self.requests();
            (got.len() >= n).then_some(got)
        })
        .await
    }

    /// Waits until a request matches `pred`; returns it.
    pub async fn wait_for_match(&self, what: &str, pred: impl Fn(&Received) -> bool) -> Received {
        eventually(&format!("{what} at {}", self.url()), || async {
            self.requests().into_iter().find(|r| pred(r))
        })
        .await
    }
}

impl Drop for TestReceiver {
    fn drop(&mut self) {
        self.shared.release.send_replace(true);
        self.task.abort();
    }
}

async fn record(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        names
            .entry(name.as_str().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let answer = {
        let mut book = shared.book();
        let unanswered_before = book.unanswered;
        book.unanswered += 1;
        let got = Received {
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            headers: names,
            body: body.to_vec(),
            at: Instant::now(),
            unanswered_before,
        };
        let forged = book
            .secret
            .as_deref()
            .is_some_and(|secret| !verify_v2(secret, &got));
        book.received.push(got);
        if forged {
            Respond::Status(401)
        } else {
            book.queue.pop_front().unwrap_or(book.default)
        }
    };
    let _answered = Unanswered(shared.clone());
    match answer {
        Respond::Ok => StatusCode::OK.into_response(),
        Respond::Status(s) => status(s),
        Respond::Slow(pause, s) => {
            // A slow receiver is what is being simulated: the pause is the
            // configured answer time, not a wait for anything.
            tokio::time::sleep(pause).await;
            status(s)
        }
        Respond::Hang => {
            let mut released = shared.release.subscribe();
            let _ = released.wait_for(|r| *r).await;
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}

fn status(code: u16) -> Response {
    StatusCode::from_u16(code)
        .expect("a valid status code")
        .into_response()
}

/// Checks a v2 signature the way a receiver would: `X-Webhook-Signature-Version: v2`,
/// a numeric `X-Webhook-Timestamp`, and `X-Webhook-Signature: sha256=<lowercase hex>`
/// equal to HMAC-SHA256(secret, `<timestamp>.<raw body>`). The clock-skew check
/// is left to the caller.
pub fn verify_v2(secret: &str, r: &Received) -> bool {
    let (Some(ts), Some(sig), Some(version)) = (
        r.header("x-webhook-timestamp"),
        r.header("x-webhook-signature"),
        r.header("x-webhook-signature-version"),
    ) else {
        return false;
    };
    if version != "v2" || ts.parse::<i64>().is_err() {
        return false;
    }
    let Some(hex_digest) = sig.strip_prefix("sha256=") else {
        return false;
    };
    if !hex_digest
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return false;
    }
    let Ok(digest) = hex::decode(hex_digest) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(ts.as_bytes());
    mac.update(b".");
    mac.update(&r.body);
    mac.verify_slice(&digest).is_ok()
}

/// `Duration::from_millis`.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Whether `s` has the 8-4-4-4-12 hex shape of a UUID.
pub fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Unix seconds now.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// Waits until the gateway has nothing pending for `url` (no delivery
/// ready, waiting for a retry or in flight). Called once a marker, an event
/// published after the one that must not arrive, has arrived: events are
/// published in order, so the one that must not arrive was planned (or
/// dropped) before the marker, and once nothing is pending every delivery
/// planned for the URL has been made. A count read after this is final.
pub async fn wait_until_idle(server: &TestServer, session: &str, url: &str) {
    wait_for_diagnostic(server, session, url, "nothing pending", |d| {
        d["pending"] == 0
    })
    .await;
}

/// `POST /api/v1/sessions/{session}/webhooks`, expecting 201; returns the body.
pub async fn add_webhook(server: &TestServer, session: &str, body: Value) -> Value {
    server
        .post(&format!("/api/v1/sessions/{session}/webhooks"), body)
        .await
        .expect(201)
}

/// Starts a receiver and registers it on `session` for `message` events.
pub async fn message_hook(server: &TestServer, session: &str) -> TestReceiver {
    let rx = TestReceiver::start().await;
    add_webhook(
        server,
        session,
        serde_json::json!({ "url": rx.url(), "events": ["message"] }),
    )
    .await;
    rx
}

/// Injects an inbound text from `15550001111` (a `message` event); returns its message id.
pub async fn inbound(server: &TestServer, session: &str, text: &str) -> String {
    let body = server
        .post(
            &format!("/api/v1/sim/sessions/{session}/inbound"),
            json!({ "from": "15550001111", "text": text }),
        )
        .await
        .expect(200);
    body["message_id"]
        .as_str()
        .expect("a message id")
        .to_owned()
}

/// The session's dead-letter entries, newest first.
pub async fn dlq(server: &TestServer, session: &str) -> Vec<Value> {
    let body = server
        .get(&format!("/api/v1/sessions/{session}/webhooks/dlq"))
        .await
        .expect(200);
    let entries = body["entries"].as_array().cloned().unwrap_or_else(|| {
        panic!("no entries array: {body}");
    });
    assert_eq!(body["count"], entries.len(), "count matches: {body}");
    entries
}

/// Waits until the session's DLQ holds at least `n` entries; returns them.
pub async fn wait_for_dlq(server: &TestServer, session: &str, n: usize) -> Vec<Value> {
    eventually(&format!("{n} dead-letter entries of {session}"), || async {
        let entries = dlq(server, session).await;
        (entries.len() >= n).then_some(entries)
    })
    .await
}

/// `diagnostics.webhooks` of the session's status.
pub async fn diagnostics(server: &TestServer, session: &str) -> Vec<Value> {
    let status = server
        .get(&format!("/api/v1/sessions/{session}/status"))
        .await
        .expect(200);
    status["diagnostics"]["webhooks"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("no diagnostics.webhooks array: {status}"))
}

/// The diagnostics entry of one URL; panics when there is none.
pub async fn diagnostic(server: &TestServer, session: &str, url: &str) -> Value {
    let all = diagnostics(server, session).await;
    all.iter()
        .find(|d| d["url"] == url)
        .cloned()
        .unwrap_or_else(|| panic!("no diagnostics for {url}: {all:?}"))
}

/// Waits until the diagnostics entry of `url` satisfies `pred`; returns it.
pub async fn wait_for_diagnostic(
    server: &TestServer,
    session: &str,
    url: &str,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    eventually(&format!("diagnostics of {url}: {what}"), || async {
        let d = diagnostic(server, session, url).await;
        pred(&d).then_some(d)
    })
    .await
}
