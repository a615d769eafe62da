//! Blasts: one message payload fanned out to many recipients by a single,
//! paced background worker, with dedup, retries, a dead-letter state and
//! recovery after a crash.
//!
//! - [`model`]: the job and recipient records, their states and the pure
//!   transition rules
//! - [`plan`]: checking a create request and planning its recipients in memory
//! - [`pacing`]: the pause between sends
//! - [`recovery`]: what to do with a send a crash interrupted
//! - `worker`: the one worker of the instance
//! - [`config`]: the worker's knobs
//!
//! [`Blasts`] is the handle the API uses: create, read, cancel, retry. Jobs
//! and recipients live in the store (`store/blasts.rs`); the worker only reads
//! and changes them there, so a restart resumes where it stopped.

pub mod config;
pub use crate::domain::blast::{model, plan};
pub mod pacing;
pub mod recovery;
mod worker;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::domain::event::{Envelope, EventName};
use crate::domain::event_data::own::to_data;
use crate::domain::hooks::BlastEndpoints;
use crate::domain::send::FieldError;
use crate::domain::time::unix_now;
use crate::events::{EventBus, Subscriber};
use crate::messages::SendCore;
use crate::sessions::{SessionError, Sessions};
use crate::store::{Store, StoreError};
use config::BlastConfig;
use model::{BlastJob, BlastRecipient, JobStatus, RecipientStatus, Refusal};
use plan::BlastRequest;

/// Why a blast operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum BlastError {
    /// The session is unknown or cannot own a blast.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// No such job on this session.
    #[error("no blast with id `{0}` on this session")]
    NotFound(String),
    /// A field of the create request is invalid.
    #[error(transparent)]
    Invalid(#[from] FieldError),
    /// Cancel or retry does not fit the job's state.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A background task failed.
    #[error("{0}")]
    Internal(String),
}

/// What a create made.
#[derive(Debug, Clone)]
pub struct Created {
    /// The new job (status pending).
    pub job: BlastJob,
    /// Recipients recorded as `skipped_dup`.
    pub skipped_dup: u64,
}

struct Inner {
    store: Store,
    sessions: Sessions,
    bus: EventBus,
    config: BlastConfig,
    wake: Arc<Notify>,
    plugins: Option<Arc<dyn BlastEndpoints>>,
    counters: crate::counters::BlastCounters,
    worker: crate::liveness::Liveness,
}

/// The blast service; cheap to clone.
#[derive(Clone)]
pub struct Blasts {
    inner: Arc<Inner>,
    waker: Arc<Waker>,
}

impl Blasts {
    /// Starts the worker (it first resolves sends a crash interrupted) and
    /// returns the handle. Call after the sessions are restored.
    #[allow(clippy::too_many_arguments)] // the parts the server wires; one call site
    pub fn start(
        store: Store,
        send: SendCore,
        sessions: Sessions,
        bus: EventBus,
        config: BlastConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
        plugins: Option<Arc<dyn BlastEndpoints>>,
    ) -> Self {
        let wake = Arc::new(Notify::new());
        let counters = crate::counters::BlastCounters::default();
        let waker = Arc::new(Waker {
            wake: wake.clone(),
            generation: AtomicU64::new(0),
        });
        let worker = worker::Worker::new(worker::Parts {
            store: store.clone(),
            send,
            sessions: sessions.clone(),
            bus: bus.clone(),
            config: config.clone(),
            waker: waker.clone(),
            plugins: plugins.clone(),
            counters: counters.clone(),
        });
        let alive = crate::liveness::Liveness::default();
        tasks.spawn(alive.watch(worker.run(cancel)));
        Self {
            inner: Arc::new(Inner {
                store,
                sessions,
                bus,
                config,
                wake,
                plugins,
                counters,
                worker: alive,
            }),
            waker,
        }
    }

    /// The send counters (registered by the metrics module).
    pub fn counters(&self) -> &crate::counters::BlastCounters {
        &self.inner.counters
    }

    /// Whether the worker is running (it stops only on shutdown, unless it failed).
    pub fn worker_running(&self) -> bool {
        self.inner.worker.is_running()
    }

    /// The event-bus subscriber that wakes the worker when a session comes
    /// online or logs out; add it to the bus.
    pub fn waker(&self) -> Arc<dyn Subscriber> {
        self.waker.clone()
    }

