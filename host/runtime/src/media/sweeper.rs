//! Retention: a background sweep removes media older than the configured
//! age; then each session's oldest while it holds more than its share (the
//! per-session bound); then, while the store holds more than the configured
//! total, the oldest of whichever session holds the most, so one session's
//! flood of media gives up its own before it evicts anyone else's; and bytes no record names (a crash between writing an upload and
//! recording it, a session deleted while its media was being written) once
//! they are older than the orphan grace. Each sweep sets the stored-bytes
//! gauge from the records again, so it cannot drift.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
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
    /// Media removed to bring a session under its per-session bound.
    pub by_share: u64,
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
                if report.by_age + report.by_share + report.by_size > 0 {
                    tracing::info!(
                        by_age = report.by_age,
                        by_share = report.by_share,
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
        let chosen = choose(
            records,
            unix_now(),
            Bounds {
                age: config.retention_age,
                per_session: config.retention_bytes_per_session,
                total: config.retention_bytes,
            },
        );
        let mut report = SweepReport::default();
        for record in &chosen.by_age {
            report.by_age += 1;
            report.bytes += self.remove(record).await;
        }
        for record in &chosen.by_share {
            report.by_share += 1;
            report.bytes += self.remove(record).await;
        }
        for record in &chosen.by_size {
            report.by_size += 1;
            report.bytes += self.remove(record).await;
        }
        report.orphans = self.remove_orphans().await;
        self.reset_gauge().await;
        self.inner.counters.sweeps.inc();
        self.inner
            .counters
            .swept
            .inc_by(report.by_age + report.by_share + report.by_size);
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

/// The retention settings a sweep applies.
#[derive(Debug, Clone, Copy, Default)]
struct Bounds {
    /// Media older than this goes.
    age: Option<Duration>,
    /// Most bytes one session keeps.
    per_session: Option<u64>,
    /// Most bytes the store keeps.
    total: Option<u64>,
}

/// What a sweep removes, by reason.
#[derive(Debug, Default)]
struct Chosen {
    by_age: Vec<MediaRecord>,
    by_share: Vec<MediaRecord>,
    by_size: Vec<MediaRecord>,
}

/// Which media a sweep removes: those older than the age bound; then, in
/// each session over the per-session bound, its oldest until it is within
/// it; then, while the total exceeds its bound, the oldest of the session
/// that holds the most (so the largest holder shrinks first, and a
/// session's media goes only while no other session holds more).
fn choose(mut records: Vec<MediaRecord>, now: i64, bounds: Bounds) -> Chosen {
    records.sort_by_key(|r| r.created_at);
    let cutoff = bounds.age.map(|a| now.saturating_sub(a.as_secs() as i64));
    let (by_age, rest): (Vec<_>, Vec<_>) = records
        .into_iter()
        .partition(|r| cutoff.is_some_and(|c| r.created_at < c));
    // Each session's stored media, oldest first, and what it holds.
    let mut sessions: BTreeMap<String, (u64, VecDeque<MediaRecord>)> = BTreeMap::new();
    for r in rest {
        if r.state != MediaState::Stored {
            continue;
        }
        let held = sessions.entry(r.session_id.clone()).or_default();
        held.0 += r.file_length.unwrap_or(0);
        held.1.push_back(r);
    }
    let mut chosen = Chosen {
        by_age,
        ..Chosen::default()
    };
    if let Some(share) = bounds.per_session {
        for (total, media) in sessions.values_mut() {
            while *total > share {
                let Some(r) = media.pop_front() else { break };
                *total -= r.file_length.unwrap_or(0);
                chosen.by_share.push(r);
            }
        }
    }
    if let Some(max) = bounds.total {
        // The largest holder first; among equals, the session whose id sorts first.
        let mut by_held: BTreeSet<(std::cmp::Reverse<u64>, String)> = sessions
            .iter()
            .map(|(sid, (total, _))| (std::cmp::Reverse(*total), sid.clone()))
            .collect();
        let mut total: u64 = sessions.values().map(|(t, _)| *t).sum();
        while total > max {
            let Some((std::cmp::Reverse(held), sid)) = by_held.pop_first() else {
                break;
            };
            let Some((left, media)) = sessions.get_mut(&sid) else {
                break;
            };
            let Some(r) = media.pop_front() else {
                continue;
            };
            let len = r.file_length.unwrap_or(0);
            total -= len;
            *left = held - len;
            chosen.by_size.push(r);
            if !media.is_empty() {
                by_held.insert((std::cmp::Reverse(*left), sid));
            }
        }
    }
    chosen
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

    fn stored_in(session: &str, id: &str, created_at: i64, len: u64) -> MediaRecord {
        let mut r = stored(id, created_at, len);
        r.session_id = session.to_owned();
        r
    }

    fn bounds(age: Option<u64>, per_session: Option<u64>, total: Option<u64>) -> Bounds {
        Bounds {
            age: age.map(Duration::from_secs),
            per_session,
            total,
        }
    }

    #[test]
    fn media_older_than_the_retention_age_is_chosen_by_age() {
        let all = vec![
            stored("a", 100, 1),
            stored("b", 500, 1),
            stored("c", 900, 1),
        ];
        let chosen = choose(all, 1000, bounds(Some(600), None, None));
        assert_eq!(ids(&chosen.by_age), vec![100]);
        assert!(chosen.by_size.is_empty() && chosen.by_share.is_empty());
    }

    #[test]
    fn the_oldest_media_goes_until_the_total_is_within_the_bound() {
        let all = vec![
            stored("c", 300, 40),
            stored("a", 100, 50),
            stored("b", 200, 30),
        ];
        let chosen = choose(all, 1000, bounds(None, None, Some(80)));
        assert!(chosen.by_age.is_empty());
        assert_eq!(
            ids(&chosen.by_size),
            vec![100],
            "70 bytes are left after the oldest"
        );
        let all = vec![
            stored("c", 300, 40),
            stored("a", 100, 50),
            stored("b", 200, 30),
        ];
        let chosen = choose(all, 1000, bounds(None, None, Some(50)));
        assert_eq!(ids(&chosen.by_size), vec![100, 200]);
    }

    #[test]
    fn a_session_over_its_share_gives_up_its_own_oldest_and_no_one_elses() {
        let all = vec![
            stored_in("quiet", "q", 100, 10),
            stored_in("flood", "f1", 200, 10),
            stored_in("flood", "f2", 300, 10),
            stored_in("flood", "f3", 400, 10),
        ];
        let chosen = choose(all, 1000, bounds(None, Some(15), None));
        assert_eq!(ids(&chosen.by_share), vec![200, 300]);
        assert!(chosen.by_share.iter().all(|r| r.session_id == "flood"));
    }

    #[test]
    fn over_the_total_the_largest_holder_shrinks_first_though_its_media_is_newer() {
        let all = vec![
            stored_in("quiet", "q", 100, 10),
            stored_in("flood", "f1", 200, 10),
            stored_in("flood", "f2", 300, 10),
            stored_in("flood", "f3", 400, 10),
        ];
        let chosen = choose(all, 1000, bounds(None, None, Some(25)));
        assert_eq!(ids(&chosen.by_size), vec![200, 300]);
        // Once both hold the same, the total is still honoured.
        let all = vec![
            stored_in("quiet", "q", 100, 10),
            stored_in("flood", "f1", 200, 10),
            stored_in("flood", "f2", 300, 10),
        ];
        let chosen = choose(all, 1000, bounds(None, None, Some(5)));
        assert_eq!(chosen.by_size.len(), 3, "{:?}", ids(&chosen.by_size));
    }

    #[test]
    fn pending_and_failed_media_hold_no_bytes_and_are_never_chosen_by_size() {
        let mut pending = stored_in("s", "p", 1, 1_000);
        pending.state = MediaState::Pending;
        let all = vec![pending, stored_in("s", "x", 2, 10)];
        let chosen = choose(all, 1000, bounds(None, Some(5), Some(5)));
        assert_eq!(ids(&chosen.by_share), vec![2]);
        assert!(chosen.by_size.is_empty());
    }

    #[test]
    fn nothing_is_chosen_without_retention_settings() {
        let all = vec![stored("a", 1, 1_000_000)];
        let chosen = choose(all, 1_000_000_000, Bounds::default());
        assert!(
            chosen.by_age.is_empty() && chosen.by_size.is_empty() && chosen.by_share.is_empty()
        );
    }
}
