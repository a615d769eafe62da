//! Reopening and failing blast jobs: the two changes that rewrite many
//! recipients at once (retry returns dlq and failed recipients to pending; a
//! failed job marks its pending recipients failed).

use redb::{ReadableTable, WriteTransaction};

use super::{job_in, put_job};
use crate::domain::blast::model::{BlastJob, BlastRecipient, JobStatus, RecipientStatus, Refusal};
use crate::tables::{BLAST_JOB_IDS, BLAST_RECIPIENTS};
use crate::{Store, StoreResult, decode, encode};

impl Store {
    /// Retry: returns the job's dlq and failed recipients to pending with
    /// fresh attempts and reopens the job as pending, in one transaction.
    pub fn retry_blast(
        &self,
        session_id: &str,
        job_id: &str,
        now: i64,
    ) -> StoreResult<Option<Result<BlastJob, Refusal>>> {
        self.write(|tx| {
            let Some(seq) = tx
                .open_table(BLAST_JOB_IDS)?
                .get((session_id, job_id))?
                .map(|v| v.value())
            else {
                return Ok(None);
            };
            let Some(mut job) = job_in(tx, session_id, seq)? else {
                return Ok(None);
            };
            if job.status == JobStatus::Running {
                return Ok(Some(Err(Refusal::Running)));
            }
            let reopened = reopen_recipients(tx, &job, now)?;
            if let Err(refusal) = job.check_retry(reopened) {
                // Nothing was changed when nothing was reopened.
                return Ok(Some(Err(refusal)));
            }
            job.reopen();
            put_job(tx, &job)?;
            Ok(Some(Ok(job)))
        })
    }

    /// Fails a job that is not terminal: its pending recipients become
    /// `failed` (what a retry can send later). `None` when it does not exist
    /// or is already terminal.
    pub fn fail_blast(
        &self,
        session_id: &str,
        seq: u64,
        reason: &str,
        now: i64,
    ) -> StoreResult<Option<BlastJob>> {
        self.write(|tx| {
            let Some(mut job) = job_in(tx, session_id, seq)? else {
                return Ok(None);
            };
            if !job.fail(reason, now) {
                return Ok(None);
            }
            let mut t = tx.open_table(BLAST_RECIPIENTS)?;
            let mut changed = Vec::new();
            for row in t.range((session_id, seq, 0u64)..=(session_id, seq, u64::MAX))? {
                let mut r: BlastRecipient = decode(row?.1.value())?;
                if r.status == RecipientStatus::Pending {
                    r.status = RecipientStatus::Failed;
                    r.last_error = Some(reason.to_owned());
                    r.updated_at = now;
                    changed.push(r);
                }
            }
            for r in changed {
                t.insert((session_id, seq, r.id), encode(&r)?.as_slice())?;
            }
            drop(t);
            put_job(tx, &job)?;
            Ok(Some(job))
        })
    }
}

/// Returns a job's dlq and failed recipients to pending; how many it reopened.
fn reopen_recipients(tx: &WriteTransaction, job: &BlastJob, now: i64) -> StoreResult<u64> {
    let sid = job.session_id.as_str();
    let mut t = tx.open_table(BLAST_RECIPIENTS)?;
    let mut changed = Vec::new();
    for row in t.range((sid, job.seq, 0u64)..=(sid, job.seq, u64::MAX))? {
        let mut r: BlastRecipient = decode(row?.1.value())?;
        if r.reopen(now) {
            changed.push(r);
        }
    }
    for r in &changed {
        t.insert((sid, job.seq, r.id), encode(r)?.as_slice())?;
    }
    Ok(changed.len() as u64)
}
