//! The load generator: a pooled hyper-util HTTP/1.1 client, and closed-loop
//! runs of `concurrency` workers that each send one request after another
//! for a fixed time, recording every latency.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::stats::Samples;

/// The benchmark's HTTP client: keep-alive, a pool as large as the concurrency.
pub type Http = Client<HttpConnector, Full<Bytes>>;

/// A new pooled client.
pub fn client() -> Http {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(1024)
        .build(connector)
}

/// Sends one request, reads the whole answer; the status and body.
pub async fn send(http: &Http, req: Request<Full<Bytes>>) -> anyhow::Result<(StatusCode, Bytes)> {
    let resp = http.request(req).await?;
    let status = resp.status();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

/// What one closed-loop run measured.
#[derive(Debug)]
pub struct LoadResult {
    /// Requests answered with the expected status.
    pub ok: u64,
    /// Requests that failed or got another status.
    pub errors: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Latency of every successful request.
    pub latencies: Samples,
}

impl LoadResult {
    /// Successful requests per second.
    pub fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs `concurrency` workers for `duration`, each sending `make(i)` (with a
/// run-wide counter `i`) and counting answers with status `expect`.
pub async fn closed_loop<F>(
    http: &Http,
    concurrency: usize,
    duration: Duration,
    expect: StatusCode,
    make: F,
) -> LoadResult
where
    F: Fn(u64) -> Request<Full<Bytes>> + Send + Sync + 'static,
{
    let make = Arc::new(make);
    let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + duration;
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let http = http.clone();
        let make = make.clone();
        let counter = counter.clone();
        workers.push(tokio::spawn(async move {
            let mut latencies = Samples::with_capacity(4096);
            let (mut ok, mut errors) = (0u64, 0u64);
            while Instant::now() < deadline {
                let i = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let t = Instant::now();
                match send(&http, make(i)).await {
                    Ok((status, _)) if status == expect => {
                        latencies.push(t.elapsed());
                        ok += 1;
                    }
                    Ok((status, body)) => {
                        errors += 1;
                        if errors == 1 {
                            eprintln!(
                                "  unexpected answer {status}: {}",
                                String::from_utf8_lossy(&body)
                            );
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        if errors == 1 {
                            eprintln!("  request failed: {e}");
                        }
                    }
                }
            }
            (ok, errors, latencies)
        }));
    }
    let mut result = LoadResult {
        ok: 0,
        errors: 0,
        elapsed: Duration::ZERO,
        latencies: Samples::default(),
    };
    for w in workers {
        let (ok, errors, lat) = w.await.expect("a load worker panicked");
        result.ok += ok;
        result.errors += errors;
        result.latencies.extend(lat);
    }
    result.elapsed = start.elapsed();
    result
}
