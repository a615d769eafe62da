//! Why a session operation was refused.

use std::time::Duration;

use crate::network::NetworkError;
use crate::store::StoreError;

/// A refused or failed session operation.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No session has this id.
    #[error("no session with id `{0}`")]
    NotFound(String),
    /// The id is taken.
    #[error("a session with id `{0}` already exists")]
    AlreadyExists(String),
    /// A request field is invalid.
    #[error("`{field}` {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// Another session already uses this phone number.
    #[error("phone {0} is already used by another session")]
    PhoneTaken(String),
    /// The session is paused.
    #[error("session `{0}` is paused; resume it first")]
    Paused(String),
    /// The session cannot do this in its current connection state.
    #[error("{0}")]
    WrongState(String),
    /// The network refused or failed.
    #[error(transparent)]
    Network(#[from] NetworkError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// What was asked does not fit the state of what it names (a message
    /// that is not this account's to edit): `code` says which rule.
    #[error("{message}")]
    Conflict {
        /// The error code.
        code: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A message-transform plugin refused the send.
    #[error("the send was rejected by {0}")]
    RejectedByPlugin(String),
    /// Send pacing refused the send: the session's sends come faster than
    /// the configured gap or per-minute cap allow. Nothing reached the
    /// network.
    #[error(
        "session `{session}` is sending faster than its send pacing allows (`--send-min-gap-ms`, `--send-per-minute`); try again in {} s",
        whole_secs(.retry_after)
    )]
    SendPaced {
        /// The session.
        session: String,
        /// How long until a send could go at once, as things stand.
        retry_after: Duration,
    },
    /// The session's account is under a reach-out timelock: WhatsApp
    /// refused this send for it (error 463), or, when not `refused`, the
    /// send is to someone the account has no chat with and was held before
    /// it reached the network. Either way it can go once the lock ends.
    #[error("{}", timelock_message(.session, .lock, *.refused))]
    Timelocked {
        /// The session.
        session: String,
        /// The lock.
        lock: super::Timelock,
        /// Whether the network refused the send (rather than the gateway
        /// holding it).
        refused: bool,
    },
}

/// The end of a hold, as a sentence.
fn hold_end(lock: &super::Timelock) -> String {
    let end = crate::domain::time::iso8601(lock.until);
    if lock.stated {
        format!("until {end}, as WhatsApp stated")
    } else {
        format!("until {end} (WhatsApp stated no end; `--reach-out-hold-secs`)")
    }
}

/// What a send met by a reach-out timelock is told.
fn timelock_message(session: &str, lock: &super::Timelock, refused: bool) -> String {
    let end = hold_end(lock);
    if refused {
        format!(
            "WhatsApp refused the message (error 463): session `{session}` is under a reach-out timelock {end}; until then it may not message people it has no chat with, and the gateway holds such sends"
        )
    } else {
        format!(
            "held: session `{session}` is under a reach-out timelock {end}; a send to someone it has no chat with waits for its end (error 463)"
        )
    }
}

/// A wait as `Retry-After` gives it, for the message.
fn whole_secs(wait: &Duration) -> u64 {
    crate::messages::retry_after_secs(*wait)
}

impl From<crate::domain::hooks::PluginRejection> for SessionError {
    fn from(r: crate::domain::hooks::PluginRejection) -> Self {
        SessionError::RejectedByPlugin(r.0)
    }
}
