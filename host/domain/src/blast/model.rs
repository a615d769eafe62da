//! What a blast is: the job, its recipients, their states, and the pure rules
//! that move them. The store applies these rules inside its transactions; the
//! worker and the API decide when.

use serde::{Deserialize, Serialize};

use crate::event_data::own::{BlastCompletion, BlastEventData};
use crate::time::iso8601;

/// Declares a status enum with its wire spellings in one place.
macro_rules! statuses {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $wire:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $(#[doc = $wire] $variant),* }

        impl $name {
            /// Every value, in the order of the API reference.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),* }
            }

            /// Parses a wire spelling.
            pub fn parse(s: &str) -> Option<$name> {
                match s { $($wire => Some($name::$variant),)* _ => None }
            }

            /// The wire spellings joined with `, ` (for error messages).
            pub fn names() -> String {
                Self::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            }
        }
    };
}

statuses! {
    /// Where a blast job is in its life.
    JobStatus {
        Pending => "pending",
        Running => "running",
        Completed => "completed",
        CompletedWithFailures => "completed_with_failures",
        Cancelled => "cancelled",
        Failed => "failed",
    }
}

statuses! {
    /// Where one recipient of a blast is.
    RecipientStatus {
        Pending => "pending",
        Sending => "sending",
        Sent => "sent",
        Failed => "failed",
        Dlq => "dlq",
        SkippedDup => "skipped_dup",
    }
}

impl JobStatus {
    /// Completed, completed with failures, cancelled or failed: the worker
    /// never touches the job again unless it is retried.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Completed
                | JobStatus::CompletedWithFailures
                | JobStatus::Cancelled
                | JobStatus::Failed
        )
    }
}

/// The pacing and retry options of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BlastOptions {
    /// Base pause between sends, in milliseconds.
    pub delay_ms: u64,
    /// Extra uniform random pause of 0..=jitter_ms per send.
    pub jitter_ms: u64,
    /// Send attempts per recipient before it goes to `dlq`.
    pub max_attempts: u32,
    /// Skip recipients an earlier job of the session already sent to.
    pub dedup_across_jobs: bool,
}

impl Default for BlastOptions {
    fn default() -> Self {
        Self {
            delay_ms: 1000,
            jitter_ms: 0,
            max_attempts: 3,
            dedup_across_jobs: false,
        }
    }
}

/// A stored blast job. The body lives in its own table, so reading a job to
/// check its status never decodes a large media body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlastJob {
    /// UUID v4.
    pub id: String,
    /// Position in the creation order of every job of the instance.
    pub seq: u64,
    /// The session that sends.
    pub session_id: String,
    /// The JID of the account the job was created under; a session linked to
    /// another account (or to none) fails the job instead of sending from it.
    pub account: String,
    /// The send kind (`text`, `cta-url`, …).
    pub endpoint: String,
    /// Where the job is.
    pub status: JobStatus,
    /// Pacing and retry options.
    pub options: BlastOptions,
    /// Recipients accepted into the job after dedup.
    pub total: u64,
    /// Successful sends.
    pub sent_count: u64,
    /// Every failed attempt, including ones that later succeeded.
    pub failed_count: u64,
    /// Recipients now in `dlq`.
    pub dlq_count: u64,
    /// Recipients skipped as duplicates.
    pub skipped_dup_count: u64,
    /// Unix seconds before which the job does not start.
    pub send_at: Option<i64>,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Unix seconds when the worker first claimed the job.
    pub started_at: Option<i64>,
    /// Unix seconds when the job last reached a terminal state.
    pub finished_at: Option<i64>,
    /// The recipient marked `sending` and not yet resolved; set only while a
    /// send is in flight, so after a crash it names the one send to check.
    pub in_flight: Option<u64>,
    /// Why the job failed (only for `failed`).
    pub reason: Option<String>,
}

/// A stored recipient of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlastRecipient {
    /// 1-based position in the request's `recipients`.
    pub id: u64,
    /// The canonical JID.
    pub recipient: String,
    /// Where it is.
    pub status: RecipientStatus,
    /// Send attempts with a known outcome since creation or the last retry.
    pub attempts: u32,
    /// The error of the last failed attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The message id, chosen before the first attempt and kept for every
    /// later attempt, so the network sees one message however often it is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Unix seconds of the last change.
    pub updated_at: i64,
    /// Held (still `pending`) until then, Unix seconds: the account's
    /// reach-out timelock keeps it from messaging this recipient, whom it
    /// has no chat with; the worker goes on with the others meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_until: Option<i64>,
}

/// What came of one send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    /// The network accepted the message under this id.
    Sent {
        /// The id the network recorded.
        message_id: String,
    },
    /// The attempt failed.
    Failed {
        /// Why.
        error: String,
    },
    /// The session could not send (offline, paused, stopping): no attempt was made.
    NotAttempted,
    /// The account's reach-out timelock holds the recipient back until
    /// `until`: it stays pending, without spending an attempt, and is not
    /// picked again before then.
    Held {
        /// Why.
        error: String,
        /// Unix seconds when it may go.
        until: i64,
        /// Whether the send reached the network (which refused it, error
        /// 463), rather than being held before it: then the session's
        /// pacing pause follows it as after any send.
        attempted: bool,
    },
    /// The send can never succeed as it is (a transform plugin refused it,
    /// or the body does not make a valid send): dead-lettered at once, since
    /// further attempts would be refused the same way.
    Refused {
        /// Why.
        error: String,
    },
}

