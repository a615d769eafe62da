//! Send pacing: how fast one session's ordinary sends may go out, so one
//! integration sending as fast as it can does not get the account's number
//! banned. Ordinary sends are the API's (`POST …/messages/{kind}` sent now,
//! and the actions on earlier messages that go out as messages) and the
//! broker's send queue, which takes the API's path; blasts and the scheduler
//! pace themselves and do not pass here.
//!
//! Two rules, each off at zero: at least `min_gap` between two sends of a
//! session, and at most `per_minute` sends of a session in any window of a
//! minute. The window slides over the times of the session's recent sends
//! (a log, not a token bucket), so no minute, wherever it starts, holds
//! more than the cap. A send over either rule waits its turn (`queue`, up to
//! `max_wait`) or is refused at once (`refuse`) with how long until it could
//! go: [`SessionError::SendPaced`].
//!
//! A send takes its slot when it is admitted, so sends queued together go
//! out in the order they came, each its gap after the one before; a send
//! that does not reach the network after all (its caller went away while it
//! waited, or the session stopped being able to send) gives its slot back.
//! The rules are pure ([`Ledger`]); [`Pacer`] keeps one ledger per session in
//! memory: a restart forgets them, which at worst lets one gap or one
//! window's sends through early once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::domain::session::Account;
use crate::network::NetworkSession;
use crate::sessions::{SessionError, Sessions};

/// What a send over the pacing does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacingMode {
    /// Wait for its turn, up to [`PacingConfig::max_wait`]; a longer wait is
    /// refused as `Refuse` refuses.
    #[default]
    Queue,
    /// Refuse it at once, saying how long until it could go.
    Refuse,
}

/// The pacing of ordinary sends; off by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacingConfig {
    /// Least time between two sends of one session
    /// (`SWITCHBOARD_SEND_MIN_GAP_MS`; zero: no gap).
    pub min_gap: Duration,
    /// Most sends of one session in any [`PacingConfig::window`]
    /// (`SWITCHBOARD_SEND_PER_MINUTE`; zero: no cap).
    pub per_minute: u32,
    /// Wait or refuse (`SWITCHBOARD_SEND_PACING`).
    pub mode: PacingMode,
    /// Longest a queued send waits (`SWITCHBOARD_SEND_PACING_MAX_WAIT_MS`).
    pub max_wait: Duration,
    /// The window `per_minute` counts in: a minute; shorter only for tests.
    pub window: Duration,
}

impl Default for PacingConfig {
    fn default() -> Self {
        Self {
            min_gap: Duration::ZERO,
            per_minute: 0,
            mode: PacingMode::Queue,
            max_wait: Duration::from_secs(30),
            window: Duration::from_secs(60),
        }
    }
}

impl PacingConfig {
    /// Whether neither rule is on, so sends are not paced at all.
    pub fn is_off(&self) -> bool {
        self.min_gap.is_zero() && self.per_minute == 0
    }
}

/// A wait as the whole seconds of a `Retry-After`: rounded up, at least 1
/// (a client told `0` would retry at once and be refused again).
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// What pacing says of a send asked for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It goes at this instant (now, or later after a wait); the slot is taken.
    Go(Instant),
    /// Refused: it could go at once after this long, as things stand.
    Refuse(Duration),
}

/// One session's sends that still count, oldest first: those admitted
/// within the last window (or gap), and those queued for later.
#[derive(Debug, Default)]
pub struct Ledger {
    sends: VecDeque<Instant>,
}

impl Ledger {
    /// Forgets sends no later send can be held up by: past the window when
    /// the cap is on, past the gap otherwise.
    fn forget_old(&mut self, config: &PacingConfig, now: Instant) {
        let keep = if config.per_minute > 0 {
            config.window.max(config.min_gap)
        } else {
            config.min_gap
        };
        while self.sends.front().is_some_and(|&at| at + keep <= now) {
            self.sends.pop_front();
        }
    }

