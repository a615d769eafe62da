//! The scheduler's one worker task: it sleeps until the earliest due entry,
//! then takes due entries in order (earliest first, one at a time) and sends,
//! parks, retries or fails each one. Every decision is one store transaction
//! that also moves the entry out of "due now", so the loop always progresses.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::model::{ScheduledSend, ScheduledStatus};
use super::policy;
use super::{Inner, now_ms};
use crate::domain::send::{SendKind, SendRequest};
use crate::domain::time::unix_now;
use crate::messages::SendFailure;
use crate::sessions::SessionError;
use crate::store::{DueEntry, StoreResult};

/// Due entries read per look at the due index.
const BATCH: usize = 64;

/// The longest sleep: a guard against wall-clock jumps, not a polling interval.
const FALLBACK_SLEEP: Duration = Duration::from_secs(300);

/// The pause after a store failure, so a failing store is not hammered.
const ERROR_PAUSE: Duration = Duration::from_secs(1);

impl Inner {
    /// Runs until `cancel`.
    pub(super) async fn run(self: Arc<Self>, cancel: CancellationToken) {
        // After a start every parked send is looked at again.
        if let Err(e) = self.store.wake_waiting(None, now_ms()) {
            tracing::error!(error = %e, "could not re-check waiting scheduled sends");
        }
        loop {
            if cancel.is_cancelled() {
                return;
            }
            self.wake.next_due.store(0, Ordering::SeqCst);
            self.wake_connected_sessions();
            let failed = match self.store.due_scheduled(now_ms(), BATCH) {
                Ok(batch) if !batch.is_empty() => {
                    let mut failed = false;
                    for entry in batch {
                        if cancel.is_cancelled() {
                            return;
                        }
                        if let Err(e) = self.process(&entry).await {
                            tracing::error!(scheduled_id = %entry.id, error = %e, "scheduled send could not be processed");
                            failed = true;
                            break;
                        }
                    }
                    if !failed {
                        continue;
                    }
                    true
                }
                Ok(_) => false,
                Err(e) => {
                    tracing::error!(error = %e, "could not read the due scheduled sends");
                    true
                }
            };
            let sleep = if failed {
                ERROR_PAUSE
            } else {
                match self.store.next_scheduled_due() {
                    Ok(next) => {
                        self.wake
                            .next_due
                            .store(next.unwrap_or(u64::MAX), Ordering::SeqCst);
                        policy::sleep_for(next, now_ms(), FALLBACK_SLEEP)
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "could not read the next due scheduled send");
                        ERROR_PAUSE
                    }
                }
            };
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.wake.notify.notified() => {}
                _ = tokio::time::sleep(sleep) => {}
            }
        }
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
        // Interrupted while sending (the gateway stopped): the network may have it.
        if send.status == ScheduledStatus::Sending
            && matches!(
                self.send.has_sent(sid, &send.message_id).await,
                Ok(Some(true))
            )
        {
            tracing::info!(session = %sid, scheduled_id = %id, "interrupted scheduled send had reached the network");
            return self.sent(&send, None);
        }
        if let Err(e) = self.sessions.sender(sid) {
            return self.not_sent(&send, &e);
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
        match self.send.send_typed(sid, request, &send.message_id).await {
            Ok(record) => self.sent(&send, Some(record.timestamp)),
            Err(e) => self.not_sent(&send, &e),
        }
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
    fn not_sent(&self, send: &ScheduledSend, err: &SessionError) -> StoreResult<()> {
        match SendFailure::of(err) {
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