/// Why a cancel or a retry is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Cancel of a terminal job.
    #[error("the blast is already {}; only pending or running blasts can be cancelled", .0.as_str())]
    NotCancellable(JobStatus),
    /// Retry of a running job.
    #[error("the blast is running; retry it once it has stopped")]
    Running,
    /// Retry of a job with nothing in dlq (or failed).
    #[error("the blast has no recipient in dlq or failed; there is nothing to retry")]
    NothingToRetry,
}

impl BlastJob {
    /// pending → running; sets `started_at` on the first claim. `false` when
    /// the job is not pending.
    pub fn claim(&mut self, now: i64) -> bool {
        if self.status != JobStatus::Pending {
            return false;
        }
        self.status = JobStatus::Running;
        self.started_at.get_or_insert(now);
        true
    }

    /// pending or running → cancelled.
    pub fn cancel(&mut self, now: i64) -> Result<(), Refusal> {
        if self.status.is_terminal() {
            return Err(Refusal::NotCancellable(self.status));
        }
        self.status = JobStatus::Cancelled;
        self.finished_at = Some(now);
        Ok(())
    }

    /// running → completed (nothing in dlq) or completed_with_failures.
    /// `false` when the job is not running.
    pub fn close(&mut self, now: i64) -> bool {
        if self.status != JobStatus::Running {
            return false;
        }
        self.status = if self.dlq_count == 0 {
            JobStatus::Completed
        } else {
            JobStatus::CompletedWithFailures
        };
        self.finished_at = Some(now);
        true
    }

    /// pending or running → failed, with the reason. `false` when terminal.
    pub fn fail(&mut self, reason: &str, now: i64) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.status = JobStatus::Failed;
        self.reason = Some(reason.to_owned());
        self.finished_at = Some(now);
        true
    }

    /// Whether a retry may reopen the job, given how many of its recipients are
    /// in `dlq` or `failed`.
    pub fn check_retry(&self, retryable: u64) -> Result<(), Refusal> {
        if self.status == JobStatus::Running {
            return Err(Refusal::Running);
        }
        if retryable == 0 {
            return Err(Refusal::NothingToRetry);
        }
        Ok(())
    }

    /// Reopens the job after its dlq and failed recipients returned to pending:
    /// status pending, `dlq_count` 0, no `finished_at` or `reason`.
    pub fn reopen(&mut self) {
        self.status = JobStatus::Pending;
        self.dlq_count = 0;
        self.finished_at = None;
        self.reason = None;
    }

    /// Applies the outcome of the in-flight send of `r` to both records.
    pub fn apply(&mut self, r: &mut BlastRecipient, outcome: &SendOutcome, now: i64) {
        if self.in_flight == Some(r.id) {
            self.in_flight = None;
        }
        r.updated_at = now;
        match outcome {
            SendOutcome::Sent { message_id } => {
                r.status = RecipientStatus::Sent;
                r.held_until = None;
                r.attempts += 1;
                r.message_id = Some(message_id.clone());
                self.sent_count += 1;
            }
            SendOutcome::Failed { error } | SendOutcome::Refused { error } => {
                r.attempts += 1;
                r.held_until = None;
                r.last_error = Some(error.clone());
                self.failed_count += 1;
                let refused = matches!(outcome, SendOutcome::Refused { .. });
                if refused || r.attempts >= self.options.max_attempts {
                    r.status = RecipientStatus::Dlq;
                    self.dlq_count += 1;
                } else {
                    r.status = RecipientStatus::Pending;
                }
            }
            SendOutcome::NotAttempted => r.status = RecipientStatus::Pending,
            SendOutcome::Held { error, until, .. } => {
                r.status = RecipientStatus::Pending;
                r.held_until = Some(*until);
                r.last_error = Some(error.clone());
            }
        }
    }

    /// The data of a `blast_progress` or `blast_completed` event: the job's
    /// identity, status and counters; the completed event adds when it started
    /// and finished and, for a failed job, why.
    pub fn event_data(&self, completed: bool) -> BlastEventData {
        BlastEventData {
            job_id: self.id.clone(),
            session_id: self.session_id.clone(),
            endpoint: self.endpoint.clone(),
            status: self.status,
            total: self.total,
            sent_count: self.sent_count,
            failed_count: self.failed_count,
            dlq_count: self.dlq_count,
            skipped_dup_count: self.skipped_dup_count,
            completion: completed.then(|| BlastCompletion {
                started_at: self.started_at.map(iso8601),
                finished_at: self.finished_at.map(iso8601),
                reason: self.reason.clone(),
            }),
        }
    }
}

impl BlastRecipient {
    /// pending → sending, choosing the message id with `new_id` unless one was
    /// chosen before. `false` when the recipient is not pending.
    pub fn begin(&mut self, now: i64, new_id: impl FnOnce() -> String) -> bool {
        if self.status != RecipientStatus::Pending {
            return false;
        }
        self.status = RecipientStatus::Sending;
        if self.message_id.is_none() {
            self.message_id = Some(new_id());
        }
        self.updated_at = now;
        true
    }

    /// dlq or failed → pending with a fresh set of attempts. `false` otherwise.
    pub fn reopen(&mut self, now: i64) -> bool {
        if !matches!(self.status, RecipientStatus::Dlq | RecipientStatus::Failed) {
            return false;
        }
        self.status = RecipientStatus::Pending;
        self.attempts = 0;
        self.updated_at = now;
        true
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