    /// The earliest instant, at or after `now`, a new send may go.
    fn earliest(&self, config: &PacingConfig, now: Instant) -> Instant {
        let mut at = now;
        // Never ahead of a send already queued: sends go in the order they
        // came, the gap after the last one.
        if let Some(&last) = self.sends.back() {
            at = at.max(last + config.min_gap);
        }
        // The cap-th most recent send must have left the window.
        let cap = usize::try_from(config.per_minute).unwrap_or(usize::MAX);
        if cap > 0 && self.sends.len() >= cap {
            at = at.max(self.sends[self.sends.len() - cap] + config.window);
        }
        at
    }

    /// Decides a send asked for at `now`, and takes its slot when it goes.
    pub fn admit(&mut self, config: &PacingConfig, now: Instant) -> Verdict {
        self.forget_old(config, now);
        let at = self.earliest(config, now);
        let wait = at.saturating_duration_since(now);
        let goes = wait.is_zero() || (config.mode == PacingMode::Queue && wait <= config.max_wait);
        if goes {
            self.sends.push_back(at);
            Verdict::Go(at)
        } else {
            Verdict::Refuse(wait)
        }
    }

    /// Gives back the slot taken at `at` by a send that did not go out. The
    /// sends queued after it keep their slots: they were chosen with it
    /// counted, so they only wait a little longer than they now need.
    pub fn give_back(&mut self, at: Instant) {
        if let Some(i) = self.sends.iter().rposition(|&t| t == at) {
            self.sends.remove(i);
        }
    }

    /// Whether nothing in it counts any more (after [`Ledger::forget_old`]).
    fn is_empty(&self) -> bool {
        self.sends.is_empty()
    }
}

/// A session's sender: its network client and linked account.
type Sender = (Arc<dyn NetworkSession>, Option<Account>);

/// The ledgers of every session that sent lately.
#[derive(Debug, Default)]
struct Ledgers {
    by_session: HashMap<String, Ledger>,
    /// Past this many ledgers, the idle ones are dropped (amortised: the
    /// bound doubles with what stays).
    sweep_above: usize,
}

impl Ledgers {
    /// Decides a send of `session_id` asked for at `now` by its ledger, and
    /// now and then drops the ledgers nothing counts in any more, so
    /// sessions that sent once (or were deleted) are not kept for ever.
    fn admit(&mut self, config: &PacingConfig, session_id: &str, now: Instant) -> Verdict {
        let verdict = self
            .by_session
            .entry(session_id.to_owned())
            .or_default()
            .admit(config, now);
        if self.by_session.len() > self.sweep_above {
            self.by_session.retain(|_, ledger| {
                ledger.forget_old(config, now);
                !ledger.is_empty()
            });
            self.sweep_above = (self.by_session.len() * 2).max(64);
        }
        verdict
    }
}

/// The pacing of every session's ordinary sends; cheap to clone, and every
/// clone paces alike (the send core and the message actions share one).
#[derive(Clone, Debug)]
pub struct Pacer {
    config: Arc<PacingConfig>,
    ledgers: Arc<Mutex<Ledgers>>,
}

impl Default for Pacer {
    /// No pacing.
    fn default() -> Self {
        Self::new(PacingConfig::default())
    }
}

/// A slot taken by a send that is waiting for it or about to use it; given
/// back when dropped before [`Slot::keep`].
struct Slot {
    pacer: Pacer,
    session_id: String,
    at: Instant,
    kept: bool,
}

impl Slot {
    /// The send goes out: the slot stays taken.
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        if let Some(ledger) = self.pacer.lock().by_session.get_mut(&self.session_id) {
            ledger.give_back(self.at);
        }
    }
}

