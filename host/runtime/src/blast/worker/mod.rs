//! The one blast worker of the instance: one job and one recipient at a time.
//!
//! Each round it picks the oldest job that can make progress (pending with
//! `send_at` reached, or running, and its session online), claims it, and
//! sends up to [`BATCH`] recipients in id order, pausing `delay_ms` plus a
//! uniform 0..=`jitter_ms` after every attempt before the session's next
//! send. Before each recipient it reads the job's status (a cancel stops it)
//! and the session (a session that went offline sets the job aside; one
//! logged out or linked to another account fails it). A failed attempt returns the recipient to pending, to be
//! retried on a later pass over the job, until its last attempt dead-letters
//! it. When nothing is pending the job closes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Waker;
use super::config::BlastConfig;
use super::model::{BlastJob, JobStatus, SendOutcome};
use super::pacing::{Owed, pause};
use super::plan::{endpoint_kind, request_for};
use crate::domain::event::{Envelope, EventName};
use crate::domain::event_data::own::to_data;
use crate::domain::hooks::BlastEndpoints;
use crate::domain::send::SendKind;
use crate::domain::session::SessionStatus;
use crate::domain::time::{unix_now, unix_now_ms};
use crate::events::EventBus;
use crate::messages::{SendCore, new_message_id};
use crate::sessions::{SessionError, Sessions};
use crate::store::{NextRecipient, Store, StoreResult};

/// Recipients sent before the worker looks again for the oldest job that can
/// make progress (so a job set aside while its session was offline is
/// resumed promptly).
pub const BATCH: usize = 25;

/// A `blast_progress` event every this many successful sends.
pub const PROGRESS_EVERY: u64 = 25;

/// What the worker is built from.
pub(super) struct Parts {
    pub store: Store,
    pub send: SendCore,
    pub sessions: Sessions,
    pub bus: EventBus,
    pub config: BlastConfig,
    pub waker: Arc<Waker>,
    pub plugins: Option<Arc<dyn BlastEndpoints>>,
    pub counters: crate::counters::BlastCounters,
}

/// Whether a job's session can send now.
enum Ready {
    Yes,
    /// Offline, paused, stopping, or being deleted: come back later.
    Wait,
    /// The job can never send from this session again.
    Fail(String),
}

/// The worker's state; everything durable is in the store.
pub(super) struct Worker {
    pub(super) p: Parts,
    /// The last recipient handled per job, so a pass goes on where it was.
    cursors: HashMap<(String, u64), u64>,
    /// The body of the job being sent.
    body: Option<((String, u64), Arc<Value>)>,
    /// Sessions set aside after a send found them offline: until when, and
    /// the waker generation then (a connect since ends the wait).
    parked: HashMap<String, (Instant, u64)>,
    /// Jobs whose pending recipients are all held for their session's
    /// reach-out timelock, until the first hold ends.
    held: HashMap<(String, u64), Instant>,
    /// Per session: the pause owed after its previous send (see
    /// [`Owed`]). A job of another session does not wait it out.
    next_send: HashMap<String, Owed>,
    rng: StdRng,
}

mod send;

impl Worker {
    pub(super) fn new(p: Parts) -> Self {
        Self {
            p,
            cursors: HashMap::new(),
            body: None,
            parked: HashMap::new(),
            held: HashMap::new(),
            next_send: HashMap::new(),
            rng: StdRng::from_os_rng(),
        }
    }

