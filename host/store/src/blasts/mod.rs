//! Blast jobs, their bodies and recipients, and the per-session set of
//! recipients a blast already sent to (`dedup_across_jobs`). Every change of a
//! recipient and its job's counters is one transaction; the transitions
//! themselves are the pure rules of `crate::blast::model`.

use std::collections::HashSet;

use redb::{ReadableTable, WriteTransaction};
use serde_json::Value;

use super::tables::{
    BLAST_BODIES, BLAST_JOB_IDS, BLAST_JOBS, BLAST_RECIPIENTS, BLAST_SENT, BLAST_SEQ_KEY,
};
use super::{Store, StoreResult, decode, delete_session_keys, delete_session_range, encode};
use crate::domain::blast::model::{
    BlastJob, BlastRecipient, JobStatus, RecipientStatus, SendOutcome,
};

/// What a job has to send next.
#[derive(Debug, Clone, PartialEq)]
pub enum NextRecipient {
    /// This pending recipient.
    Ready(BlastRecipient),
    /// Every pending recipient is held; the first hold ends then (Unix
    /// seconds).
    HeldUntil(i64),
    /// Nothing is pending: the job is done.
    Done,
}

/// Creates every blast table (called when the store opens).
pub(super) fn create_tables(tx: &WriteTransaction) -> StoreResult<()> {
    tx.open_table(BLAST_JOBS)?;
    tx.open_table(BLAST_JOB_IDS)?;
    tx.open_table(BLAST_BODIES)?;
    tx.open_table(BLAST_RECIPIENTS)?;
    tx.open_table(BLAST_SENT)?;
    Ok(())
}

/// Removes every blast row of a session (part of the session delete cascade).
pub(super) fn delete_session_blasts(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    delete_session_range(tx, BLAST_JOBS, session_id)?;
    delete_session_range(tx, BLAST_BODIES, session_id)?;
    delete_session_keys(tx, BLAST_JOB_IDS, session_id)?;
    delete_session_keys(tx, BLAST_SENT, session_id)?;
    tx.open_table(BLAST_RECIPIENTS)?.retain_in(
        (session_id, 0u64, 0u64)..=(session_id, u64::MAX, u64::MAX),
        |_, _| false,
    )?;
    Ok(())
}

fn put_job(tx: &WriteTransaction, job: &BlastJob) -> StoreResult<()> {
    tx.open_table(BLAST_JOBS)?
        .insert((job.session_id.as_str(), job.seq), encode(job)?.as_slice())?;
    Ok(())
}

fn job_in(tx: &WriteTransaction, session_id: &str, seq: u64) -> StoreResult<Option<BlastJob>> {
    let t = tx.open_table(BLAST_JOBS)?;
    let job = t.get((session_id, seq))?.map(|v| decode(v.value()));
    job.transpose()
}

fn recipient_in(
    tx: &WriteTransaction,
    job: &BlastJob,
    id: u64,
) -> StoreResult<Option<BlastRecipient>> {
    let t = tx.open_table(BLAST_RECIPIENTS)?;
    let r = t.get((job.session_id.as_str(), job.seq, id))?;
    r.map(|v| decode(v.value())).transpose()
}

fn put_recipient(tx: &WriteTransaction, job: &BlastJob, r: &BlastRecipient) -> StoreResult<()> {
    tx.open_table(BLAST_RECIPIENTS)?.insert(
        (job.session_id.as_str(), job.seq, r.id),
        encode(r)?.as_slice(),
    )?;
    Ok(())
}

impl Store {
    /// Which of `recipients` a blast of the session already sent to.
    pub fn blast_already_sent(
        &self,
        session_id: &str,
        recipients: &[String],
    ) -> StoreResult<HashSet<String>> {
        self.read(|tx| {
            let t = tx.open_table(BLAST_SENT)?;
            let mut out = HashSet::new();
            for r in recipients {
                if t.get((session_id, r.as_str()))?.is_some() {
                    out.insert(r.clone());
                }
            }
            Ok(out)
        })
    }

