//! P4, blasts: the create of a 100,000-recipient blast (time to answer, and
//! the p99 of session-status reads running beside it), then the worker's
//! overhead per send beyond the configured pause.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;

use crate::gateway::Gateway;
use crate::load::Http;
use crate::stats::Samples;

/// The session P4 runs on.
const SESSION: &str = "p4";

/// P4's figures.
#[derive(Debug)]
pub struct BlastFigures {
    /// Time from sending the create to its answer.
    pub create: Duration,
    /// Reads that ran during the create.
    pub reads: usize,
    /// Their 99th percentile.
    pub read_p99: Duration,
    /// Worker time per send beyond `delay_ms`.
    pub overhead: Duration,
}

/// Runs P4 with `recipients` in the big blast and `sends` in the paced one.
pub async fn run(
    gw: &Gateway,
    http: &Http,
    recipients: usize,
    sends: usize,
) -> anyhow::Result<BlastFigures> {
    gw.paired(SESSION).await?;
    let list: Vec<String> = (0..recipients).map(|i| format!("4916{i:08}")).collect();
    let body = json!({
        "endpoint": "text",
        "body": { "to": "4915100000000", "text": "Hello from the benchmark" },
        "recipients": list,
        "delay_ms": 3_600_000,
    });

    // Readers beside the create.
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..4 {
        let (http, done) = (http.clone(), done.clone());
        let uri: hyper::Uri = format!("{}/api/v1/sessions/{SESSION}/status", gw.base()).parse()?;
        readers.push(tokio::spawn(async move {
            let mut s = Samples::default();
            while !done.load(Ordering::Relaxed) {
                let req = hyper::Request::get(uri.clone())
                    .header("authorization", format!("Bearer {}", crate::gateway::TOKEN))
                    .body(http_body_util::Full::new(bytes::Bytes::new()))
                    .expect("request");
                let t = Instant::now();
                if crate::load::send(&http, req).await.is_ok() {
                    s.push(t.elapsed());
                }
            }
            s
        }));
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let t = Instant::now();
    let job = gw
        .post(&format!("/api/v1/sessions/{SESSION}/blast"), body)
        .await?;
    let create = t.elapsed();
    done.store(true, Ordering::Relaxed);
    let mut reads = Samples::default();
    for r in readers {
        reads.extend(r.await?);
    }
    if job["total"] != recipients {
        bail!("the blast took {} of {recipients} recipients", job["total"]);
    }
    let job_id = job["job_id"].as_str().context("a job id")?.to_owned();
    gw.post(
        &format!("/api/v1/sessions/{SESSION}/blasts/{job_id}/cancel"),
        json!({}),
    )
    .await?;

    // Worker overhead: `sends` recipients 5 ms apart.
    let delay_ms = 5u64;
    let list: Vec<String> = (0..sends).map(|i| format!("4917{i:08}")).collect();
    let job = gw
        .post(
            &format!("/api/v1/sessions/{SESSION}/blast"),
            json!({
                "endpoint": "text",
                "body": { "to": "4915100000000", "text": "paced" },
                "recipients": list,
                "delay_ms": delay_ms,
            }),
        )
        .await?;
    let t = Instant::now();
    let job_id = job["job_id"].as_str().context("a job id")?.to_owned();
    let path = format!("/api/v1/sessions/{SESSION}/blasts/{job_id}");
    loop {
        let j = gw.get(&path).await?;
        match j["status"].as_str() {
            Some("completed") => break,
            Some("pending" | "running") => {}
            other => bail!("the paced blast ended {other:?}: {j}"),
        }
        if t.elapsed() > Duration::from_secs(120) {
            bail!("the paced blast did not finish: {j}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let elapsed = t.elapsed();
    let pauses = Duration::from_millis(delay_ms) * (sends as u32 - 1);
    Ok(BlastFigures {
        create,
        reads: reads.len(),
        read_p99: reads.percentile(99.0),
        overhead: elapsed.saturating_sub(pauses) / sends as u32,
    })
}