impl Pacer {
    /// Pacing by `config`.
    pub fn new(config: PacingConfig) -> Self {
        Self {
            config: Arc::new(config),
            ledgers: Arc::new(Mutex::new(Ledgers::default())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ledgers> {
        self.ledgers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides a send of `session_id` asked for now; takes its slot when it goes.
    fn admit(&self, session_id: &str) -> Result<Slot, SessionError> {
        let verdict = self.lock().admit(&self.config, session_id, Instant::now());
        match verdict {
            Verdict::Go(at) => Ok(Slot {
                pacer: self.clone(),
                session_id: session_id.to_owned(),
                at,
                kept: false,
            }),
            Verdict::Refuse(wait) => Err(SessionError::SendPaced {
                session: session_id.to_owned(),
                retry_after: wait,
            }),
        }
    }

    /// Paces an ordinary send of `session_id` whose `sender` was just
    /// checked: refuses it ([`SessionError::SendPaced`]) or waits for its
    /// slot, then answers the sender to hand it to at once (the same one
    /// when it did not wait; checked again after a wait, and the slot given
    /// back if the session can no longer send). With pacing off, `sender`
    /// as it is.
    pub async fn pace(
        &self,
        sessions: &Sessions,
        session_id: &str,
        sender: Sender,
    ) -> Result<Sender, SessionError> {
        if self.config.is_off() {
            return Ok(sender);
        }
        let slot = self.admit(session_id)?;
        if slot.at <= Instant::now() {
            slot.keep();
            return Ok(sender);
        }
        tracing::debug!(session = %session_id, wait_ms = slot.at.saturating_duration_since(Instant::now()).as_millis(), "send waits for its pacing slot");
        // Dropped here (the caller went away), the slot is given back.
        tokio::time::sleep_until(slot.at).await;
        let sender = sessions.sender(session_id)?;
        slot.keep();
        Ok(sender)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(min_gap_ms: u64, per_minute: u32, mode: PacingMode) -> PacingConfig {
        PacingConfig {
            min_gap: Duration::from_millis(min_gap_ms),
            per_minute,
            mode,
            ..PacingConfig::default()
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn pacing_is_off_unless_a_gap_or_a_cap_is_set() {
        assert!(PacingConfig::default().is_off());
        assert!(!config(1, 0, PacingMode::Queue).is_off());
        assert!(!config(0, 1, PacingMode::Refuse).is_off());
    }

    #[test]
    fn with_pacing_off_every_send_goes_at_once() {
        let (c, t0) = (PacingConfig::default(), Instant::now());
        let mut ledger = Ledger::default();
        for _ in 0..100 {
            assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        }
    }

    #[test]
    fn a_queued_send_goes_the_gap_after_the_last_and_the_next_after_it() {
        let (c, t0) = (config(1000, 0, PacingMode::Queue), Instant::now());
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        assert_eq!(ledger.admit(&c, t0 + ms(200)), Verdict::Go(t0 + ms(1000)));
        // Queued behind the one already waiting, in the order they came.
        assert_eq!(ledger.admit(&c, t0 + ms(300)), Verdict::Go(t0 + ms(2000)));
        // Long after, a send goes at once again.
        let later = t0 + ms(10_000);
        assert_eq!(ledger.admit(&c, later), Verdict::Go(later));
    }

    #[test]
    fn refuse_mode_refuses_inside_the_gap_with_the_time_left_and_takes_no_slot() {
        let (c, t0) = (config(1000, 0, PacingMode::Refuse), Instant::now());
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        assert_eq!(ledger.admit(&c, t0 + ms(300)), Verdict::Refuse(ms(700)));
        assert_eq!(ledger.admit(&c, t0 + ms(900)), Verdict::Refuse(ms(100)));
        // The refusals took nothing: the gap still counts from the first.
        assert_eq!(ledger.admit(&c, t0 + ms(1000)), Verdict::Go(t0 + ms(1000)));
    }

    #[test]
    fn the_cap_holds_in_any_window_that_slides_over_the_sends() {
        let (c, t0) = (config(0, 3, PacingMode::Refuse), Instant::now());
        let mut ledger = Ledger::default();
        for at in [t0, t0 + ms(10_000), t0 + ms(20_000)] {
            assert_eq!(ledger.admit(&c, at), Verdict::Go(at));
        }
        // The fourth waits until the first leaves the minute, not for a
        // minute that starts on the clock.
        assert_eq!(
            ledger.admit(&c, t0 + ms(30_000)),
            Verdict::Refuse(ms(30_000))
        );
        let free = t0 + ms(60_000);
        assert_eq!(ledger.admit(&c, free), Verdict::Go(free));
        // Then the second is the one to leave.
        assert_eq!(
            ledger.admit(&c, t0 + ms(61_000)),
            Verdict::Refuse(ms(9_000))
        );
    }

    #[test]
    fn a_queued_send_past_the_cap_takes_the_first_slot_the_window_frees() {
        let (c, t0) = (config(0, 2, PacingMode::Queue), Instant::now());
        let c = PacingConfig {
            max_wait: ms(60_000),
            ..c
        };
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        assert_eq!(ledger.admit(&c, t0 + ms(5)), Verdict::Go(t0 + ms(5)));
        assert_eq!(ledger.admit(&c, t0 + ms(10)), Verdict::Go(t0 + ms(60_000)));
        assert_eq!(ledger.admit(&c, t0 + ms(20)), Verdict::Go(t0 + ms(60_005)));
    }

    #[test]
    fn a_queued_send_that_would_wait_past_the_maximum_is_refused() {
        let c = PacingConfig {
            max_wait: ms(500),
            ..config(1000, 0, PacingMode::Queue)
        };
        let t0 = Instant::now();
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        assert_eq!(ledger.admit(&c, t0 + ms(100)), Verdict::Refuse(ms(900)));
        assert_eq!(ledger.admit(&c, t0 + ms(500)), Verdict::Go(t0 + ms(1000)));
    }

    #[test]
    fn a_slot_given_back_frees_the_next_send() {
        let (c, t0) = (config(1000, 0, PacingMode::Refuse), Instant::now());
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        ledger.give_back(t0);
        let soon = t0 + ms(1);
        assert_eq!(ledger.admit(&c, soon), Verdict::Go(soon));
    }

    #[test]
    fn gap_and_cap_together_take_the_later_of_the_two() {
        let c = PacingConfig {
            max_wait: ms(120_000),
            ..config(1000, 2, PacingMode::Queue)
        };
        let t0 = Instant::now();
        let mut ledger = Ledger::default();
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0));
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0 + ms(1000)));
        assert_eq!(ledger.admit(&c, t0), Verdict::Go(t0 + ms(60_000)));
    }

    #[test]
    fn old_sends_are_forgotten() {
        let (c, t0) = (config(1000, 2, PacingMode::Refuse), Instant::now());
        let mut ledger = Ledger::default();
        ledger.admit(&c, t0);
        ledger.admit(&c, t0 + ms(2000));
        ledger.forget_old(&c, t0 + ms(61_000));
        assert_eq!(ledger.sends.len(), 1);
        ledger.forget_old(&c, t0 + ms(62_000));
        assert!(ledger.is_empty());
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up_and_never_zero() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(ms(1)), 1);
        assert_eq!(retry_after_secs(ms(1000)), 1);
        assert_eq!(retry_after_secs(ms(1001)), 2);
        assert_eq!(retry_after_secs(ms(59_500)), 60);
    }

    #[test]
    fn a_send_whose_caller_goes_away_while_it_waits_gives_its_slot_back() {
        // A gap of an hour, and as long to wait: nothing here lasts long
        // enough to leave it.
        let pacer = Pacer::new(PacingConfig {
            max_wait: ms(3_600_000),
            ..config(3_600_000, 0, PacingMode::Queue)
        });
        let first = pacer.admit("s").expect("the first goes");
        let first_at = first.at;
        first.keep();
        let waiting = pacer.admit("s").expect("the second is queued");
        assert_eq!(waiting.at, first_at + ms(3_600_000));
        drop(waiting);
        // The third queues where the second was, not behind it.
        let third = pacer.admit("s").expect("the third is queued");
        assert_eq!(third.at, first_at + ms(3_600_000));
        third.keep();
        // Another session is not held up at all.
        let other = pacer.admit("t").expect("another session goes");
        assert!(other.at <= Instant::now());
    }

    #[test]
    fn ledgers_nothing_counts_in_are_swept_once_many_sessions_have_sent() {
        let (c, t0) = (config(1, 0, PacingMode::Refuse), Instant::now());
        let mut ledgers = Ledgers::default();
        for i in 0..100 {
            ledgers.admit(&c, &format!("s{i}"), t0);
        }
        // All still count at t0: none was dropped.
        assert_eq!(ledgers.by_session.len(), 100);
        // A millisecond on, the first hundred count no more; the next sweep
        // (past 130 ledgers) drops them and keeps the new ones.
        let t1 = t0 + ms(1);
        for i in 0..40 {
            ledgers.admit(&c, &format!("n{i}"), t1);
        }
        assert_eq!(ledgers.by_session.len(), 40);
        assert!(ledgers.by_session.keys().all(|k| k.starts_with('n')));
    }
}