    /// Stores a new job with its body and recipient rows in one transaction;
    /// assigns and returns the job's sequence. Everything is encoded before
    /// the write lock is taken, so the lock is held only for the inserts.
    pub fn insert_blast(
        &self,
        job: &BlastJob,
        body: &Value,
        recipients: &[BlastRecipient],
    ) -> StoreResult<u64> {
        let body = encode(body)?;
        let rows: Vec<Vec<u8>> = recipients.iter().map(encode).collect::<Result<_, _>>()?;
        let sid = job.session_id.as_str();
        self.write(|tx| {
            let seq = super::next_seq(tx, BLAST_SEQ_KEY)?;
            let job = BlastJob { seq, ..job.clone() };
            put_job(tx, &job)?;
            tx.open_table(BLAST_JOB_IDS)?
                .insert((sid, job.id.as_str()), seq)?;
            tx.open_table(BLAST_BODIES)?
                .insert((sid, seq), body.as_slice())?;
            let mut t = tx.open_table(BLAST_RECIPIENTS)?;
            for (r, bytes) in recipients.iter().zip(&rows) {
                t.insert((sid, seq, r.id), bytes.as_slice())?;
            }
            Ok(seq)
        })
    }

    /// One job by its id.
    pub fn get_blast(&self, session_id: &str, job_id: &str) -> StoreResult<Option<BlastJob>> {
        self.read(|tx| {
            let Some(seq) = tx
                .open_table(BLAST_JOB_IDS)?
                .get((session_id, job_id))?
                .map(|v| v.value())
            else {
                return Ok(None);
            };
            let t = tx.open_table(BLAST_JOBS)?;
            t.get((session_id, seq))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// One job by its sequence.
    pub fn get_blast_at(&self, session_id: &str, seq: u64) -> StoreResult<Option<BlastJob>> {
        self.read(|tx| {
            let t = tx.open_table(BLAST_JOBS)?;
            t.get((session_id, seq))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// The body of a job.
    pub fn blast_body(&self, session_id: &str, seq: u64) -> StoreResult<Option<Value>> {
        self.read(|tx| {
            let t = tx.open_table(BLAST_BODIES)?;
            t.get((session_id, seq))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// Jobs of one session (or of every session), optionally of one status,
    /// newest first.
    pub fn list_blasts(
        &self,
        session_id: Option<&str>,
        status: Option<JobStatus>,
    ) -> StoreResult<Vec<BlastJob>> {
        let mut jobs: Vec<BlastJob> = self.read(|tx| {
            let t = tx.open_table(BLAST_JOBS)?;
            let rows = match session_id {
                Some(sid) => t.range((sid, 0u64)..=(sid, u64::MAX))?,
                None => t.iter()?,
            };
            let mut out = Vec::new();
            for row in rows {
                let job: BlastJob = decode(row?.1.value())?;
                if status.is_none_or(|s| s == job.status) {
                    out.push(job);
                }
            }
            Ok(out)
        })?;
        jobs.sort_unstable_by_key(|j| std::cmp::Reverse(j.seq));
        Ok(jobs)
    }

    /// One page of a job's recipients in id order, optionally of one status.
    pub fn list_blast_recipients(
        &self,
        job: &BlastJob,
        status: Option<RecipientStatus>,
        offset: usize,
        limit: usize,
    ) -> StoreResult<Vec<BlastRecipient>> {
        let sid = job.session_id.as_str();
        self.read(|tx| {
            let t = tx.open_table(BLAST_RECIPIENTS)?;
            let mut out = Vec::with_capacity(limit.min(1024));
            let mut skipped = 0;
            for row in t.range((sid, job.seq, 0u64)..=(sid, job.seq, u64::MAX))? {
                let r: BlastRecipient = decode(row?.1.value())?;
                if status.is_some_and(|s| s != r.status) {
                    continue;
                }
                if skipped < offset {
                    skipped += 1;
                    continue;
                }
                out.push(r);
                if out.len() == limit {
                    break;
                }
            }
            Ok(out)
        })
    }

    /// One recipient of a job.
    pub fn get_blast_recipient(
        &self,
        job: &BlastJob,
        id: u64,
    ) -> StoreResult<Option<BlastRecipient>> {
        self.read(|tx| {
            let t = tx.open_table(BLAST_RECIPIENTS)?;
            let r = t.get((job.session_id.as_str(), job.seq, id))?;
            r.map(|v| decode(v.value())).transpose()
        })
    }

    /// The first pending recipient after `after` in id order, else the first
    /// pending one from the start (the next pass), passing over those held
    /// until after `now` (Unix seconds; see [`BlastRecipient::held_until`]).
    pub fn next_pending_recipient(
        &self,
        job: &BlastJob,
        after: u64,
        now: i64,
    ) -> StoreResult<NextRecipient> {
        let sid = job.session_id.as_str();
        self.read(|tx| {
            let t = tx.open_table(BLAST_RECIPIENTS)?;
            let ranges = [
                (after.saturating_add(1), u64::MAX),
                (0, after.min(u64::MAX - 1)),
            ];
            let mut held: Option<i64> = None;
            for (from, to) in ranges {
                for row in t.range((sid, job.seq, from)..=(sid, job.seq, to))? {
                    let r: BlastRecipient = decode(row?.1.value())?;
                    if r.status != RecipientStatus::Pending {
                        continue;
                    }
                    match r.held_until {
                        Some(until) if until > now => {
                            held = Some(held.map_or(until, |h| h.min(until)));
                        }
                        _ => return Ok(NextRecipient::Ready(r)),
                    }
                }
            }
            Ok(held.map_or(NextRecipient::Done, NextRecipient::HeldUntil))
        })
    }

    /// Reads, changes and writes back one job in a single transaction. `f`
    /// refusing writes nothing. `None` when the job does not exist.
    pub fn modify_blast<T, E>(
        &self,
        session_id: &str,
        seq: u64,
        f: impl FnOnce(&mut BlastJob) -> Result<T, E>,
    ) -> StoreResult<Option<Result<T, E>>> {
        self.write(|tx| {
            let Some(mut job) = job_in(tx, session_id, seq)? else {
                return Ok(None);
            };
            let out = f(&mut job);
            if out.is_ok() {
                put_job(tx, &job)?;
            }
            Ok(Some(out))
        })
    }

    /// pending → sending for one recipient of a running job, choosing its
    /// message id with `new_id` unless it has one, and marks it the job's
    /// in-flight send. `None` (nothing written) when the job is not running or
    /// the recipient is not pending.
    pub fn begin_blast_send(
        &self,
        session_id: &str,
        seq: u64,
        id: u64,
        now: i64,
        new_id: impl FnOnce() -> String,
    ) -> StoreResult<Option<BlastRecipient>> {
        self.write(|tx| {
            let Some(mut job) = job_in(tx, session_id, seq)? else {
                return Ok(None);
            };
            if job.status != JobStatus::Running || job.in_flight.is_some() {
                return Ok(None);
            }
            let Some(mut r) = recipient_in(tx, &job, id)? else {
                return Ok(None);
            };
            if !r.begin(now, new_id) {
                return Ok(None);
            }
            job.in_flight = Some(id);
            put_recipient(tx, &job, &r)?;
            put_job(tx, &job)?;
            Ok(Some(r))
        })
    }

    /// Records the outcome of a recipient's send (it must be `sending`) and
    /// its job's counters, whatever the job's status now (a send that
    /// finished after a cancel still counts). Returns the job, or `None` when
    /// the job or recipient is gone or the recipient is not `sending`.
    pub fn finish_blast_send(
        &self,
        session_id: &str,
        seq: u64,
        id: u64,
        outcome: &SendOutcome,
        now: i64,
    ) -> StoreResult<Option<BlastJob>> {
        self.write(|tx| {
            let Some(mut job) = job_in(tx, session_id, seq)? else {
                return Ok(None);
            };
            let Some(mut r) = recipient_in(tx, &job, id)? else {
                return Ok(None);
            };
            if r.status != RecipientStatus::Sending {
                return Ok(None);
            }
            job.apply(&mut r, outcome, now);
            if r.status == RecipientStatus::Sent {
                let mut sent = tx.open_table(BLAST_SENT)?;
                if sent.get((session_id, r.recipient.as_str()))?.is_none() {
                    sent.insert((session_id, r.recipient.as_str()), seq)?;
                }
            }
            put_recipient(tx, &job, &r)?;
            put_job(tx, &job)?;
            Ok(Some(job))
        })
    }
}

mod reopen;
#[cfg(test)]
mod tests;
