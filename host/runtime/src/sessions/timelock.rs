//! A session's reach-out timelock: WhatsApp's restriction (its error 463)
//! on messaging people the account has no chat with. The gateway learns it
//! from a refused send or from what the network says at login, keeps it in
//! the session's live state until it ends, and the send core asks it before
//! every one-to-one send: a send to someone new is then held (scheduled for
//! the lock's end, or set aside in a blast) instead of being refused again,
//! which is what a flood of refused first contacts looks like to WhatsApp.
//! Sends to chats the account already has go on.
//!
//! The lock lives in memory: after a restart the network says again (a
//! whatsapp session asks at login; the next refused send tells too).

use super::{Live, Sessions};
use crate::domain::event::{Envelope, EventName};
use crate::domain::event_data::own::{ReachOutTimelockData, to_data};
use crate::domain::jid::{Jid, JidKind};
use crate::domain::time::unix_now;

/// A reach-out timelock in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timelock {
    /// Unix seconds when it ends.
    pub until: i64,
    /// Whether WhatsApp stated the end; otherwise the gateway assumed it
    /// (`--reach-out-hold-secs` from when it was learned), and a send after
    /// it finds out whether the lock is still there.
    pub stated: bool,
}

impl Timelock {
    /// Whether it still holds at `now` (Unix seconds).
    pub fn holds_at(&self, now: i64) -> bool {
        self.until > now
    }

    /// Whole seconds from `now` until it ends (at least 1 while it holds).
    pub fn retry_after_secs(&self, now: i64) -> i64 {
        (self.until - now).max(1)
    }
}

impl Sessions {
    /// The session's reach-out timelock, while it holds.
    pub fn timelock(&self, id: &str) -> Option<Timelock> {
        let live = self.live(id).ok()?;
        let lock = live.state().timelock?;
        lock.holds_at(unix_now()).then_some(lock)
    }

    /// Records that the network reports a reach-out timelock on the session,
    /// ending at `until` when it said so (else after the configured hold),
    /// and announces it when it is new or its end moved. Returns the lock.
    pub fn note_timelock(&self, id: &str, until: Option<i64>) -> Option<Timelock> {
        let live = self.live(id).ok()?;
        let now = unix_now();
        let lock = match until {
            Some(until) if until > now => Timelock {
                until,
                stated: true,
            },
            // A stated end already past: the lock is over as far as the
            // network knows; nothing to hold.
            Some(_) => {
                self.lift_timelock_of(&live);
                return None;
            }
            None => Timelock {
                until: now + self.inner.reconnect.reach_out_hold.as_secs().max(1) as i64,
                stated: false,
            },
        };
        let mut changed = false;
        live.update(|s| {
            let known = s.timelock.filter(|l| l.holds_at(now));
            // An assumed end does not replace a lock still in force: a
            // refusal without a stated end is the same lock.
            let keep = matches!(known, Some(k) if !lock.stated && k.until >= lock.until);
            if !keep && known != Some(lock) {
                s.timelock = Some(lock);
                changed = true;
            }
        });
        let lock = live.state().timelock.unwrap_or(lock);
        if changed {
            tracing::warn!(session = %id, until = lock.until, stated = lock.stated, "reach-out timelock: sends to people without a chat are held until it ends");
            self.publish_timelock(id, Some(lock), now);
        }
        Some(lock)
    }

    /// Records that the network says the session has no reach-out timelock.
    pub(super) fn lift_timelock_of(&self, live: &Live) {
        let mut had = false;
        live.update(|s| had = s.timelock.take().is_some_and(|l| l.holds_at(unix_now())));
        if had {
            tracing::info!(session = %live.id, "reach-out timelock lifted");
            self.publish_timelock(&live.id, None, unix_now());
        }
    }

    fn publish_timelock(&self, id: &str, lock: Option<Timelock>, now: i64) {
        let data = ReachOutTimelockData {
            active: lock.is_some(),
            until: lock.map(|l| l.until),
            stated: lock.is_some_and(|l| l.stated),
            retry_after_secs: lock.map(|l| l.retry_after_secs(now)),
        };
        self.inner.bus.publish(Envelope::now(
            id,
            EventName::ReachOutTimelock,
            to_data(&data),
        ));
    }

    /// Whether `to` is someone the session's account has no chat with: a
    /// person (by phone or `@lid`) in whose chat the gateway holds no
    /// message, either way. Groups, broadcast lists and status are never
    /// first contacts. A store that cannot tell counts as a known chat, so
    /// the send goes and the network decides.
    pub fn is_first_contact(&self, id: &str, to: &Jid) -> bool {
        if !matches!(to.kind(), JidKind::User | JidKind::Lid) {
            return false;
        }
        let store = &self.inner.store;
        let chat = store
            .chat_key(id, &to.to_string())
            .and_then(|key| store.chat(id, &key));
        match chat {
            Ok(chat) => chat.is_none_or(|c| c.message_count == 0),
            Err(e) => {
                tracing::warn!(session = %id, error = %e, "could not read whether a chat exists; sending");
                false
            }
        }
    }

    /// The lock a send from session `id` to `to` must wait out: the session's
    /// reach-out timelock while it holds, when `to` is a first contact.
    pub fn hold_for(&self, id: &str, to: &Jid) -> Option<Timelock> {
        let lock = self.timelock(id)?;
        self.is_first_contact(id, to).then_some(lock)
    }
}

impl super::reconnect::Supervisor {
    /// What the network said of the reach-out timelock at login.
    pub(super) fn timelock(&self, live: &Live, active: bool, until: Option<i64>) {
        let Some(sessions) = self.sessions() else {
            return;
        };
        if active {
            sessions.note_timelock(&live.id, until);
        } else {
            sessions.lift_timelock_of(live);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Timelock;

    #[test]
    fn a_lock_holds_until_its_end_and_asks_for_at_least_a_second() {
        let lock = Timelock {
            until: 1_000,
            stated: true,
        };
        assert!(lock.holds_at(999));
        assert!(!lock.holds_at(1_000));
        assert_eq!(lock.retry_after_secs(400), 600);
        assert_eq!(lock.retry_after_secs(1_000), 1);
    }
}
