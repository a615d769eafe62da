//! The webhook receiver every delivery goes to, gateway's and raw alike: a
//! bare hyper HTTP/1.1 server on `127.0.0.1:0` that answers `200` at once,
//! counts requests and stamps the arrival of each `BENCH-<n>` message id.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Message ids the receiver can stamp: `BENCH-0` … `BENCH-<SLOTS - 1>`.
/// Ids are never reused within a run (the gateway deduplicates them), and
/// P1's six configurations at in-process rates need well over a million;
/// the stamps take 32 MB.
pub const SLOTS: usize = 1 << 22;

/// The marker the receiver looks for in a body.
const MARKER: &[u8] = b"\"message_id\":\"BENCH-";

struct Shared {
    base: Instant,
    count: AtomicU64,
    /// Nanoseconds after `base` + 1 when message `n` arrived; 0 when not yet.
    arrivals: Vec<AtomicU64>,
}

/// A running receiver; stops with the runtime.
#[derive(Clone)]
pub struct Receiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Receiver {
    /// Starts a receiver on `127.0.0.1:0` (on the current runtime).
    pub async fn start() -> anyhow::Result<Receiver> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            base: Instant::now(),
            count: AtomicU64::new(0),
            arrivals: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        });
        let s = shared.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let s = s.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(s.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Receiver { addr, shared })
    }

    /// `http://127.0.0.1:<port>/hook`.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Requests received so far.
    pub fn count(&self) -> u64 {
        self.shared.count.load(Ordering::Relaxed)
    }

    /// When message `BENCH-<n>` arrived, if it did.
    pub fn arrival(&self, n: usize) -> Option<Instant> {
        let v = self.shared.arrivals.get(n)?.load(Ordering::Relaxed);
        (v > 0).then(|| self.shared.base + Duration::from_nanos(v - 1))
    }

    /// Waits until `count()` reaches `n` or `patience` passes; whether it did.
    pub async fn wait_for(&self, n: u64, patience: Duration) -> bool {
        let deadline = Instant::now() + patience;
        while self.count() < n {
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        true
    }
}

async fn handle(
    s: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let at = s.base.elapsed().as_nanos() as u64 + 1;
    if let Some(n) = bench_id(&body)
        && let Some(slot) = s.arrivals.get(n)
    {
        slot.store(at, Ordering::Relaxed);
    }
    s.count.fetch_add(1, Ordering::Relaxed);
    Ok(Response::new(Full::new(Bytes::from_static(b"ok"))))
}

/// The `n` of the first `"message_id":"BENCH-<n>"` in a body.
fn bench_id(body: &[u8]) -> Option<usize> {
    let at = body.windows(MARKER.len()).position(|w| w == MARKER)? + MARKER.len();
    let digits = body[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&body[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::bench_id;

    #[test]
    fn the_bench_id_is_read_from_the_message_id() {
        let body = br#"{"data":{"message_id":"BENCH-4711","text":"x"}}"#;
        assert_eq!(bench_id(body), Some(4711));
        assert_eq!(bench_id(br#"{"message_id":"X"}"#), None);
    }
}
