//! The sim's reach-out timelock, WhatsApp's error 463: while it holds, the
//! network refuses a session's messages to people its account has no chat
//! with, and a session logging in is told of it (as a whatsapp session asks
//! at login). Set and lifted through the control API. A chat, on the sim,
//! is one the session's message history holds a message of: the sim's
//! world lives in the gateway's store.

use super::{Attached, World, emit, internal};
use crate::domain::jid::{Jid, JidKind};
use crate::domain::time::unix_now;
use crate::{EventSink, NetworkError, NetworkEvent};

/// A reach-out timelock the control API put on a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) struct SimTimelock {
    /// Unix seconds when it ends.
    pub until: i64,
    /// Whether a refusal (and the answer at login) says when it ends; when
    /// not, the network refuses without saying, as WhatsApp may.
    pub stated: bool,
}

impl SimTimelock {
    fn holds(&self) -> bool {
        self.until > unix_now()
    }
}

impl Attached {
    fn timelock_now(&self) -> Option<SimTimelock> {
        self.timelock.filter(SimTimelock::holds)
    }
}

impl World {
    /// Puts a reach-out timelock on a session until `until`.
    pub(in crate::sim) fn set_timelock(
        &self,
        id: &str,
        until: i64,
        stated: bool,
    ) -> Result<(), NetworkError> {
        self.with(id, |s| s.timelock = Some(SimTimelock { until, stated }))
    }

    /// Lifts a session's reach-out timelock; `true` when one held.
    pub(in crate::sim) fn lift_timelock(&self, id: &str) -> Result<bool, NetworkError> {
        self.with(id, |s| s.timelock.take().is_some_and(|l| l.holds()))
    }

    /// Refuses a send from session `id` to `to` while the session's
    /// timelock holds and `to` is a person its account has no chat with.
    pub(super) fn check_reach_out(&self, id: &str, to: &Jid) -> Result<(), NetworkError> {
        let Some(lock) = self.with(id, |s| s.timelock_now())? else {
            return Ok(());
        };
        if !matches!(to.kind(), JidKind::User | JidKind::Lid) {
            return Ok(());
        }
        let key = self.store.chat_key(id, &to.to_string()).map_err(internal)?;
        let chat = self.store.chat(id, &key).map_err(internal)?;
        if chat.is_some_and(|c| c.message_count > 0) {
            return Ok(());
        }
        Err(NetworkError::ReachOutTimelock {
            until: lock.stated.then_some(lock.until),
        })
    }

    /// Tells a session that just logged in whether a timelock holds (and
    /// until when, if stated).
    pub(super) async fn timelock_after_login(&self, id: &str, events: &EventSink) {
        let Ok(lock) = self.with(id, |s| s.timelock_now()) else {
            return;
        };
        let event = NetworkEvent::ReachOutTimelock {
            active: lock.is_some(),
            until: lock.filter(|l| l.stated).map(|l| l.until),
        };
        emit(events, event).await;
    }
}
