//! P5, scale: the resident memory each idle, logged-in sim session costs at
//! `n` sessions (VmRSS of this process before and after, from
//! `/proc/self/status`; the gateway runs in-process; and as heap in use, from
//! jemalloc's statistics, because the allocator keeps much of what the
//! creation burst freed), and the time a restart
//! takes until the API answers with those sessions and ten plugins stored.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;

use crate::gateway::Gateway;

/// P5's figures.
#[derive(Debug)]
pub struct ScaleFigures {
    /// Resident bytes per session: the growth of this process's RSS.
    pub bytes_per_session: f64,
    /// Heap bytes in use per session (jemalloc's `stats.allocated`: bytes
    /// the application holds in allocated blocks): what the sessions hold,
    /// without the free memory the allocator keeps after the burst that
    /// created them.
    pub held_per_session: f64,
    /// Restart until `/health` answers.
    pub ready: Duration,
    /// Restart until every session is `logged_in` again.
    pub all_logged_in: Duration,
}

/// Creates `n` sessions on a fresh gateway, then restarts it with ten plugins.
/// Memory is the marginal cost of the second half of the sessions (measured
/// after the first half exists), so what earlier sections left for the
/// allocator to reuse does not count as less, and start-up costs of the
/// gateway do not count as more.
pub async fn run(gw: &mut Gateway, n: usize) -> anyhow::Result<ScaleFigures> {
    let half = n / 2;
    create_sessions(gw, 0..half).await?;
    wait_all_logged_in(gw, half, Duration::from_secs(120)).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (rss_before, heap_before) = (rss_bytes()?, heap_in_use()?);
    create_sessions(gw, half..n).await?;
    wait_all_logged_in(gw, n, Duration::from_secs(120)).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (rss_after, heap_after) = (rss_bytes()?, heap_in_use()?);
    let added = (n - half).max(1) as f64;

    for i in 0..10 {
        let (path, name) = if i % 2 == 0 {
            (crate::KEYWORD_ROUTER, format!("router-{i}"))
        } else {
            (crate::REDACTOR, format!("redactor-{i}"))
        };
        gw.upload_plugin(&std::fs::read(path)?, &name).await?;
    }
    let t = Instant::now();
    let ready = gw.restart().await?;
    wait_all_logged_in(gw, n, Duration::from_secs(120)).await?;
    Ok(ScaleFigures {
        bytes_per_session: rss_after.saturating_sub(rss_before) as f64 / added,
        held_per_session: heap_after.saturating_sub(heap_before) as f64 / added,
        ready,
        all_logged_in: t.elapsed(),
    })
}

/// Creates and connects the sessions `idle-<i>` for `ids`, 16 at a time.
async fn create_sessions(gw: &Gateway, ids: std::ops::Range<usize>) -> anyhow::Result<()> {
    let next = Arc::new(AtomicUsize::new(ids.start));
    let workers = (0..16).map(|_| {
        let (next, end) = (next.clone(), ids.end);
        async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    return Ok::<_, anyhow::Error>(());
                }
                gw.create_and_connect(&format!("idle-{i:05}")).await?;
            }
        }
    });
    for r in futures_util::future::join_all(workers).await {
        r?;
    }
    Ok(())
}

/// Waits until the session list shows `n` sessions `logged_in`.
async fn wait_all_logged_in(gw: &Gateway, n: usize, patience: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + patience;
    loop {
        let list = gw.get("/api/v1/sessions").await?;
        let logged_in = list["sessions"].as_array().map_or(0, |a| {
            a.iter().filter(|s| s["status"] == "logged_in").count()
        });
        if logged_in >= n {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("only {logged_in} of {n} sessions logged in");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Bytes the process holds in allocated blocks, by jemalloc's statistics
/// (refreshed first: they are cached per epoch).
fn heap_in_use() -> anyhow::Result<u64> {
    use tikv_jemalloc_ctl::{epoch, stats};
    epoch::advance().map_err(|e| anyhow::anyhow!("jemalloc's statistics: {e}"))?;
    let bytes =
        stats::allocated::read().map_err(|e| anyhow::anyhow!("jemalloc's statistics: {e}"))?;
    Ok(bytes as u64)
}

/// This process's resident set size, from `/proc/self/status`.
pub fn rss_bytes() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/self/status"))?;
    Ok(kb * 1024)
}
