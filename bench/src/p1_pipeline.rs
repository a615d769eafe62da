//! P1, the inbound pipeline: messages delivered to a session (by a
//! [`Source`]: the sim network in process, or its control API over HTTP) →
//! intake → envelope → plugin filters → signed webhook deliveries to the
//! benchmark's receiver. Throughput is measured closed-loop ([`INJECTORS`]
//! injections in flight, each answered once stored, never more than
//! [`WINDOW`] events ahead of the deliveries, until every delivery has
//! arrived); latency open-loop at half that rate, from the moment an
//! injection starts to the moment its delivery arrives.
//!
//! The filter chains are [`Chain`]s: none, one filter, or three that keep
//! every benchmark message, in the 0.1 contract (keyword-router, redactor)
//! or the 0.2 one (keyword-filter). The in-process runs, which carry the
//! targets, bind 0.2 filters; the HTTP-injected runs keep the 0.1 chains
//! they were measured with before, for comparison with earlier figures. The
//! 0.1 three-filter chain is kept: it is one configuration of seven (about
//! 6 s of a 50 s full section), not a doubling.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::{Value, json};

use crate::cpu::Usage;
use crate::gateway::Gateway;
use crate::p1_inject::Source;
use crate::receiver::{Receiver, SLOTS};
use crate::stats::{Goal, Row, Samples, ms};

/// The session the pipeline runs on.
const SESSION: &str = "p1";
/// Injections in flight in the throughput run. Each waits for its store
/// commit, so fewer would measure the commit's round trip, not the pipeline.
const INJECTORS: usize = 128;
/// Most events injected but not yet delivered in the throughput run: the
/// gateway's per-URL backlog (`WEBHOOK_BACKLOG_LIMIT`, 10,000 by default)
/// dead-letters its oldest deliveries past it, so an unbounded burst would
/// measure the backlog, not the pipeline.
const WINDOW: usize = 2_000;
/// Most message ids one configuration's throughput run uses, so that every
/// configuration of a run finds receiver slots left (far above any rate
/// reached in a 3 s run).
const IDS_PER_RUN: usize = SLOTS / 16;

/// The filters bound for one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// No filter.
    None,
    /// One 0.1 keyword-router keeping messages with "order".
    OneV1,
    /// The 0.1 chain: keyword-router, redactor (which rewrites the data
    /// only when it holds a long digit run, never here), keyword-router
    /// dropping a word never sent.
    ThreeV1,
    /// One 0.2 keyword-filter keeping messages with "order".
    OneV2,
    /// Three 0.2 keyword-filters, each keeping messages with "order".
    ThreeV2,
}

impl Chain {
    /// How the table names it.
    pub fn label(self) -> &'static str {
        match self {
            Chain::None => "0 filters",
            Chain::OneV1 => "1 filter (0.1)",
            Chain::ThreeV1 => "3 filters (0.1)",
            Chain::OneV2 => "1 filter (0.2)",
            Chain::ThreeV2 => "3 filters (0.2)",
        }
    }
}

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
    /// What each event of the throughput run cost the whole process (see
    /// [`crate::cpu`]): CPU time, and bytes written to storage.
    pub cost: Option<(Duration, f64)>,
}

impl Pipeline {
    /// The table rows of configuration `what`: events/s beside `ceiling`
    /// (a target ratio when `ratio` is set), the p99 at half rate (against
    /// 10 ms when `headline`), records per commit, and what an event cost
    /// beside what a raw signed POST cost (`ceiling_cpu`). A configuration
    /// that is not the headline is reported only.
    pub fn rows(
        &self,
        what: &str,
        ceiling: f64,
        ceiling_cpu: Option<Duration>,
        ratio: Option<f64>,
        headline: bool,
    ) -> Vec<Row> {
        let rate = format!("P1 {what}: events/s");
        let mut rows = vec![
            match ratio {
                Some(t) => Row::ratio(&rate, self.rate, "ev/s", ceiling, t),
                None => Row::absolute(&rate, self.rate, "ev/s", Goal::Info, 0.0)
                    .with_ceiling(ceiling, "ev/s"),
            },
            Row::absolute(
                &format!(
                    "P1 {what}: p99 inject→receipt at {:.0}/s (p50 {:.2} ms)",
                    self.paced,
                    ms(self.p50)
                ),
                ms(self.p99),
                "ms",
                if headline { Goal::AtMost } else { Goal::Info },
                10.0,
            ),
            Row::absolute(
                &format!("P1 {what}: inbound records stored per commit"),
                self.writes_per_commit,
                "",
                Goal::Info,
                0.0,
            ),
        ];
        if let Some((cpu, written)) = self.cost {
            let us = |d: Duration| d.as_secs_f64() * 1e6;
            let mut row = Row::absolute(
                &format!(
                    "P1 {what}: CPU per event, whole process (ratio: a raw POST's / an event's)"
                ),
                us(cpu),
                "µs",
                Goal::Info,
                0.0,
            );
            if let Some(c) = ceiling_cpu.filter(|_| !cpu.is_zero()) {
                row.ceiling = format!("{} µs", crate::stats::human(us(c)));
                row.ratio = Some(us(c) / us(cpu));
            }
            rows.push(row);
            rows.push(Row::absolute(
                &format!("P1 {what}: bytes written to storage per event"),
                written,
                "B",
                Goal::Info,
                0.0,
            ));
        }
        rows
    }
}

