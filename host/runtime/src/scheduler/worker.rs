//! The scheduler's worker task: it sleeps until the earliest due entry,
//! then hands due entries to the network, several sessions at once (up to
//! the configured concurrency) and one entry at a time per session, in the
//! session's due order. The sessions take turns: of the sessions with a due
//! send and none in flight, those served longest ago go first, so a session
//! with a backlog (or a slow send) never holds another's sends behind it.
//! Each send is bounded in time ([`SendCore::send_typed_within`]). Every
//! decision is one store transaction that also moves the entry out of "due
//! now", so the loop always progresses.
//!
//! [`SendCore::send_typed_within`]: crate::messages::SendCore::send_typed_within

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::{Id, JoinSet};
use tokio_util::sync::CancellationToken;

use super::model::{ScheduledSend, ScheduledStatus};
use super::policy;
use super::{Inner, now_ms};
use crate::domain::send::{SendKind, SendRequest};
use crate::domain::time::unix_now;
use crate::messages::{BoundedSend, SendFailure};
use crate::store::{DueEntry, StoreResult};

/// Sessions with a due send read per look at the due index, among which
/// the least recently served get the free slots.
const CANDIDATES: usize = 64;

/// The longest sleep: a guard against wall-clock jumps, not a polling interval.
const FALLBACK_SLEEP: Duration = Duration::from_secs(300);

/// The pause after a store failure, so a failing store is not hammered.
const ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Past this many remembered sessions, the turns of sessions not in flight
/// are forgotten (a forgotten session simply counts as never served).
const SERVED_MEMORY: usize = 10_000;

/// The sends in flight, one per session.
#[derive(Default)]
struct InFlight {
    tasks: JoinSet<(String, StoreResult<()>)>,
    sessions: HashSet<String>,
    by_task: HashMap<Id, String>,
}

impl InFlight {
    fn len(&self) -> usize {
        self.tasks.len()
    }

    fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    fn start(&mut self, inner: Arc<Inner>, entry: DueEntry) {
        let sid = entry.session_id.clone();
        self.sessions.insert(sid.clone());
        let handle = self.tasks.spawn(async move {
            let result = inner.process(&entry).await;
            (entry.session_id, result)
        });
        self.by_task.insert(handle.id(), sid);
    }

    /// The next send to finish: its session is free again; whether the
    /// store failed it.
    async fn finished(&mut self) -> Option<bool> {
        let done = self.tasks.join_next_with_id().await?;
        let (id, failed) = match done {
            Ok((id, (sid, result))) => {
                if let Err(e) = &result {
                    tracing::error!(session = %sid, error = %e, "scheduled send could not be processed");
                }
                (id, result.is_err())
            }
            Err(e) => {
                tracing::error!(error = %e, "a scheduled send's task failed");
                (e.id(), true)
            }
        };
        if let Some(sid) = self.by_task.remove(&id) {
            self.sessions.remove(&sid);
        }
        Some(failed)
    }
}

/// Which of `heads` (one due entry per session, in due order) get the
/// `free` slots: the sessions served longest ago (never served first), and
/// among those served equally long ago, the earliest due.
fn take_turns(heads: Vec<DueEntry>, served: &HashMap<String, u64>, free: usize) -> Vec<DueEntry> {
    let mut heads: Vec<(usize, DueEntry)> = heads.into_iter().enumerate().collect();
    heads.sort_by_key(|(i, e)| (served.get(&e.session_id).copied().unwrap_or(0), *i));
    heads.into_iter().take(free).map(|(_, e)| e).collect()
}

