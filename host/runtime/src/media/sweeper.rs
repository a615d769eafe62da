//! Retention: a background sweep removes media older than the configured
//! age, then the oldest while the store holds more than the configured
//! total; and bytes no record names (a crash between writing an upload and
//! recording it, a session deleted while its media was being written) once
//! they are older than the orphan grace. Each sweep sets the stored-bytes
//! gauge from the records again, so it cannot drift.

use std::collections::HashSet;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Media, stored_bytes};
use crate::domain::media::{MediaRecord, MediaState};
use crate::domain::time::unix_now;
use crate::media_store::media_key;

/// What one sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Media removed for their age.
    pub by_age: u64,
    /// Media removed to bring the total under its bound.
    pub by_size: u64,
    /// Bytes removed.
    pub bytes: u64,
    /// Objects removed that no record named.
    pub orphans: u64,
}

impl Media {
    /// Starts the sweep: one run at start, then one per interval, until `cancel`.
    pub fn start_sweeper(&self, cancel: CancellationToken, tasks: &TaskTracker) {
        let media = self.clone();
        tasks.spawn(async move {
            loop {
                let report = media.sweep().await;
                if report.by_age + report.by_size > 0 {
                    tracing::info!(
                        by_age = report.by_age,
                        by_size = report.by_size,
                        bytes = report.bytes,
                        "media retention sweep"
                    );
                }
                tokio::select! {
                    () = tokio::time::sleep(media.inner.config.sweep_interval) => {}
                    () = cancel.cancelled() => return,
                }
            }
        });
    }

    /// One sweep.
    pub async fn sweep(&self) -> SweepReport {
        let store = self.inner.store.clone();
        let records = match tokio::task::spawn_blocking(move || store.all_media()).await {
            Ok(Ok(records)) => records,
            Ok(Err(e)) => {
                tracing::error!(error = %e, "the media sweep could not read the records");
                return SweepReport::default();
            }
            Err(_) => return SweepReport::default(),
        };
        let config = &self.inner.config;
        let (by_age, by_size) = choose(
            records,
            unix_now(),
            config.retention_age,
            config.retention_bytes,
        );
        let mut report = SweepReport::default();
        for record in &by_age {
            report.by_age += 1;
            report.bytes += self.remove(record).await;
        }
        for record in &by_size {
            report.by_size += 1;
            report.bytes += self.remove(record).await;
        }
        report.orphans = self.remove_orphans().await;
        self.reset_gauge().await;
        self.inner.counters.sweeps.inc();
        self.inner
            .counters
            .swept
            .inc_by(report.by_age + report.by_size);
        report
    }

    /// Removes one media, bytes first (a record without bytes reads as
    /// gone; bytes without a record would never be found again). The bytes
    /// it freed.
    async fn remove(&self, record: &MediaRecord) -> u64 {
        let key = media_key(&record.session_id, &record.id);
        if let Err(e) = self.inner.blobs.delete(&key).await {
            tracing::warn!(media = %record.id, error = %e, "could not remove a media's bytes");
            return 0;
        }
        let store = self.inner.store.clone();
        let (s, m) = (record.session_id.clone(), record.id.clone());
        let _ = tokio::task::spawn_blocking(move || store.delete_media(&s, &m)).await;
        let freed = stored_bytes(std::slice::from_ref(record));
        self.inner.counters.stored_bytes.dec_by(freed as i64);
        freed
    }
}

