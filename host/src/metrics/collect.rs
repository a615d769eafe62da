//! Metrics computed at scrape time from the gateway's own state, so the data
//! paths pay nothing for them: sessions by status, the webhook dead-letter
//! queue and suspended URLs, the blast queue, and each plugin's counters
//! (kept by `plugins/stats.rs`, read here rather than counted twice).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::blast::Blasts;
use crate::blast::model::JobStatus;
use crate::domain::session::SessionStatus;
use crate::plugins::Plugins;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::webhooks::Webhooks;

/// What the scrape reads.
pub(super) struct Scrape {
    pub sessions: Sessions,
    pub store: Store,
    pub media_store: crate::media_store::MediaStore,
    pub webhooks: Webhooks,
    pub blasts: Blasts,
    pub plugins: Plugins,
}

impl std::fmt::Debug for Scrape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scrape").finish_non_exhaustive()
    }
}

/// Writes one unlabelled gauge.
fn gauge(enc: &mut DescriptorEncoder, name: &str, help: &str, v: i64) -> std::fmt::Result {
    let g = ConstGauge::new(v);
    g.encode(enc.encode_descriptor(name, help, None, g.metric_type())?)
}

/// Writes one labelled family of values.
fn family<S: EncodeLabelSet, M: EncodeMetric>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: &[(S, M)],
) -> std::fmt::Result {
    let Some((_, first)) = rows.first() else {
        return Ok(());
    };
    let mut metric = enc.encode_descriptor(name, help, None, first.metric_type())?;
    for (labels, value) in rows {
        value.encode(metric.encode_family(labels)?)?;
    }
    Ok(())
}

impl Scrape {
    fn sessions(&self, enc: &mut DescriptorEncoder) -> std::fmt::Result {
        let Ok(sessions) = self.sessions.list() else {
            return Ok(());
        };
        let rows: Vec<_> = SessionStatus::ALL
            .iter()
            .map(|status| {
                let n = sessions
                    .iter()
                    .filter(|s| s.state.status == *status)
                    .count();
                ([("status", status.as_str())], ConstGauge::new(n as i64))
            })
            .collect();
        family(
            enc,
            "switchboard_sessions",
            "Sessions by connection status",
            &rows,
        )
    }

    fn webhooks(&self, enc: &mut DescriptorEncoder) -> std::fmt::Result {
        if let Ok(n) = self.store.count_dlq() {
            gauge(
                enc,
                "switchboard_webhook_dlq_entries",
                "Dead-lettered webhook deliveries waiting in the DLQ (every session)",
                n as i64,
            )?;
        }
        gauge(
            enc,
            "switchboard_webhook_suspended_urls",
            "Webhook URLs whose deliveries are suspended or probing",
            self.webhooks.suspended_urls() as i64,
        )?;
        let mut backlogs = self.webhooks.backlogs();
        backlogs.sort_by(|a, b| a.0.cmp(&b.0));
        let pending: Vec<_> = backlogs
            .iter()
            .map(|(url, b)| ([("url", url.clone())], ConstGauge::new(b.pending as i64)))
            .collect();
        family(
            enc,
            "switchboard_webhook_outbox_pending",
            "Webhook deliveries pending in the durable outbox, by URL (ready, waiting for a retry or in flight)",
            &pending,
        )?;
        let oldest: Vec<_> = backlogs
            .iter()
            .map(|(url, b)| {
                (
                    [("url", url.clone())],
                    ConstGauge::new(b.oldest_seconds.unwrap_or(0.0)),
                )
            })
            .collect();
        family(
            enc,
            "switchboard_webhook_outbox_oldest_seconds",
            "Age of the oldest pending webhook delivery, by URL",
            &oldest,
        )
    }

    fn blasts(&self, enc: &mut DescriptorEncoder) -> std::fmt::Result {
        let mut depth = 0u64;
        for status in [JobStatus::Pending, JobStatus::Running] {
            let Ok(jobs) = self.store.list_blasts(None, Some(status)) else {
                return Ok(());
            };
            depth += jobs
                .iter()
                .map(|j| {
                    j.total
                        .saturating_sub(j.sent_count + j.failed_count + j.dlq_count)
                })
                .sum::<u64>();
        }
        gauge(
            enc,
            "switchboard_blast_queue_depth",
            "Recipients of pending and running blasts not yet sent, failed or dead-lettered",
            depth as i64,
        )?;
        gauge(
            enc,
            "switchboard_blast_worker_up",
            "1 while the blast worker runs",
            i64::from(self.blasts.worker_running()),
        )
    }

    fn plugins(&self, enc: &mut DescriptorEncoder) -> std::fmt::Result {
        let plugins = self.plugins.list();
        let labels = |p: &crate::plugins::PluginView| {
            [
                ("plugin", p.record.name.clone()),
                ("id", p.record.id.clone()),
            ]
        };
        type Pick = fn(&crate::plugins::stats::StatsView) -> u64;
        let counters: [(&str, &str, Pick); 5] = [
            ("switchboard_plugin_calls", "Plugin calls", |c| c.calls),
            (
                "switchboard_plugin_traps",
                "Plugin calls that trapped (out of memory included)",
                |c| c.traps,
            ),
            (
                "switchboard_plugin_timeouts",
                "Plugin calls stopped at the CPU deadline",
                |c| c.timeouts,
            ),
            (
                "switchboard_plugin_drops",
                "Events dropped by filter plugins",
                |c| c.drops,
            ),
            (
                "switchboard_plugin_rejects",
                "Sends rejected by transform plugins",
                |c| c.rejects,
            ),
        ];
        for (name, help, pick) in counters {
            let rows: Vec<_> = plugins
                .iter()
                .map(|p| (labels(p), ConstCounter::new(pick(&p.counters))))
                .collect();
            family(enc, name, help, &rows)?;
        }
        Ok(())
    }
}

impl Scrape {
    /// Whether the store is failing, and the free space it and the media
    /// store have left (read with `statvfs` at each scrape).
    fn storage(&self, enc: &mut DescriptorEncoder) -> std::fmt::Result {
        let failing = !matches!(self.store.status(), crate::store::StoreStatus::Ok);
        gauge(
            enc,
            "switchboard_store_failing",
            "1 while the store is failing with a storage fault and being reopened, else 0",
            i64::from(failing),
        )?;
        if let Some(free) = self.store.free_bytes() {
            gauge(
                enc,
                "switchboard_store_free_bytes",
                "Bytes free on the data directory's filesystem",
                i64::try_from(free).unwrap_or(i64::MAX),
            )?;
        }
        if let Some(free) = self.media_store.free_bytes() {
            gauge(
                enc,
                "switchboard_media_free_bytes",
                "Bytes free on the local media directory's filesystem",
                i64::try_from(free).unwrap_or(i64::MAX),
            )?;
        }
        Ok(())
    }
}

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> std::fmt::Result {
        self.storage(&mut enc)?;
        self.sessions(&mut enc)?;
        self.webhooks(&mut enc)?;
        self.blasts(&mut enc)?;
        self.plugins(&mut enc)
    }
}
