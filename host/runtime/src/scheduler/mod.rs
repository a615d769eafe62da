//! Scheduled sends: a send with a future `send_at` is validated, stored and
//! sent at its time by one background task through the same send core as
//! every other send. The task hands several sessions' due sends to the
//! network at once (one at a time per session, in order), the sessions
//! taking turns, and bounds each send in time, so one tenant's slow send or
//! backlog does not hold back another's.
//!
//! Nothing is kept in memory per scheduled send: the store's due index
//! (`(due ms, id)`) tells the worker what is due and when the next one is, and
//! the worker sleeps until then. It wakes early through a [`Notify`] when a
//! sooner send is scheduled or when a session connects (the scheduler is an
//! event-bus [`Subscriber`] of `connected`), so a due send that waits for its
//! session goes out as soon as the session can send.
//!
//! "Sent late, never twice": the message id is chosen when the send is
//! scheduled and kept for every attempt; a send found `sending` after a stop
//! is first checked with [`SendCore::has_sent`], and otherwise repeated under
//! the same id, which the network treats as one message.

pub mod config;
pub use crate::domain::scheduled as model;
pub mod policy;
mod worker;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::domain::event::{Envelope, EventName};
use crate::domain::send::SendRequest;
use crate::domain::time::{unix_now, unix_now_ms};
use crate::events::Subscriber;
use crate::messages::{SendCore, new_message_id};
use crate::sessions::Sessions;
use crate::store::{Store, StoreError};
use config::ScheduleConfig;
use model::{ScheduledSend, ScheduledStatus, new_scheduled_id};