    /// Works until `cancel`.
    pub(super) async fn run(mut self, cancel: CancellationToken) {
        if let Err(e) = self.recover_all().await {
            tracing::error!(error = %e, "blast recovery failed");
        }
        while !cancel.is_cancelled() {
            let wait = match self.pick() {
                Ok(Ok(job)) => match self.run_job(job, &cancel).await {
                    Ok(()) => continue,
                    Err(e) => {
                        tracing::error!(error = %e, "blast worker store failure");
                        self.p.config.offline_retry
                    }
                },
                Ok(Err(wait)) => wait,
                Err(e) => {
                    tracing::error!(error = %e, "blast worker store failure");
                    self.p.config.offline_retry
                }
            };
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.p.waker.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// The oldest job that can make progress, or how long to wait for one.
    fn pick(&mut self) -> StoreResult<Result<BlastJob, Duration>> {
        let mut jobs = self.p.store.list_blasts(None, None)?;
        jobs.retain(|j| !j.status.is_terminal());
        jobs.sort_unstable_by_key(|j| j.seq);
        self.cursors
            .retain(|(s, seq), _| jobs.iter().any(|j| j.seq == *seq && &j.session_id == s));
        self.held
            .retain(|(s, seq), _| jobs.iter().any(|j| j.seq == *seq && &j.session_id == s));
        let now = Instant::now();
        self.next_send.retain(|_, owed| owed.until > now);
        let now_ms = unix_now_ms();
        let mut wait = self.p.config.idle_poll;
        for job in jobs {
            if job.status == JobStatus::Pending
                && let Some(at) = job.send_at
                && at.saturating_mul(1000) > now_ms
            {
                let ms = at.saturating_mul(1000) - now_ms;
                wait = wait.min(Duration::from_millis(ms as u64));
                continue;
            }
            if let Some(left) = self.parked_for(&job.session_id) {
                wait = wait.min(left);
                continue;
            }
            if let Some(until) = self.held.get(&(job.session_id.clone(), job.seq)) {
                let left = until.saturating_duration_since(now);
                if !left.is_zero() {
                    wait = wait.min(left);
                    continue;
                }
                self.held.remove(&(job.session_id.clone(), job.seq));
            }
            match self.ready(&job) {
                Ready::Yes => return Ok(Ok(job)),
                Ready::Wait => wait = wait.min(self.p.config.offline_retry),
                Ready::Fail(reason) => self.fail(&job, &reason)?,
            }
        }
        Ok(Err(wait))
    }

    fn parked_for(&mut self, session_id: &str) -> Option<Duration> {
        let (until, generation) = *self.parked.get(session_id)?;
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || generation != self.p.waker.generation() {
            self.parked.remove(session_id);
            return None;
        }
        Some(left)
    }

    fn ready(&self, job: &BlastJob) -> Ready {
        let info = match self.p.sessions.get(&job.session_id) {
            Ok(info) => info,
            Err(SessionError::NotFound(_)) => return Ready::Wait,
            Err(e) => {
                tracing::warn!(session = %job.session_id, error = %e, "blast worker could not read the session");
                return Ready::Wait;
            }
        };
        match &info.record.account {
            None => {
                return Ready::Fail(
                    "the session was logged out; the account the blast was created under no longer sends"
                        .into(),
                );
            }
            Some(a) if a.jid != job.account => {
                return Ready::Fail(format!(
                    "the session is now linked to {}, not {} which the blast was created under",
                    a.jid, job.account
                ));
            }
            Some(_) => {}
        }
        if info.record.paused || info.state.status != SessionStatus::LoggedIn {
            return Ready::Wait;
        }
        Ready::Yes
    }

    /// Claims the job if pending, then sends up to [`BATCH`] recipients.
    async fn run_job(&mut self, job: BlastJob, cancel: &CancellationToken) -> StoreResult<()> {
        let (sid, seq) = (job.session_id.clone(), job.seq);
        if job.in_flight.is_some() && !self.recover(&job).await? {
            self.parked.insert(
                sid,
                (
                    Instant::now() + self.p.config.offline_retry,
                    self.p.waker.generation(),
                ),
            );
            return Ok(());
        }
        if job.status == JobStatus::Pending {
            let now = unix_now();
            let claimed = self
                .p
                .store
                .modify_blast(&sid, seq, |j| if j.claim(now) { Ok(()) } else { Err(()) })?;
            if claimed != Some(Ok(())) {
                return Ok(());
            }
            tracing::info!(session = %sid, job = %job.id, "blast started");
        }
        let kind = endpoint_kind(&job.endpoint);
        let plugin_serves = || {
            self.p
                .plugins
                .as_ref()
                .is_some_and(|p| p.has_endpoint(&sid, &job.endpoint))
        };
        if kind.is_none() && !plugin_serves() {
            let reason = format!(
                "the endpoint `{}` no longer exists (no loaded plugin serves it)",
                job.endpoint
            );
            return self.fail(&job, &reason);
        }
        let Some(body) = self.body_of(&job)? else {
            return self.fail(&job, "the blast's body is missing from the store");
        };
        for _ in 0..BATCH {
            if cancel.is_cancelled() {
                return Ok(());
            }
            let Some(job) = self.p.store.get_blast_at(&sid, seq)? else {
                return Ok(());
            };
            if job.status != JobStatus::Running {
                return Ok(());
            }
            match self.ready(&job) {
                Ready::Yes => {}
                Ready::Wait => return Ok(()),
                Ready::Fail(reason) => return self.fail(&job, &reason),
            }
            let cursor = self.cursors.get(&(sid.clone(), seq)).copied().unwrap_or(0);
            let next = match self
                .p
                .store
                .next_pending_recipient(&job, cursor, unix_now())?
            {
                NextRecipient::Ready(next) => next,
                // Only recipients held for the account's reach-out timelock
                // are left: the job steps aside until the first hold ends,
                // and the worker goes on with other jobs meanwhile.
                NextRecipient::HeldUntil(until) => {
                    let left = Duration::from_secs(until.saturating_sub(unix_now()).max(1) as u64);
                    tracing::info!(session = %sid, job = %job.id, until, "blast waits for the reach-out timelock to end");
                    self.held.insert((sid.clone(), seq), Instant::now() + left);
                    return Ok(());
                }
                NextRecipient::Done => return self.close(&job),
            };
            let wait = self.next_send.get(&sid).map_or(Duration::ZERO, |owed| {
                owed.ready_at(job.seq, &job.options)
                    .saturating_duration_since(Instant::now())
            });
            if !wait.is_zero() {
                tokio::select! {
                    _ = cancel.cancelled() => return Ok(()),
                    // A cancel (or other news) during a long pause: look again.
                    _ = self.p.waker.notified() => continue,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
            if !self.send_one(&job, kind, &body, next.id).await? {
                return Ok(());
            }
        }
        Ok(())
    }

    fn body_of(&mut self, job: &BlastJob) -> StoreResult<Option<Arc<Value>>> {
        let key = (job.session_id.clone(), job.seq);
        if let Some((k, body)) = &self.body
            && *k == key
        {
            return Ok(Some(body.clone()));
        }
        let Some(body) = self.p.store.blast_body(&job.session_id, job.seq)? else {
            return Ok(None);
        };
        let body = Arc::new(body);
        self.body = Some((key, body.clone()));
        Ok(Some(body))
    }

    pub(super) fn progress(&self, job: &BlastJob) {
        if job.sent_count > 0 && job.sent_count.is_multiple_of(PROGRESS_EVERY) {
            self.publish(job, EventName::BlastProgress);
        }
    }

    fn publish(&self, job: &BlastJob, event: EventName) {
        let data = to_data(&job.event_data(event == EventName::BlastCompleted));
        self.p
            .bus
            .publish(Envelope::now(&job.session_id, event, data));
    }

    fn close(&mut self, job: &BlastJob) -> StoreResult<()> {
        let now = unix_now();
        let closed = self.p.store.modify_blast(&job.session_id, job.seq, |j| {
            if j.close(now) { Ok(j.clone()) } else { Err(()) }
        })?;
        if let Some(Ok(job)) = closed {
            tracing::info!(session = %job.session_id, job = %job.id, status = job.status.as_str(), sent = job.sent_count, dlq = job.dlq_count, "blast finished");
            self.publish(&job, EventName::BlastCompleted);
        }
        Ok(())
    }

    fn fail(&mut self, job: &BlastJob, reason: &str) -> StoreResult<()> {
        if let Some(job) = self
            .p
            .store
            .fail_blast(&job.session_id, job.seq, reason, unix_now())?
        {
            tracing::warn!(session = %job.session_id, job = %job.id, %reason, "blast failed");
            self.publish(&job, EventName::BlastCompleted);
        }
        Ok(())
    }
}