/// The pipeline's fixture: a paired session with a signed webhook, and the
/// filter plugins uploaded (not bound).
pub struct Fixture {
    router: String,
    redactor: String,
    keyword_filter: String,
    bindings: Vec<String>,
    next_id: usize,
}

impl Fixture {
    /// Sets the session, webhook and plugins up.
    pub async fn new(gw: &Gateway, receiver: &Receiver) -> anyhow::Result<Fixture> {
        gw.paired(SESSION).await?;
        gw.webhook(SESSION, &receiver.url(), &["message"]).await?;
        let upload =
            async |path: &str, name: &str| gw.upload_plugin(&std::fs::read(path)?, name).await;
        Ok(Fixture {
            router: upload(crate::KEYWORD_ROUTER, "bench-router").await?,
            redactor: upload(crate::REDACTOR, "bench-redactor").await?,
            keyword_filter: upload(crate::KEYWORD_FILTER, "bench-keyword-filter").await?,
            bindings: Vec::new(),
            next_id: 0,
        })
    }

    /// Binds `chain`, replacing the bindings before. Every benchmark
    /// message ("order <n>") passes every chain, so each configuration
    /// delivers all it injects.
    pub async fn bind(&mut self, gw: &Gateway, chain: Chain) -> anyhow::Result<()> {
        for b in self.bindings.drain(..) {
            gw.unbind(&b).await?;
        }
        let keep_orders = json!({ "keywords": ["order"], "mode": "keep" });
        let filter = |keywords: &[&str]| json!({ "keywords": keywords });
        let filters: Vec<(&String, Value)> = match chain {
            Chain::None => vec![],
            Chain::OneV1 => vec![(&self.router, keep_orders)],
            Chain::ThreeV1 => vec![
                (&self.router, keep_orders),
                (&self.redactor, json!({})),
                (
                    &self.router,
                    json!({ "keywords": ["never-sent"], "mode": "drop" }),
                ),
            ],
            Chain::OneV2 => vec![(&self.keyword_filter, filter(&["order"]))],
            Chain::ThreeV2 => vec![
                (&self.keyword_filter, filter(&["order"])),
                (&self.keyword_filter, filter(&["order", "x"])),
                (&self.keyword_filter, filter(&["order"])),
            ],
        };
        for (order, (plugin, config)) in filters.into_iter().enumerate() {
            let b = gw.bind_filter(plugin, order as i32, config).await?;
            self.bindings.push(b);
        }
        Ok(())
    }

    /// Runs one configuration with events from `source`: closed-loop for
    /// `inject_for`, then `paced_for` at half the measured rate.
    pub async fn run(
        &mut self,
        source: &Source,
        gw: &Gateway,
        receiver: &Receiver,
        inject_for: Duration,
        paced_for: Duration,
    ) -> anyhow::Result<Pipeline> {
        // Throughput: inject for `inject_for`, then wait for every delivery.
        let commits_before = gw.store_commits().await?;
        let first = self.next_id;
        let limit = first + IDS_PER_RUN;
        let before = receiver.count();
        let usage = Usage::now();
        let start = Instant::now();
        let deadline = start + inject_for;
        let next = Arc::new(AtomicUsize::new(first));
        let mut tasks = Vec::new();
        for _ in 0..INJECTORS {
            let (injector, next, receiver) = (source.clone(), next.clone(), receiver.clone());
            tasks.push(source.spawn(async move {
                while Instant::now() < deadline {
                    // Sustained, not burst, throughput: injections stay at
                    // most WINDOW ahead of the deliveries.
                    while next.load(Ordering::Relaxed) - first
                        > (receiver.count() - before) as usize + WINDOW
                    {
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= limit {
                        break;
                    }
                    injector.inject(SESSION, n).await?;
                }
                Ok::<_, anyhow::Error>(())
            }));
        }
        for t in tasks {
            t.await??;
        }
        let count = next.load(Ordering::Relaxed).min(limit) - first;
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
        let cost = Usage::since(usage, count as u64);

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
            let injector = source.clone();
            let t = Instant::now();
            sent.push((
                first + i,
                t,
                source.spawn(async move { injector.inject(SESSION, first + i).await }),
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
            cost,
        })
    }

    fn take_ids(&mut self, n: usize) -> usize {
        let first = self.next_id;
        self.next_id += n;
        assert!(self.next_id <= SLOTS, "too many messages for the receiver");
        first
    }
}
