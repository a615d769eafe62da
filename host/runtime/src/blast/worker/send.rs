//! Sending one recipient: through the send core for built-in kinds, through a
//! plugin's expansion for plugin endpoints, with the recipient's message id
//! chosen before the first attempt. Each send is bounded in time
//! ([`SendCore::send_typed_within`]): one abandoned at its bound is a failed
//! attempt (unless the network says it has it), retried under the same id,
//! and before a retry the network is asked whether an earlier attempt
//! reached it after all.
//!
//! [`SendCore::send_typed_within`]: crate::messages::SendCore::send_typed_within

use super::*;
use crate::messages::{BoundedSend, SendFailure};

impl Worker {
    /// Sends one recipient; `false` when the job should be left for now
    /// (cancelled meanwhile, or the session could not send).
    pub(super) async fn send_one(
        &mut self,
        job: &BlastJob,
        kind: Option<SendKind>,
        body: &Value,
        id: u64,
    ) -> StoreResult<bool> {
        let (sid, seq) = (job.session_id.as_str(), job.seq);
        let generation = self.p.waker.generation();
        let Some(r) = self
            .p
            .store
            .begin_blast_send(sid, seq, id, unix_now(), new_message_id)?
        else {
            return Ok(false);
        };
        let message_id = r.message_id.clone().unwrap_or_default();
        let reached_before =
            r.attempts > 0 && kind.is_some() && self.network_has(sid, &message_id).await;
        let outcome = match kind {
            _ if reached_before => SendOutcome::Sent {
                message_id: message_id.clone(),
            },
            Some(kind) => {
                self.send_builtin(sid, kind, body, &r.recipient, &message_id)
                    .await
            }
            None => self.send_plugin(job, body, &r.recipient, &message_id).await,
        };
        let after = self
            .p
            .store
            .finish_blast_send(sid, seq, id, &outcome, unix_now())?;

        let counter = match outcome {
            SendOutcome::Sent { .. } => Some(&self.p.counters.sent),
            SendOutcome::Failed { .. } | SendOutcome::Refused { .. } => {
                Some(&self.p.counters.failed)
            }
            SendOutcome::NotAttempted | SendOutcome::Held { .. } => None,
        };
        if let Some(c) = counter {
            c.inc();
        }
        let key = (sid.to_owned(), seq);
        if outcome == SendOutcome::NotAttempted {
            self.cursors.insert(key, id - 1);
            let until = Instant::now() + self.p.config.offline_retry;
            self.parked.insert(sid.to_owned(), (until, generation));
            return Ok(false);
        }
        self.cursors.insert(key, id);
        // Held before it reached the network: nothing was sent, so no pause
        // is owed, and the pass goes on to the next recipient at once.
        if matches!(
            outcome,
            SendOutcome::Held {
                attempted: false,
                ..
            }
        ) {
            return Ok(true);
        }
        let sent_at = Instant::now();
        let owed = Owed {
            sent_at,
            until: sent_at + pause(&job.options, &mut self.rng),
            seq: job.seq,
        };
        self.next_send.insert(sid.to_owned(), owed);
        if let (SendOutcome::Sent { .. }, Some(after)) = (&outcome, after) {
            self.progress(&after);
        }
        Ok(true)
    }

    async fn send_builtin(
        &self,
        sid: &str,
        kind: SendKind,
        body: &Value,
        to: &str,
        message_id: &str,
    ) -> SendOutcome {
        match request_for(kind, body, to) {
            Err(e) => SendOutcome::Refused {
                error: e.to_string(),
            },
            Ok(request) => self.send_request(sid, request, message_id).await,
        }
    }

    async fn send_request(
        &self,
        sid: &str,
        request: crate::domain::send::SendRequest,
        message_id: &str,
    ) -> SendOutcome {
        let bound = self.p.config.send_timeout;
        match (self.p.send)
            .send_typed_within(sid, request, message_id, bound)
            .await
        {
            BoundedSend::Sent(record) => SendOutcome::Sent {
                message_id: record.message_id,
            },
            BoundedSend::Reached => SendOutcome::Sent {
                message_id: message_id.to_owned(),
            },
            // Nothing reached the network: the recipient waits for its
            // session (a storage fault too: the store reopens itself); a
            // refusal is final; a failed attempt counts (one abandoned at its
            // bound too).
            BoundedSend::Failed(failure) => match failure {
                SendFailure::Wait(_) | SendFailure::Gone | SendFailure::Storage(_) => {
                    SendOutcome::NotAttempted
                }
                SendFailure::Refused(error) => SendOutcome::Refused { error },
                SendFailure::Held {
                    reason,
                    until,
                    attempted,
                } => SendOutcome::Held {
                    error: reason,
                    until,
                    attempted,
                },
                SendFailure::Retry(error) | SendFailure::Fail(error) => {
                    SendOutcome::Failed { error }
                }
            },
        }
    }

    /// Whether the network says it has a message under `message_id` from
    /// the session (asked under the send bound; a network that cannot tell,
    /// or does not answer, counts as no).
    async fn network_has(&self, sid: &str, message_id: &str) -> bool {
        let asked = self.p.send.has_sent(sid, message_id);
        matches!(
            tokio::time::timeout(self.p.config.send_timeout, asked).await,
            Ok(Ok(Some(true)))
        )
    }

    /// A plugin endpoint: the plugin expands the recipient into concrete
    /// sends; the first goes under the recipient's message id, the others
    /// under ids derived from it (so a retry repeats the same ids).
    async fn send_plugin(
        &self,
        job: &BlastJob,
        body: &Value,
        to: &str,
        message_id: &str,
    ) -> SendOutcome {
        let sid = job.session_id.as_str();
        let expanded = match &self.p.plugins {
            Some(p) => p.expand(sid, &job.endpoint, to, body),
            None => Err("plugins are not available".into()),
        };
        let requests = match expanded {
            Ok(r) if r.is_empty() => {
                return SendOutcome::Failed {
                    error: "the plugin expanded the recipient into no send".into(),
                };
            }
            Ok(r) => r,
            Err(error) => return SendOutcome::Failed { error },
        };
        let mut first = None;
        for (i, request) in requests.into_iter().enumerate() {
            let id = if i == 0 {
                message_id.to_owned()
            } else {
                derived_id(message_id, i)
            };
            match self.send_request(sid, request, &id).await {
                SendOutcome::Sent { message_id } => {
                    first.get_or_insert(message_id);
                }
                other => return other,
            }
        }
        SendOutcome::Sent {
            message_id: first.unwrap_or_default(),
        }
    }
}

/// The id of the `i`-th extra send of a plugin-expanded recipient: stable for
/// a given first id, in the network's id style.
fn derived_id(first: &str, i: usize) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(format!("{first}/{i}").as_bytes());
    format!("3EB0{}", hex::encode_upper(&h[..8]))
}
