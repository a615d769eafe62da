//! Resolving a send a crash interrupted: a recipient left in `sending` has a
//! message id chosen before its attempt, so the network can be asked whether
//! it has that message instead of sending blindly.
//!
//! The guarantee: a recipient is delivered at most once when the backend can
//! tell what it has (the sim can), and otherwise resent under the same id,
//! which the network treats as the same message (a repeated id is
//! acknowledged, not delivered again).

use super::model::{BlastJob, RecipientStatus, SendOutcome};
use super::worker::Worker;
use crate::domain::time::unix_now;
use crate::store::StoreResult;

/// What to do with a recipient found in `sending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// The network has the message: record it as sent without sending.
    MarkSent,
    /// Return it to pending; it is sent again under the same message id.
    Resend,
}

/// The decision for the network's answer to "do you have this id?": `None`
/// when the backend cannot tell.
pub fn decide(has_sent: Option<bool>) -> Recovery {
    match has_sent {
        Some(true) => Recovery::MarkSent,
        Some(false) | None => Recovery::Resend,
    }
}

impl Worker {
    /// Resolves the in-flight sends of every job (crash recovery at start).
    pub(super) async fn recover_all(&mut self) -> StoreResult<()> {
        for job in self.p.store.list_blasts(None, None)? {
            if job.in_flight.is_some() {
                self.recover(&job).await?;
            }
        }
        Ok(())
    }

    /// Resolves a job's in-flight send by asking the network whether it has
    /// the message; `false` when the network could not be asked yet.
    pub(super) async fn recover(&mut self, job: &BlastJob) -> StoreResult<bool> {
        let Some(id) = job.in_flight else {
            return Ok(true);
        };
        let (sid, seq) = (job.session_id.as_str(), job.seq);
        let recipient = self.p.store.get_blast_recipient(job, id)?;
        let Some(message_id) = recipient
            .filter(|r| r.status == RecipientStatus::Sending)
            .map(|r| r.message_id.unwrap_or_default())
        else {
            // The recipient's outcome was recorded; only the marker is left.
            self.p.store.modify_blast(sid, seq, |j| {
                j.in_flight = None;
                Ok::<_, ()>(())
            })?;
            return Ok(true);
        };
        let answer = match self.p.send.has_sent(sid, &message_id).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(session = %sid, job = %job.id, error = %e, "cannot yet ask the network about an interrupted blast send");
                return Ok(false);
            }
        };
        let decision = decide(answer);
        let outcome = match decision {
            Recovery::MarkSent => SendOutcome::Sent {
                message_id: message_id.clone(),
            },
            Recovery::Resend => SendOutcome::NotAttempted,
        };
        let after = self
            .p
            .store
            .finish_blast_send(sid, seq, id, &outcome, unix_now())?;
        tracing::info!(session = %sid, job = %job.id, recipient = id, %message_id, ?decision, "resolved a blast send interrupted by a stop");
        if let (Recovery::MarkSent, Some(after)) = (decision, after) {
            self.progress(&after);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_the_network_has_is_marked_sent_and_never_resent() {
        assert_eq!(decide(Some(true)), Recovery::MarkSent);
    }

    #[test]
    fn a_message_the_network_lacks_or_cannot_vouch_for_is_resent_under_its_id() {
        assert_eq!(decide(Some(false)), Recovery::Resend);
        assert_eq!(decide(None), Recovery::Resend);
    }
}
