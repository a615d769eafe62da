//! Serving a router on a listener, bounded against clients that hold
//! connections open: a request's head must arrive within the header-read
//! timeout and fit the header size limit (else `431`), a body must keep
//! coming (the body-read timeout, between two of its chunks), a connection on
//! which nothing moves is closed (the idle timeout), and at most
//! `max_connections` are served at once: one more is answered `503
//! too_many_connections` and closed. A stop lets the answers in flight finish
//! (event streams end on their own token) and closes idle connections at
//! once.
//!
//! HTTP/1.1 on hyper's connection builder (as `axum::serve` does, with the
//! timer it leaves out, so hyper's header-read timeout takes effect). There
//! is no timeout on a whole request: event streams, and sends that wait on
//! the network, are long by design; what bounds a connection is that bytes
//! keep moving, or a handler is at work.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;
use tower_http::timeout::RequestBodyTimeoutLayer;

/// The bounds of every HTTP connection the gateway serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Longest a client may take to send a request's head (request line and
    /// headers), counted from when the server starts waiting for it: when
    /// the connection opens, or on a keep-alive connection when the previous
    /// answer was written (so a keep-alive connection idle this long is
    /// closed too). Past it the connection is closed.
    pub header_read_timeout: Duration,
    /// Longest pause while a request body is read (between two of its
    /// chunks, so a large upload on a slow link is not cut): past it the
    /// read fails and the request is answered with an error.
    pub body_read_timeout: Duration,
    /// A connection on which no byte moves either way for this long, with
    /// no request being handled, is closed: after the answer being written,
    /// if any, and if that answer moves nothing for another such period (a
    /// client that stopped reading), at once.
    pub idle_timeout: Duration,
    /// Largest request head (request line and headers) in bytes; a larger
    /// one is answered `431`. At least 8 KiB (hyper's smallest buffer).
    pub max_header_bytes: usize,
    /// Most connections served at once; one more is answered `503
    /// too_many_connections` and closed.
    pub max_connections: usize,
}

/// The smallest header limit hyper takes.
pub const MIN_HEADER_BYTES: usize = 8 * 1024;

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_header_bytes: 64 * 1024,
            max_connections: 512,
        }
    }
}

/// Serves `router` on `listener` within `limits` until `stop` is cancelled;
/// then stops accepting, lets the answers in flight finish and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let router = router.layer(RequestBodyTimeoutLayer::new(limits.body_read_timeout));
    let limits = Arc::new(limits);
    let served = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Refusals are cheap but not free: as many as the cap at once, and
    // past that a connection is closed without an answer.
    let refusing = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let connections = TaskTracker::new();
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before
                    // it was accepted: the listener itself is fine.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(100)) => continue,
                        _ = stop.cancelled() => break,
                    }
                }
            },
            _ = stop.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        match served.clone().try_acquire_owned() {
            Ok(permit) => {
                let (router, limits, stop) = (router.clone(), limits.clone(), stop.clone());
                connections.spawn(async move {
                    serve_connection(stream, router, &limits, stop).await;
                    drop(permit);
                });
            }
            Err(_) => {
                if let Ok(permit) = refusing.clone().try_acquire_owned() {
                    let limits = limits.clone();
                    connections.spawn(async move {
                        refuse_connection(stream, &limits).await;
                        drop(permit);
                    });
                }
            }
        }
    }
    drop(listener);
    connections.close();
    connections.wait().await;
    Ok(())
}

/// The HTTP/1.1 builder every connection is served with.
fn builder(limits: &HttpLimits) -> hyper::server::conn::http1::Builder {
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(MIN_HEADER_BYTES))
        .keep_alive(true);
    b
}

/// Serves one connection until it closes, goes idle past the idle timeout,
/// or the server stops (then after its answer in flight).
async fn serve_connection(
    stream: TcpStream,
    router: Router,
    limits: &HttpLimits,
    stop: CancellationToken,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Metered {
        inner: stream,
        activity: activity.clone(),
    });
    let handling = activity.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let router = router.clone();
        let handling = handling.clone();
        async move {
            let _busy = Handling::enter(&handling);
            router.oneshot(req.map(Body::new)).await
        }
    });
    let conn = builder(limits)
        .serve_connection(io, service)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let mut closing = false;
    let mut idle_warned = false;
    let mut check_at = Instant::now() + limits.idle_timeout;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "HTTP connection ended with an error");
                }
                return;
            }
            _ = stop.cancelled(), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            _ = tokio::time::sleep_until(check_at) => {
                let quiet = activity.quiet_for();
                if quiet < limits.idle_timeout || activity.handling() {
                    // Something moved, or a handler is still at work (a
                    // send waiting on the network moves no byte meanwhile).
                    idle_warned = false;
                    check_at = Instant::now() + limits.idle_timeout.saturating_sub(quiet).max(Duration::from_millis(1));
                } else if !idle_warned {
                    // Idle: closed now if no answer is being written, else
                    // after it.
                    idle_warned = true;
                    closing = true;
                    conn.as_mut().graceful_shutdown();
                    check_at = Instant::now() + limits.idle_timeout;
                } else {
                    // An answer that moved nothing for another period: the
                    // client stopped reading.
                    tracing::debug!("closing an HTTP connection whose client stopped reading");
                    return;
                }
            }
        }
    }
}

/// Answers every request of one connection over the cap `503` and closes it.
async fn refuse_connection(stream: TcpStream, limits: &HttpLimits) {
    let max = limits.max_connections;
    let service = hyper::service::service_fn(move |_req: Request<Incoming>| async move {
        Ok::<_, Infallible>(too_many_connections(max))
    });
    let mut b = builder(limits);
    b.keep_alive(false);
    let conn = b.serve_connection(TokioIo::new(stream), service);
    // A client that sends nothing is bounded by the header-read timeout.
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "refused HTTP connection ended with an error");
    }
}

/// The answer of a connection over the cap.
fn too_many_connections(max: usize) -> Response<Body> {
    let body = serde_json::json!({
        "success": false,
        "error": {
            "code": "too_many_connections",
            "message": format!(
                "the gateway is serving its most connections at once ({max}, --http-max-connections); retry shortly, or reuse a connection"
            ),
        }
    });
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// What one connection did last: when a byte last moved, and how many of its
/// requests are being handled (a handler at work moves no byte).
struct Activity {
    opened: Instant,
    /// Milliseconds from `opened` to the last byte read or written.
    moved_ms: AtomicU64,
    handling: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Self {
            opened: Instant::now(),
            moved_ms: AtomicU64::new(0),
            handling: AtomicUsize::new(0),
        }
    }

    fn moved(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.moved_ms.store(ms, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let last = Duration::from_millis(self.moved_ms.load(Ordering::Relaxed));
        self.opened.elapsed().saturating_sub(last)
    }

    fn handling(&self) -> bool {
        self.handling.load(Ordering::Relaxed) > 0
    }
}

/// A request being handled, until its handler answered (or was dropped).
struct Handling(Arc<Activity>);

impl Handling {
    fn enter(activity: &Arc<Activity>) -> Self {
        activity.handling.fetch_add(1, Ordering::Relaxed);
        Self(activity.clone())
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.handling.fetch_sub(1, Ordering::Relaxed);
        // The answer's head is ready: the quiet period starts now.
        self.0.moved();
    }
}

/// A stream that notes each byte moved in its connection's [`Activity`].
struct Metered {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Metered {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.moved();
        }
        polled
    }
}

impl AsyncWrite for Metered {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.moved();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.moved();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