impl Media {
    /// Removes session media objects that no record names and that are
    /// older than the orphan grace (younger ones may be a write whose
    /// record is about to follow). How many.
    async fn remove_orphans(&self) -> u64 {
        let objects = match self
            .inner
            .blobs
            .list(&crate::media_store::Key::from("media"))
            .await
        {
            Ok(objects) => objects,
            Err(e) => {
                tracing::warn!(error = %e, "the media sweep could not list the media store");
                return 0;
            }
        };
        let store = self.inner.store.clone();
        let known: HashSet<(String, String)> =
            match tokio::task::spawn_blocking(move || store.all_media()).await {
                Ok(Ok(records)) => records.into_iter().map(|r| (r.session_id, r.id)).collect(),
                _ => return 0,
            };
        let cutoff = unix_now().saturating_sub(self.inner.config.orphan_grace.as_secs() as i64);
        let mut removed = 0;
        for object in objects {
            let parts: Vec<String> = object.key.parts().map(|p| p.as_ref().to_owned()).collect();
            let [_, session, id] = parts.as_slice() else {
                continue;
            };
            if object.modified > cutoff || known.contains(&(session.clone(), id.clone())) {
                continue;
            }
            if self.inner.blobs.delete(&object.key).await.is_ok() {
                tracing::info!(key = %object.key, "removed media bytes no record names");
                removed += 1;
            }
        }
        removed
    }

    /// Sets the stored-bytes gauge from the records.
    async fn reset_gauge(&self) {
        let store = self.inner.store.clone();
        if let Ok(Ok(records)) = tokio::task::spawn_blocking(move || store.all_media()).await {
            self.inner
                .counters
                .stored_bytes
                .set(stored_bytes(&records) as i64);
        }
    }
}

/// Which media a sweep removes: those older than `age`, then the oldest of
/// the rest while the stored total exceeds `max_bytes`.
fn choose(
    mut records: Vec<MediaRecord>,
    now: i64,
    age: Option<Duration>,
    max_bytes: Option<u64>,
) -> (Vec<MediaRecord>, Vec<MediaRecord>) {
    records.sort_by_key(|r| r.created_at);
    let cutoff = age.map(|a| now.saturating_sub(a.as_secs() as i64));
    let (old, mut rest): (Vec<_>, Vec<_>) = records
        .into_iter()
        .partition(|r| cutoff.is_some_and(|c| r.created_at < c));
    let mut by_size = Vec::new();
    if let Some(max) = max_bytes {
        let mut total = stored_bytes(&rest);
        let mut keep = Vec::with_capacity(rest.len());
        for r in rest.drain(..) {
            if total > max && r.state == MediaState::Stored {
                total -= r.file_length.unwrap_or(0);
                by_size.push(r);
            } else {
                keep.push(r);
            }
        }
    }
    (old, by_size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::media::{MediaKind, NetworkMedia};

    fn stored(id: &str, created_at: i64, len: u64) -> MediaRecord {
        let mut r = MediaRecord::inbound(
            "s",
            id,
            "c",
            MediaKind::Image,
            &NetworkMedia::default(),
            created_at,
        );
        r.state = MediaState::Stored;
        r.file_length = Some(len);
        r
    }

    fn ids(records: &[MediaRecord]) -> Vec<i64> {
        records.iter().map(|r| r.created_at).collect()
    }

    #[test]
    fn media_older_than_the_retention_age_is_chosen_by_age() {
        let all = vec![
            stored("a", 100, 1),
            stored("b", 500, 1),
            stored("c", 900, 1),
        ];
        let (old, by_size) = choose(all, 1000, Some(Duration::from_secs(600)), None);
        assert_eq!(ids(&old), vec![100]);
        assert!(by_size.is_empty());
    }

    #[test]
    fn the_oldest_media_goes_until_the_total_is_within_the_bound() {
        let all = vec![
            stored("c", 300, 40),
            stored("a", 100, 50),
            stored("b", 200, 30),
        ];
        let (old, by_size) = choose(all, 1000, None, Some(80));
        assert!(old.is_empty());
        assert_eq!(
            ids(&by_size),
            vec![100],
            "70 bytes are left after the oldest"
        );
        let all = vec![
            stored("c", 300, 40),
            stored("a", 100, 50),
            stored("b", 200, 30),
        ];
        let (_, by_size) = choose(all, 1000, None, Some(50));
        assert_eq!(ids(&by_size), vec![100, 200]);
    }

    #[test]
    fn nothing_is_chosen_without_retention_settings() {
        let all = vec![stored("a", 1, 1_000_000)];
        let (old, by_size) = choose(all, 1_000_000_000, None, None);
        assert!(old.is_empty() && by_size.is_empty());
    }
}