impl Inner {
    /// Runs until `cancel`; the sends in flight then are finished first.
    pub(super) async fn run(self: Arc<Self>, cancel: CancellationToken) {
        // After a start every parked send is looked at again.
        if let Err(e) = self.store.wake_waiting(None, now_ms()) {
            tracing::error!(error = %e, "could not re-check waiting scheduled sends");
        }
        let slots = self.config.concurrency.max(1);
        let mut flight = InFlight::default();
        let mut served: HashMap<String, u64> = HashMap::new();
        let mut turn = 0u64;
        let mut store_failed = false;
        loop {
            if cancel.is_cancelled() {
                break;
            }
            self.wake.next_due.store(0, Ordering::SeqCst);
            self.wake_connected_sessions();
            let free = slots.saturating_sub(flight.len());
            let sleep = if store_failed {
                store_failed = false;
                ERROR_PAUSE
            } else if free == 0 {
                // A slot frees when a send finishes, which wakes the loop.
                FALLBACK_SLEEP
            } else {
                match self
                    .store
                    .due_scheduled_heads(now_ms(), &flight.sessions, CANDIDATES)
                {
                    Ok(heads) if !heads.due.is_empty() => {
                        for entry in take_turns(heads.due, &served, free) {
                            turn += 1;
                            served.insert(entry.session_id.clone(), turn);
                            flight.start(self.clone(), entry);
                        }
                        if served.len() > SERVED_MEMORY {
                            served.retain(|sid, _| flight.sessions.contains(sid));
                        }
                        continue;
                    }
                    Ok(heads) => {
                        self.wake
                            .next_due
                            .store(heads.next_ms.unwrap_or(u64::MAX), Ordering::SeqCst);
                        policy::sleep_for(heads.next_ms, now_ms(), FALLBACK_SLEEP)
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "could not read the due scheduled sends");
                        ERROR_PAUSE
                    }
                }
            };
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = self.wake.notify.notified() => {}
                Some(failed) = flight.finished(), if !flight.is_empty() => {
                    store_failed |= failed;
                }
                _ = tokio::time::sleep(sleep) => {}
            }
        }
        // A graceful stop lets the sends in flight finish (each is bounded).
        while flight.finished().await.is_some() {}
    }

    /// Makes the parked sends of sessions that connected due now.
    fn wake_connected_sessions(&self) {
        let sessions =
            std::mem::take(&mut *self.wake.woken.lock().unwrap_or_else(|p| p.into_inner()));
        let now = now_ms();
        for sid in sessions {
            match self.store.wake_waiting(Some(&sid), now) {
                Ok(0) => {}
                Ok(n) => {
                    tracing::debug!(session = %sid, sends = n, "session connected; waiting scheduled sends are due")
                }
                Err(e) => {
                    tracing::error!(session = %sid, error = %e, "could not wake waiting scheduled sends")
                }
            }
        }
    }

    /// Handles one due entry.
    async fn process(&self, entry: &DueEntry) -> StoreResult<()> {
        let (sid, id) = (entry.session_id.as_str(), entry.id.as_str());
        let Some(send) = self.store.get_scheduled(sid, id)? else {
            return self.store.drop_due_entry(entry.due_ms, id);
        };
        if send.due_ms != Some(entry.due_ms) {
            return self.store.drop_due_entry(entry.due_ms, id);
        }
        // Interrupted while sending (the gateway stopped), or an earlier
        // attempt was abandoned at its time bound: the network may have it.
        if (send.status == ScheduledStatus::Sending || send.attempts > 0)
            && self.network_has(sid, &send.message_id).await
        {
            tracing::info!(session = %sid, scheduled_id = %id, "interrupted scheduled send had reached the network");
            return self.sent(&send, None);
        }
        if let Err(e) = self.sessions.sender(sid) {
            return self.not_sent(&send, SendFailure::of(&e));
        }
        // Sends of this session parked while it could not send came due
        // before this one: they go first (made due just before it), so the
        // session's order holds even when it can send again before its
        // `connected` event has woken them.
        if self
            .store
            .wake_waiting(Some(sid), entry.due_ms.saturating_sub(1))?
            > 0
        {
            return Ok(());
        }
        let claimed = self.transition(&send, |s| {
            s.status = ScheduledStatus::Sending;
            s.attempts += 1;
        })?;
        let Some(send) = claimed else {
            return Ok(());
        };
        let request = match self.request_of(&send)? {
            Ok(request) => request,
            Err(reason) => return self.failed(&send, reason),
        };
        let bound = self.config.send_timeout;
        match (self.send)
            .send_typed_within(sid, request, &send.message_id, bound)
            .await
        {
            BoundedSend::Sent(record) => self.sent(&send, Some(record.timestamp)),
            BoundedSend::Reached => self.sent(&send, None),
            BoundedSend::Failed(failure) => self.not_sent(&send, failure),
        }
    }

    /// Whether the network says it has a message under `message_id` from
    /// the session (asked under the send bound; a network that cannot tell,
    /// or does not answer, counts as no).
    async fn network_has(&self, session_id: &str, message_id: &str) -> bool {
        let asked = self.send.has_sent(session_id, message_id);
        matches!(
            tokio::time::timeout(self.config.send_timeout, asked).await,
            Ok(Ok(Some(true)))
        )
    }

    /// The stored request, validated again; `Err` with the reason when it is
    /// missing or no longer valid.
    fn request_of(&self, send: &ScheduledSend) -> StoreResult<Result<SendRequest, String>> {
        let Some(bytes) = self.store.scheduled_request(&send.session_id, &send.id)? else {
            return Ok(Err("the stored request body is missing".into()));
        };
        let body: serde_json::Value = serde_json::from_slice(&bytes)?;
        let Some(kind) = SendKind::parse(&send.kind) else {
            return Ok(Err(format!("`{}` is not a send kind", send.kind)));
        };
        Ok(SendRequest::from_json(kind, body)
            .map_err(|e| format!("the stored request is no longer valid: {e}")))
    }

    /// Changes `send` in the store unless it changed since it was read
    /// (cancelled, deleted, moved); the changed record, or `None`.
    fn transition(
        &self,
        send: &ScheduledSend,
        f: impl FnOnce(&mut ScheduledSend),
    ) -> StoreResult<Option<ScheduledSend>> {
        let changed = self
            .store
            .update_scheduled(&send.session_id, &send.id, |s| {
                if s.status.is_terminal() || s.due_ms != send.due_ms {
                    return false;
                }
                f(s);
                true
            })?;
        Ok(changed.and_then(|(s, written)| written.then_some(s)))
    }

    fn sent(&self, send: &ScheduledSend, network_ts: Option<i64>) -> StoreResult<()> {
        let now = unix_now();
        self.transition(send, |s| {
            s.status = ScheduledStatus::Sent;
            s.sent_at = Some(network_ts.unwrap_or(now));
            s.finished_at = Some(now);
            s.last_error = None;
        })?;
        tracing::info!(session = %send.session_id, scheduled_id = %send.id, message_id = %send.message_id, "scheduled send sent");
        Ok(())
    }

    fn failed(&self, send: &ScheduledSend, reason: String) -> StoreResult<()> {
        tracing::warn!(session = %send.session_id, scheduled_id = %send.id, %reason, "scheduled send failed");
        let now = unix_now();
        self.transition(send, |s| {
            s.status = ScheduledStatus::Failed;
            s.finished_at = Some(now);
            s.last_error = Some(reason);
        })?;
        Ok(())
    }

    /// A send that did not go out: wait for the session, retry later or fail.
    fn not_sent(&self, send: &ScheduledSend, failure: SendFailure) -> StoreResult<()> {
        match failure {
            SendFailure::Gone => {
                if self.store.get_session(&send.session_id)?.is_none() {
                    // Deleted: the delete removed the send with its session;
                    // drop a due row that might have outlived it.
                    if let Some(due) = send.due_ms {
                        self.store.drop_due_entry(due, &send.id)?;
                    }
                    return Ok(());
                }
                // Stored but not attached: the gateway is stopping, or the
                // session could not be restored.
                let reason = format!(
                    "session `{}` is not attached to its network",
                    send.session_id
                );
                self.wait(send, &reason)
            }
            SendFailure::Wait(reason) => self.wait(send, &reason),
            // The account's reach-out timelock: due again when it ends, the
            // wait limit and the attempts untouched (a send held before the
            // network gives back the attempt its claim counted).
            SendFailure::Held {
                reason,
                until,
                attempted,
            } => {
                tracing::info!(session = %send.session_id, scheduled_id = %send.id, until, "scheduled send held for a reach-out timelock");
                self.transition(send, |s| {
                    s.status = ScheduledStatus::Scheduled;
                    s.due_ms = Some(policy::secs_to_ms(until));
                    s.waiting = false;
                    if !attempted {
                        s.attempts = s.attempts.saturating_sub(1);
                    }
                    s.last_error = Some(reason);
                })?;
                Ok(())
            }
            // The store reopens itself: try again later, neither counted
            // as an attempt nor held to the wait limit.
            SendFailure::Storage(reason) => {
                let delay = self.config.retry_delay(send.attempts.max(1));
                let due = now_ms().saturating_add(delay.as_millis() as u64);
                tracing::warn!(session = %send.session_id, scheduled_id = %send.id, %reason, "scheduled send waits for the store");
                self.transition(send, |s| {
                    s.status = ScheduledStatus::Scheduled;
                    s.due_ms = Some(due);
                    s.last_error = Some(reason);
                })?;
                Ok(())
            }
            SendFailure::Retry(reason) if send.attempts < self.config.max_attempts => {
                let delay = self.config.retry_delay(send.attempts.max(1));
                let due = now_ms().saturating_add(delay.as_millis() as u64);
                tracing::info!(session = %send.session_id, scheduled_id = %send.id, attempts = send.attempts, %reason, "scheduled send will be retried");
                self.transition(send, |s| {
                    s.status = ScheduledStatus::Scheduled;
                    s.due_ms = Some(due);
                    s.last_error = Some(reason);
                })?;
                Ok(())
            }
            SendFailure::Retry(reason) => {
                let attempts = send.attempts;
                self.failed(send, format!("failed after {attempts} attempts: {reason}"))
            }
            SendFailure::Fail(reason) | SendFailure::Refused(reason) => self.failed(send, reason),
        }
    }

    /// Parks a due send until its session can send, or fails it once the wait
    /// limit has passed.
    fn wait(&self, send: &ScheduledSend, reason: &str) -> StoreResult<()> {
        let deadline =
            policy::wait_deadline_ms(send.send_at, self.started_ms, self.config.max_wait);
        if now_ms() >= deadline {
            return self.failed(send, policy::gave_up_reason(reason, self.config.max_wait));
        }
        tracing::debug!(session = %send.session_id, scheduled_id = %send.id, %reason, "scheduled send waits for its session");
        let last_error = policy::waiting_reason(reason, deadline);
        self.transition(send, |s| {
            s.status = ScheduledStatus::Scheduled;
            s.due_ms = Some(deadline);
            s.waiting = true;
            s.last_error = Some(last_error);
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(session: &str, due_ms: u64) -> DueEntry {
        DueEntry {
            due_ms,
            id: format!("{session}-{due_ms}"),
            session_id: session.to_owned(),
        }
    }

    fn sessions(picked: &[DueEntry]) -> Vec<&str> {
        picked.iter().map(|e| e.session_id.as_str()).collect()
    }

    #[test]
    fn sessions_never_served_go_first_then_those_served_longest_ago() {
        let heads = vec![entry("a", 1), entry("b", 2), entry("c", 3)];
        let served: HashMap<String, u64> = [("a".to_owned(), 7), ("c".to_owned(), 3)].into();
        let picked = take_turns(heads, &served, 2);
        assert_eq!(sessions(&picked), ["b", "c"]);
    }

    #[test]
    fn among_sessions_served_alike_the_earliest_due_goes_first() {
        let heads = vec![entry("x", 5), entry("y", 9)];
        let picked = take_turns(heads.clone(), &HashMap::new(), 1);
        assert_eq!(sessions(&picked), ["x"]);
        let picked = take_turns(heads, &HashMap::new(), 8);
        assert_eq!(sessions(&picked), ["x", "y"], "no more than there are");
    }
}