/// Why a scheduling operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// No session has this id.
    #[error("no session with id `{0}`")]
    SessionNotFound(String),
    /// No scheduled send has this id on the session.
    #[error("no scheduled send with id `{0}` on this session")]
    NotFound(String),
    /// The send is already sent, failed or cancelled.
    #[error("scheduled send `{id}` is {status}; only a scheduled send can be cancelled")]
    NotCancellable {
        /// The scheduled id.
        id: String,
        /// Its status.
        status: ScheduledStatus,
    },
    /// The send is being handed to the network right now.
    #[error("scheduled send `{0}` is being sent right now and can no longer be cancelled")]
    InProgress(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What wakes the worker early. Kept apart from [`Inner`] so the event-bus
/// subscriber holds no session registry (which holds the bus: a cycle).
#[derive(Default)]
struct Wakeup {
    /// Wakes the worker: a sooner send was scheduled or a session connected.
    notify: Notify,
    /// The due time the worker sleeps towards (Unix ms); 0 while it looks at
    /// the due index, so every new send wakes it then.
    next_due: AtomicU64,
    /// Sessions that connected since the worker last looked.
    woken: Mutex<HashSet<String>>,
}

struct Inner {
    store: Store,
    send: SendCore,
    sessions: Sessions,
    config: ScheduleConfig,
    wake: Arc<Wakeup>,
    /// Whether the worker runs.
    worker: crate::liveness::Liveness,
    /// When this scheduler was built, Unix ms (the wait limit of sends that
    /// came due during a downtime counts from here).
    started_ms: u64,
}

/// The scheduler; cheap to clone.
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

fn now_ms() -> u64 {
    unix_now_ms().max(0) as u64
}

impl Scheduler {
    /// A scheduler over the store, the send core and the session registry.
    /// Add its [`Scheduler::subscriber`] to the event bus before sessions are
    /// restored, and [`Scheduler::start`] it after.
    pub fn new(store: Store, send: SendCore, sessions: Sessions, config: ScheduleConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                send,
                sessions,
                config,
                wake: Arc::default(),
                worker: Default::default(),
                started_ms: now_ms(),
            }),
        }
    }

    /// The event-bus subscriber that wakes the worker when a session connects.
    pub fn subscriber(&self) -> Arc<dyn Subscriber> {
        Arc::new(ConnectedWatcher(self.inner.wake.clone()))
    }

    /// Starts the worker; it stops on `cancel` (a send in flight is finished first).
    pub fn start(&self, cancel: CancellationToken, tasks: &TaskTracker) {
        tasks.spawn(self.inner.worker.watch(self.inner.clone().run(cancel)));
    }

    /// Whether the worker is running (false before `start`, after it stopped or failed).
    pub fn worker_running(&self) -> bool {
        self.inner.worker.is_running()
    }

    /// Stores a validated send for `send_at` (Unix seconds). `body` is the
    /// request body as posted; it is sent again through validation at its
    /// time. `message_id` is the id it will be sent under (a new one when
    /// `None`): a caller that may schedule the same send twice (a redelivered
    /// queue command) gives the same id, and the network keeps one message.
    pub fn schedule(
        &self,
        session_id: &str,
        request: &SendRequest,
        body: Value,
        send_at: i64,
        message_id: Option<String>,
    ) -> Result<ScheduledSend, ScheduleError> {
        self.schedule_with(session_id, request, body, send_at, message_id, None)
    }

    /// [`Scheduler::schedule`] of a send held instead of sent now, with the
    /// reason as its `last_error` (a reach-out timelock's hold).
    pub fn schedule_held(
        &self,
        session_id: &str,
        request: &SendRequest,
        body: Value,
        until: i64,
        message_id: Option<String>,
        reason: String,
    ) -> Result<ScheduledSend, ScheduleError> {
        self.schedule_with(session_id, request, body, until, message_id, Some(reason))
    }

    fn schedule_with(
        &self,
        session_id: &str,
        request: &SendRequest,
        mut body: Value,
        send_at: i64,
        message_id: Option<String>,
        last_error: Option<String>,
    ) -> Result<ScheduledSend, ScheduleError> {
        if let Value::Object(fields) = &mut body {
            fields.remove("send_at");
        }
        let raw = serde_json::to_vec(&body).map_err(StoreError::from)?;
        let due_ms = policy::secs_to_ms(send_at);
        let send = ScheduledSend {
            id: new_scheduled_id(),
            session_id: session_id.to_owned(),
            kind: request.kind().as_str().to_owned(),
            to: request.to.to_string(),
            send_at,
            status: ScheduledStatus::Scheduled,
            created_at: unix_now(),
            attempts: 0,
            message_id: message_id.unwrap_or_else(new_message_id),
            sent_at: None,
            finished_at: None,
            last_error,
            body: serde_json::to_value(&request.content).map_err(StoreError::from)?,
            due_ms: Some(due_ms),
            waiting: false,
        };
        if !self.inner.store.insert_scheduled(&send, &raw)? {
            return Err(ScheduleError::SessionNotFound(session_id.to_owned()));
        }
        tracing::info!(session = %session_id, scheduled_id = %send.id, kind = %send.kind, send_at, "send scheduled");
        if due_ms < self.inner.wake.next_due.load(Ordering::SeqCst) {
            self.inner.wake.notify.notify_one();
        }
        Ok(send)
    }

    /// One scheduled send of a session.
    pub fn get(&self, session_id: &str, id: &str) -> Result<ScheduledSend, ScheduleError> {
        self.inner
            .store
            .get_scheduled(session_id, id)?
            .ok_or_else(|| ScheduleError::NotFound(id.to_owned()))
    }

    /// One page of scheduled sends, newest first: of one session, or of every
    /// session when `session_id` is `None`; only `statuses` (all when empty).
    pub fn list(
        &self,
        session_id: Option<&str>,
        statuses: &[ScheduledStatus],
        offset: usize,
        limit: usize,
    ) -> Result<Vec<ScheduledSend>, ScheduleError> {
        let store = &self.inner.store;
        Ok(match session_id {
            Some(sid) => store.list_scheduled(sid, statuses, offset, limit)?,
            None => store.list_all_scheduled(statuses, offset, limit)?,
        })
    }

    /// Cancels a send that is still `scheduled`; it leaves the due index at once.
    pub fn cancel(&self, session_id: &str, id: &str) -> Result<ScheduledSend, ScheduleError> {
        let now = unix_now();
        let changed = self.inner.store.update_scheduled(session_id, id, |s| {
            if s.status != ScheduledStatus::Scheduled {
                return false;
            }
            s.status = ScheduledStatus::Cancelled;
            s.finished_at = Some(now);
            true
        })?;
        match changed {
            None => Err(ScheduleError::NotFound(id.to_owned())),
            Some((send, true)) => {
                tracing::info!(session = %session_id, scheduled_id = %id, "scheduled send cancelled");
                Ok(send)
            }
            Some((send, false)) if send.status == ScheduledStatus::Sending => {
                Err(ScheduleError::InProgress(id.to_owned()))
            }
            Some((send, false)) => Err(ScheduleError::NotCancellable {
                id: id.to_owned(),
                status: send.status,
            }),
        }
    }
}

/// Notes sessions that connected and wakes the worker.
struct ConnectedWatcher(Arc<Wakeup>);

impl Subscriber for ConnectedWatcher {
    fn accept(&self, envelope: &Arc<Envelope>) {
        if envelope.event == EventName::Connected {
            self.0
                .woken
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(envelope.session_id.clone());
            self.0.notify.notify_one();
        }
    }
}
