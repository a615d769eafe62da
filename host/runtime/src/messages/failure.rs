//! What a failed send means, decided once for every caller of the send core:
//! the scheduler and the blast worker read the same [`SendFailure`] and only
//! choose their own consequence (a scheduled send waits or is retried on its
//! timer; a blast recipient is set aside, retried or dead-lettered).

use crate::network::NetworkError;
use crate::sessions::SessionError;

/// Why a send did not go out, as what to do about it. Each carries the error
/// as a sentence for `last_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendFailure {
    /// The session cannot send now (paused, disconnected, not logged in, or
    /// over its send pacing): nothing reached the network; wait for the
    /// session.
    Wait(String),
    /// The network failed the attempt (or the store could not record it): a
    /// later attempt can succeed.
    Retry(String),
    /// It will never go out as it is (the network refused it, it is invalid).
    Fail(String),
    /// A message-transform plugin refused it: another attempt would be
    /// refused again.
    Refused(String),
    /// The session is not known to the registry: deleted, or not attached.
    /// Nothing reached the network.
    Gone,
    /// The account's reach-out timelock keeps the send from going until
    /// `until` (Unix seconds): not the message's fault, so it waits for the
    /// lock's end without counting against its attempts. `attempted` when
    /// the network refused it (error 463), not when it was held before.
    Held {
        /// Why, as a sentence.
        reason: String,
        /// When it can go.
        until: i64,
        /// Whether it reached the network.
        attempted: bool,
    },
    /// A storage fault (a full disk, an I/O error) kept the gateway from
    /// recording the send: the store reopens itself once the fault is gone,
    /// so try again later without counting an attempt or giving up.
    Storage(String),
}

impl SendFailure {
    /// Classifies why the send core refused or failed a send.
    pub fn of(err: &SessionError) -> SendFailure {
        let msg = err.to_string();
        if let SessionError::Store(e) = err
            && e.fault().is_some()
        {
            return SendFailure::Storage(msg);
        }
        match err {
            SessionError::NotFound(_) => SendFailure::Gone,
            SessionError::Timelocked { lock, refused, .. } => SendFailure::Held {
                reason: msg,
                until: lock.until,
                attempted: *refused,
            },
            SessionError::Network(NetworkError::Storage(..)) => SendFailure::Storage(msg),
            SessionError::Paused(_)
            | SessionError::WrongState(_)
            | SessionError::SendPaced { .. }
            | SessionError::Network(NetworkError::NotConnected) => SendFailure::Wait(msg),
            SessionError::Network(NetworkError::Failed(_)) | SessionError::Store(_) => {
                SendFailure::Retry(msg)
            }
            SessionError::RejectedByPlugin(_) => SendFailure::Refused(msg),
            SessionError::Network(
                NetworkError::Rejected(_)
                | NetworkError::ReachOutTimelock { .. }
                | NetworkError::NotFound(_)
                | NetworkError::InvalidState(_)
                | NetworkError::NotSupported(_),
            )
            | SessionError::Invalid { .. }
            | SessionError::AlreadyExists(_)
            | SessionError::PhoneTaken(_)
            | SessionError::Conflict { .. } => SendFailure::Fail(msg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_that_cannot_send_means_wait_and_a_network_failure_means_retry() {
        let wait = [
            SessionError::Paused("s".into()),
            SessionError::WrongState("s is disconnected".into()),
            SessionError::Network(NetworkError::NotConnected),
            SessionError::SendPaced {
                session: "s".into(),
                retry_after: std::time::Duration::from_millis(1500),
            },
        ];
        for e in wait {
            assert!(matches!(SendFailure::of(&e), SendFailure::Wait(_)), "{e}");
        }
        assert_eq!(
            SendFailure::of(&SessionError::Network(NetworkError::Failed("boom".into()))),
            SendFailure::Retry("boom".into())
        );
        assert_eq!(
            SendFailure::of(&SessionError::Network(NetworkError::Rejected("no".into()))),
            SendFailure::Fail("no".into())
        );
    }

    #[test]
    fn a_storage_fault_means_try_later_not_a_failed_attempt() {
        use crate::domain::storage_fault::StorageFault;
        let full = SessionError::Store(crate::store::StoreError::Fault(
            StorageFault::NoSpace,
            "full",
        ));
        assert!(matches!(SendFailure::of(&full), SendFailure::Storage(_)));
        let other = SessionError::Store(crate::store::StoreError::Stopped("stopping"));
        assert!(matches!(SendFailure::of(&other), SendFailure::Retry(_)));
    }

    #[test]
    fn an_unknown_session_is_gone_and_a_plugin_refusal_is_final() {
        let gone = SendFailure::of(&SessionError::NotFound("s".into()));
        assert_eq!(gone, SendFailure::Gone);
        let refused = SendFailure::of(&SessionError::RejectedByPlugin("plugin `p`: no".into()));
        assert!(matches!(refused, SendFailure::Refused(_)));
    }
}
