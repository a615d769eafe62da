//! A send bounded in time, for the background senders (the scheduler and
//! the blast worker): one send held inside the network (a slow media URL, a
//! network that does not answer) must not hold the sender, and every other
//! tenant's sends behind it, for as long as it likes.
//!
//! A send still running at its bound is abandoned: its future is dropped, so
//! nothing more of it happens on the gateway's side. The network may have
//! taken it before that, so it is asked at once (under the same bound)
//! whether it has a message under the send's id: if so the send counts as
//! sent; otherwise the abandoned attempt is a [`SendFailure::Retry`], and
//! the caller's retry goes out under the same id, which the network treats
//! as the same message.

use std::time::Duration;

use super::{SendCore, SendFailure};
use crate::domain::message::MessageRecord;
use crate::domain::send::SendRequest;

/// What a send bounded in time came to.
#[derive(Debug)]
pub enum BoundedSend {
    /// Sent, and recorded.
    Sent(MessageRecord),
    /// Abandoned at its bound, but the network has a message under its id:
    /// it went out (its history record may be missing).
    Reached,
    /// It did not go out (or the network cannot tell): what that means.
    Failed(SendFailure),
}

/// `last_error` of an attempt abandoned at its bound.
pub fn abandoned_reason(bound: Duration) -> String {
    format!(
        "the send did not finish within its time bound of {} and was abandoned; \
         it goes again under the same message id",
        human(bound)
    )
}

fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

impl SendCore {
    /// [`SendCore::send_typed`] bounded by `bound` (see the module's doc).
    pub async fn send_typed_within(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: &str,
        bound: Duration,
    ) -> BoundedSend {
        let send = self.send_typed(session_id, request, message_id);
        match tokio::time::timeout(bound, send).await {
            Ok(Ok(record)) => BoundedSend::Sent(record),
            Ok(Err(e)) => BoundedSend::Failed(SendFailure::of(&e)),
            Err(_) => {
                tracing::warn!(session = %session_id, %message_id, bound_ms = bound.as_millis() as u64, "a send ran past its time bound and was abandoned");
                let asked = tokio::time::timeout(bound, self.has_sent(session_id, message_id));
                match asked.await {
                    Ok(Ok(Some(true))) => BoundedSend::Reached,
                    _ => BoundedSend::Failed(SendFailure::Retry(abandoned_reason(bound))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_bound_and_that_the_id_is_kept() {
        let r = abandoned_reason(Duration::from_secs(120));
        assert!(r.contains("120 s") && r.contains("same message id"), "{r}");
        assert!(abandoned_reason(Duration::from_millis(1500)).contains("1.5 s"));
    }
}
