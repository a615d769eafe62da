//! The event log's side of the bus: how long recorded envelopes are kept,
//! the task that prunes them by age, and [`Resume`], which replays to a
//! stream client what it missed since the last sequence number it saw.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::domain::event::Envelope;
use crate::domain::time::unix_now;
use crate::store::Store;

/// How many envelopes a replay reads from the store at a time.
const PAGE: usize = 256;

/// How long recorded envelopes are kept for streams that resume.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLogConfig {
    /// Most envelopes kept (`EVENT_RETENTION_COUNT`, 100,000); 0 keeps none
    /// (and a stream cannot resume).
    pub max_count: u64,
    /// Oldest envelope kept (`EVENT_RETENTION_SECS`, one day).
    pub max_age: Duration,
    /// How often envelopes past `max_age` are pruned
    /// (`EVENT_RETENTION_SWEEP_SECS`, 60).
    pub sweep_every: Duration,
}

impl Default for EventLogConfig {
    fn default() -> Self {
        Self {
            max_count: 100_000,
            max_age: Duration::from_secs(86_400),
            sweep_every: Duration::from_secs(60),
        }
    }
}

impl EventLogConfig {
    /// Whether envelopes are logged at all.
    pub fn enabled(&self) -> bool {
        self.max_count > 0
    }
}

/// Prunes envelopes older than the retention age, every `sweep_every`.
pub(super) async fn prune_loop(store: Store, config: EventLogConfig, cancel: CancellationToken) {
    let mut tick = tokio::time::interval(config.sweep_every.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        let before =
            unix_now().saturating_sub(i64::try_from(config.max_age.as_secs()).unwrap_or(i64::MAX));
        let store = store.clone();
        match tokio::task::spawn_blocking(move || store.prune_event_log(before)).await {
            Ok(Ok(0)) => {}
            Ok(Ok(n)) => tracing::debug!(pruned = n, "event log pruned by age"),
            Ok(Err(e)) => tracing::warn!(error = %e, "could not prune the event log"),
            Err(e) => tracing::warn!(error = %e, "the event log's pruning failed"),
        }
    }
}

/// A stream client's way back: the live receiver (subscribed before
/// anything was read), then the recorded envelopes after its last one, page
/// by page, unless they are gone (then [`Resume::reset`] says why).
pub struct Resume {
    /// Envelopes released from the moment of resuming on.
    pub live: broadcast::Receiver<Arc<Envelope>>,
    store: Option<Store>,
    cursor: u64,
    reset: Option<String>,
}

/// Builds the resume of a client that last saw `after`, `last` being the
/// highest number given so far.
pub(super) fn resume(
    store: Option<Store>,
    after: u64,
    last: u64,
    live: broadcast::Receiver<Arc<Envelope>>,
) -> Resume {
    let mut reset = None;
    if after > last {
        reset = Some(format!(
            "event {after} is unknown here: the newest event is {last}"
        ));
    } else if after < last {
        match &store {
            None => {
                reset = Some("this gateway keeps no event log (EVENT_RETENTION_COUNT=0)".into());
            }
            Some(s) => match s.event_log_bounds() {
                Ok(b) if after < b.pruned_through => {
                    reset = Some(format!(
                        "events after {after} are no longer retained (retained from {} on)",
                        b.pruned_through + 1
                    ));
                }
                Ok(_) => {}
                Err(e) => reset = Some(format!("the event log could not be read: {e}")),
            },
        }
    }
    let store = if reset.is_some() { None } else { store };
    Resume {
        live,
        store,
        cursor: if reset.is_some() { last } else { after },
        reset,
    }
}

impl Resume {
    /// Why the missed envelopes cannot be replayed, if so: the client gets
    /// live envelopes only.
    pub fn reset(&self) -> Option<&str> {
        self.reset.as_deref()
    }

    /// The highest sequence number replayed (or skipped by a reset): live
    /// envelopes at or below it were already sent.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The next recorded envelopes after the cursor, oldest first; empty
    /// once caught up.
    pub async fn next_page(&mut self) -> Vec<Arc<Envelope>> {
        let Some(store) = self.store.clone() else {
            return Vec::new();
        };
        let after = self.cursor;
        let rows = tokio::task::spawn_blocking(move || store.event_log_after(after, PAGE)).await;
        let rows = match rows {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "could not read the event log for a resuming stream");
                Vec::new()
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading the event log failed");
                Vec::new()
            }
        };
        if rows.len() < PAGE {
            // Caught up: everything later comes live.
            self.store = None;
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            self.cursor = row.seq;
            match serde_json::from_slice::<Envelope>(&row.json) {
                Ok(mut e) => {
                    e.seq = row.seq;
                    out.push(Arc::new(e));
                }
                Err(e) => {
                    tracing::warn!(seq = row.seq, error = %e, "a logged envelope is unreadable; skipped")
                }
            }
        }
        out
    }
}
