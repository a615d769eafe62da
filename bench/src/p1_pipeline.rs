//! P1, the inbound pipeline: messages injected through the sim's control API
//! (`POST /sim/sessions/{id}/inbound`) → intake → envelope → plugin filters →
//! signed webhook deliveries to the benchmark's receiver. Throughput is
//! measured closed-loop ([`INJECTORS`] injectors as fast as they are answered, never
//! more than [`WINDOW`] events ahead of the deliveries, until every delivery
//! has arrived); latency open-loop at half that rate, from the moment an
//! injection is sent to the moment its delivery arrives.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header;
use serde_json::json;

use crate::gateway::{Gateway, TOKEN};
use crate::load::{Http, send};
use crate::receiver::Receiver;
use crate::stats::Samples;

/// The session the pipeline runs on.
const SESSION: &str = "p1";
/// Concurrent injectors of the throughput run.
const INJECTORS: usize = 128;
/// Most events injected but not yet delivered in the throughput run: the
/// gateway's per-URL backlog (`WEBHOOK_BACKLOG_LIMIT`, 10,000 by default)
/// dead-letters its oldest deliveries past it, so an unbounded burst would
/// measure the backlog, not the pipeline.
const WINDOW: u64 = 2_000;

/// One configuration's figures.
#[derive(Debug)]
pub struct Pipeline {
    /// Deliveries per second, closed loop.
    pub rate: f64,
    /// Latency percentiles at half that rate.
    pub p50: Duration,
    /// The 99th percentile at half that rate.
    pub p99: Duration,
    /// The rate the latency run was paced at.
    pub paced: f64,
    /// Inbound message records stored per store commit over both runs
    /// (how well the group commit batches them).
    pub writes_per_commit: f64,
}

/// The pipeline's fixture: a paired session with a signed webhook, and the
/// two filter plugins uploaded (not bound).
pub struct Fixture {
    router: String,
    redactor: String,
    bindings: Vec<String>,
    next_id: usize,
}

impl Fixture {
    /// Sets the session, webhook and plugins up.
    pub async fn new(gw: &Gateway, receiver: &Receiver) -> anyhow::Result<Fixture> {
        gw.paired(SESSION).await?;
        gw.webhook(SESSION, &receiver.url(), &["message"]).await?;
        let router = gw
            .upload_plugin(&std::fs::read(crate::KEYWORD_ROUTER)?, "bench-router")
            .await?;
        let redactor = gw
            .upload_plugin(&std::fs::read(crate::REDACTOR)?, "bench-redactor")
            .await?;
        Ok(Fixture {
            router,
            redactor,
            bindings: Vec::new(),
            next_id: 0,
        })
    }

    /// Binds `n` filters (0, 1 or 3), replacing earlier ones. Every message
    /// passes all of them: the router keeps messages with "order", the
    /// redactor masks long digit runs, the second router drops a word never sent.
    pub async fn bind(&mut self, gw: &Gateway, n: usize) -> anyhow::Result<()> {
        for b in self.bindings.drain(..) {
            gw.unbind(&b).await?;
        }
        let all = [
            (
                &self.router,
                json!({ "keywords": ["order"], "mode": "keep" }),
            ),
            (&self.redactor, json!({})),
            (
                &self.router,
                json!({ "keywords": ["never-sent"], "mode": "drop" }),
            ),
        ];
        for (order, (plugin, config)) in all.into_iter().take(n).enumerate() {
            let b = gw.bind_filter(plugin, order as i32, config).await?;
            self.bindings.push(b);
        }
        Ok(())
    }

    /// Runs one configuration: injections closed-loop for `inject_for`, then
    /// `paced_for` at half the measured rate.
    pub async fn run(
        &mut self,
        gw: &Gateway,
        http: &Http,
        receiver: &Receiver,
        inject_for: Duration,
        paced_for: Duration,
    ) -> anyhow::Result<Pipeline> {
        // Throughput: inject for `inject_for`, then wait for every delivery.
        let commits_before = gw.store_commits().await?;
        let first = self.next_id;
        let limit = crate::receiver::SLOTS / 2;
        let before = receiver.count();
        let start = Instant::now();
        let deadline = start + inject_for;
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(first));
        let mut tasks = Vec::new();
        for _ in 0..INJECTORS {
            let (http, next, base) = (http.clone(), next.clone(), gw.base().to_owned());
            let receiver = receiver.clone();
            tasks.push(tokio::spawn(async move {
                while Instant::now() < deadline {
                    // Sustained, not burst, throughput: injections stay at
                    // most WINDOW ahead of the deliveries.
                    while (next.load(std::sync::atomic::Ordering::Relaxed) - first) as u64
                        > receiver.count() - before + WINDOW
                    {
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if n >= limit {
                        break;
                    }
                    inject(&http, &base, n).await?;
                }
                Ok::<_, anyhow::Error>(())
            }));
        }
        for t in tasks {
            t.await??;
        }
        let count = next.load(std::sync::atomic::Ordering::Relaxed).min(limit) - first;
        self.next_id = first + count;
        if !receiver
            .wait_for(before + count as u64, Duration::from_secs(60))
            .await
        {
            bail!(
                "only {} of {count} deliveries arrived",
                receiver.count() - before
            );
        }
        let rate = count as f64 / start.elapsed().as_secs_f64();

        // Latency at half the rate, open loop.
        let paced = rate / 2.0;
        let total = ((paced * paced_for.as_secs_f64()) as usize).max(50);
        let first = self.take_ids(total);
        let before = receiver.count();
        let start = Instant::now();
        let mut sent = Vec::with_capacity(total);
        for i in 0..total {
            let at = start + Duration::from_secs_f64(i as f64 / paced);
            tokio::time::sleep_until(at.into()).await;
            let (http, base) = (http.clone(), gw.base().to_owned());
            let t = Instant::now();
            sent.push((
                first + i,
                t,
                tokio::spawn(async move { inject(&http, &base, first + i).await }),
            ));
        }
        let mut latencies = Samples::with_capacity(total);
        let arrived = receiver
            .wait_for(before + total as u64, Duration::from_secs(60))
            .await;
        for (n, t, task) in sent {
            task.await??;
            if let Some(at) = receiver.arrival(n) {
                latencies.push(at.saturating_duration_since(t));
            }
        }
        if !arrived {
            bail!(
                "only {} of {total} paced deliveries arrived",
                latencies.len()
            );
        }
        let commits = gw.store_commits().await?.saturating_sub(commits_before);
        Ok(Pipeline {
            writes_per_commit: (count + total) as f64 / commits.max(1) as f64,
            rate,
            p50: latencies.percentile(50.0),
            p99: latencies.percentile(99.0),
            paced,
        })
    }

    fn take_ids(&mut self, n: usize) -> usize {
        let first = self.next_id;
        self.next_id += n;
        assert!(
            self.next_id <= crate::receiver::SLOTS,
            "too many messages for the receiver"
        );
        first
    }
}

/// Injects message `BENCH-<n>` ("order <n>") into the session.
async fn inject(http: &Http, base: &str, n: usize) -> anyhow::Result<()> {
    let body = json!({ "from": "15550001111", "text": format!("order {n}"), "message_id": format!("BENCH-{n}") });
    let req = hyper::Request::post(format!("{base}/api/v1/sim/sessions/{SESSION}/inbound"))
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))?;
    let (status, answer) = send(http, req).await?;
    if !status.is_success() {
        bail!("inject: {status} {}", String::from_utf8_lossy(&answer));
    }
    Ok(())
}