    /// Creates a job: checks everything in memory first (nothing is written
    /// for a bad request), then writes the job and every recipient in one
    /// transaction off the async threads.
    pub async fn create(&self, session_id: &str, req: BlastRequest) -> Result<Created, BlastError> {
        let info = self.inner.sessions.get(session_id)?;
        let account = info.record.account.ok_or_else(|| {
            SessionError::WrongState(format!(
                "session `{session_id}` has no linked account; pair it before creating a blast"
            ))
        })?;
        let store = self.inner.store.clone();
        let max = self.inner.config.max_recipients;
        let sid = session_id.to_owned();
        let plugins = self.inner.plugins.clone();
        let created = tokio::task::spawn_blocking(move || -> Result<Created, BlastError> {
            let valid = plan::validate_with(req, max, |key| {
                plugins.as_ref().is_some_and(|p| p.has_endpoint(&sid, key))
            })?;
            let already = if valid.options.dedup_across_jobs {
                store.blast_already_sent(&sid, &valid.recipients)?
            } else {
                HashSet::new()
            };
            let now = unix_now();
            let (rows, accepted) = plan::plan(&valid.recipients, &already, now);
            let skipped_dup = rows.len() as u64 - accepted;
            let job = BlastJob {
                id: uuid::Uuid::new_v4().to_string(),
                seq: 0,
                session_id: sid,
                account: account.jid,
                endpoint: valid.endpoint.clone(),
                status: JobStatus::Pending,
                options: valid.options,
                total: accepted,
                sent_count: 0,
                failed_count: 0,
                dlq_count: 0,
                skipped_dup_count: skipped_dup,
                send_at: valid.send_at,
                created_at: now,
                started_at: None,
                finished_at: None,
                in_flight: None,
                reason: None,
            };
            let seq = store.insert_blast(&job, &valid.body, &rows)?;
            Ok(Created {
                job: BlastJob { seq, ..job },
                skipped_dup,
            })
        })
        .await
        .map_err(|e| BlastError::Internal(format!("blast create task failed: {e}")))??;
        tracing::info!(session = %session_id, job = %created.job.id, total = created.job.total, skipped_dup = created.skipped_dup, "blast created");
        self.inner.wake.notify_one();
        Ok(created)
    }

    /// One job.
    pub fn get(&self, session_id: &str, job_id: &str) -> Result<BlastJob, BlastError> {
        self.inner.sessions.get(session_id)?;
        self.inner
            .store
            .get_blast(session_id, job_id)?
            .ok_or_else(|| BlastError::NotFound(job_id.to_owned()))
    }

    /// Jobs of a session, or of every session, optionally of one status; newest first.
    pub fn list(
        &self,
        session_id: Option<&str>,
        status: Option<JobStatus>,
    ) -> Result<Vec<BlastJob>, BlastError> {
        Ok(self.inner.store.list_blasts(session_id, status)?)
    }

    /// A page of a job's recipients in id order.
    pub fn recipients(
        &self,
        session_id: &str,
        job_id: &str,
        status: Option<RecipientStatus>,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<BlastRecipient>, BlastError> {
        let job = self.get(session_id, job_id)?;
        Ok(self
            .inner
            .store
            .list_blast_recipients(&job, status, offset, limit)?)
    }

    /// Cancels a pending or running job; its unprocessed recipients stay
    /// pending. Emits `blast_completed`.
    pub fn cancel(&self, session_id: &str, job_id: &str) -> Result<BlastJob, BlastError> {
        let job = self.get(session_id, job_id)?;
        let now = unix_now();
        let cancelled = self
            .inner
            .store
            .modify_blast(session_id, job.seq, |j| j.cancel(now).map(|()| j.clone()))?
            .ok_or_else(|| BlastError::NotFound(job_id.to_owned()))??;
        tracing::info!(session = %session_id, job = %job_id, "blast cancelled");
        // The worker may be pausing before this job's next send: let it look again.
        self.inner.wake.notify_one();
        self.inner.bus.publish(Envelope::now(
            session_id,
            EventName::BlastCompleted,
            to_data(&cancelled.event_data(true)),
        ));
        Ok(cancelled)
    }

    /// Returns a stopped job's dlq and failed recipients to pending and
    /// reopens it as pending.
    pub fn retry(&self, session_id: &str, job_id: &str) -> Result<BlastJob, BlastError> {
        self.inner.sessions.get(session_id)?;
        let job = self
            .inner
            .store
            .retry_blast(session_id, job_id, unix_now())?
            .ok_or_else(|| BlastError::NotFound(job_id.to_owned()))??;
        tracing::info!(session = %session_id, job = %job_id, "blast retried");
        self.inner.wake.notify_one();
        Ok(job)
    }
}

/// Wakes the worker when a session comes online or logs out, and counts those
/// moments so the worker can tell whether a session it set aside may have
/// changed since.
pub(crate) struct Waker {
    wake: Arc<Notify>,
    generation: AtomicU64,
}

impl Waker {
    /// How many connect and logout events have been seen.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Waits until woken (a permit left by an earlier wake counts).
    pub(crate) async fn notified(&self) {
        self.wake.notified().await
    }
}

impl Subscriber for Waker {
    fn accept(&self, envelope: &Arc<Envelope>) {
        if matches!(envelope.event, EventName::Connected | EventName::LoggedOut) {
            self.generation.fetch_add(1, Ordering::SeqCst);
            self.wake.notify_one();
        }
    }
}
