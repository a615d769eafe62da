//! Auto-reconnect and the account lock. When the network drops a logged-in
//! session that is meant to be connected (not paused, auto-reconnect on), it
//! is reconnected after a short pause; consecutive failures (failed
//! attempts, refused logins, connections that dropped before they lasted,
//! the server's rate-limit penalty) are counted (`error_count`) and wait
//! longer, so a network that keeps saying no is asked ever more slowly.
//! When the network locks the
//! account, auto-reconnect waits out a cooldown from an escalating schedule
//! (per session and process lifetime; the last step repeats), then resumes; a
//! manual connect lifts the cooldown at once.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use serde_json::json;

use super::intake::Intake;
use super::next_attempt::{NextAttempt, after, jittered};
use super::{Inner, Live, Sessions};
use crate::domain::event::{Envelope, EventName};
use crate::domain::event_data::own::{AccountLockedData, to_data};
use crate::domain::session::SessionStatus;
use crate::domain::time::{unix_now, unix_now_ms};

/// Reconnect timing, from flags and environment.
#[derive(Debug, Clone, PartialEq)]
pub struct ReconnectConfig {
    /// Pauses before automatic reconnect attempts: the first after a drop,
    /// then one more step per consecutive failure; the last repeats
    /// (`SWITCHBOARD_RECONNECT_DELAYS_SECS`, `1,2,5,10,30,60`).
    pub delays: Vec<Duration>,
    /// Account-lock cooldowns: the n-th lock of a session in this process
    /// lifetime waits the n-th; the last repeats (`ACCOUNT_LOCK_BACKOFF_SECS`,
    /// `300,900,3600`).
    pub lock_backoff: Vec<Duration>,
    /// How long a login must last before a drop counts as a fresh start:
    /// a drop sooner (or a refused login) counts as a failure and the next
    /// pause is a step longer, so a connection the server keeps closing
    /// cannot make the gateway reconnect at the first pause forever
    /// (`SWITCHBOARD_RECONNECT_STABLE_AFTER_SECS`, 30, as WhatsApp's own
    /// clients wait).
    pub stable_after: Duration,
    /// How long a reach-out timelock is assumed to last when WhatsApp
    /// refused a send for one (error 463) without saying until when: sends
    /// to people without a chat are held that long, and the first after it
    /// finds out whether the lock is still there
    /// (`SWITCHBOARD_REACH_OUT_HOLD_SECS`, 3600).
    pub reach_out_hold: Duration,
    /// Up to how many percent each reconnect pause is stretched at random,
    /// so sessions dropped together do not return together
    /// (`SWITCHBOARD_RECONNECT_JITTER_PERCENT`, 20). Lock cooldowns are
    /// kept exact.
    pub jitter_percent: u8,
}

/// How many failures the server's rate-limit answer (stream error 429)
/// counts for, as WhatsApp's clients count it.
pub const RATE_LIMIT_PENALTY: u32 = 5;

impl Default for ReconnectConfig {
    fn default() -> Self {
        let secs = |list: &[u64]| list.iter().map(|s| Duration::from_secs(*s)).collect();
        Self {
            delays: secs(&[1, 2, 5, 10, 30, 60]),
            lock_backoff: secs(&[300, 900, 3600]),
            stable_after: Duration::from_secs(30),
            reach_out_hold: Duration::from_secs(3600),
            jitter_percent: 20,
        }
    }
}

/// Step `n` (from 0) of a schedule; past the end, the last step repeats.
pub fn step(schedule: &[Duration], n: usize) -> Duration {
    schedule
        .get(n)
        .or(schedule.last())
        .copied()
        .unwrap_or(Duration::ZERO)
}

/// A cooldown in whole seconds as the `account_locked` event reports it,
/// rounded up so `cooldown_until` is never early.
pub fn whole_secs(d: Duration) -> i64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    i64::try_from(secs).unwrap_or(i64::MAX)
}

/// The auto-reconnect state of a session, as `GET /sessions/{id}/reconnect` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReconnectStatus {
    /// Auto-reconnect is on (stored).
    pub enabled: bool,
    /// Consecutive failures since the last lasting login: failed
    /// reconnects, refused logins, connections that dropped within the
    /// stability window, and the server's rate-limit penalty.
    pub error_count: u32,
    /// Unix seconds when an account-lock cooldown ends, while one runs.
    pub cooldown_until: Option<i64>,
    /// The automatic reconnect the session waits for, if one: when, and
    /// why.
    pub next_attempt: Option<NextAttempt>,
}

#[derive(Default)]
struct WatchState {
    error_count: u32,
    /// When the current connection logged in, until it drops.
    logged_in_at: Option<Instant>,
    locks: usize,
    locked_until: Option<(Instant, i64)>,
    pending: Option<CancellationToken>,
    /// What the pending attempt is, while one is pending.
    next: Option<NextAttempt>,
    /// The gateway asked the network to close the connection: the
    /// `disconnected` that follows is not a drop (the session may be meant
    /// to be connected again by the time the intake reads it).
    requested: bool,
}

/// The reconnect state of one live session (memory only).
#[derive(Default)]
pub struct Watch {
    state: Mutex<WatchState>,
}

impl Watch {
    fn lock(&self) -> MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Consecutive failures since the last lasting login (see `dropped`).
    pub fn error_count(&self) -> u32 {
        self.lock().error_count
    }

    /// The failures that count now: none once the current login has
    /// lasted `stable_after`.
    pub fn failures(&self, stable_after: Duration) -> u32 {
        let s = self.lock();
        match s.logged_in_at {
            Some(t) if t.elapsed() >= stable_after => 0,
            _ => s.error_count,
        }
    }

    /// Unix seconds when an account-lock cooldown ends, while one is running.
    pub fn cooldown_until(&self) -> Option<i64> {
        let s = self.lock();
        s.locked_until
            .filter(|(at, _)| Instant::now() < *at)
            .map(|(_, unix)| unix)
    }

    fn is_locked(&self) -> bool {
        self.cooldown_until().is_some()
    }

    /// Lifts any cooldown and cancels a pending attempt (a manual connect).
    pub(super) fn lift(&self) {
        let mut s = self.lock();
        s.locked_until = None;
        s.next = None;
        if let Some(t) = s.pending.take() {
            t.cancel();
        }
    }

    /// Cancels a pending attempt (auto-reconnect switched off).
    pub(super) fn cancel_pending(&self) {
        let mut s = self.lock();
        s.next = None;
        if let Some(t) = s.pending.take() {
            t.cancel();
        }
    }

    /// Replaces the pending attempt by `token`, which is `next`.
    fn set_pending(&self, token: CancellationToken, next: NextAttempt) {
        let mut s = self.lock();
        s.next = Some(next);
        if let Some(old) = s.pending.replace(token) {
            old.cancel();
        }
    }

    /// The gateway is about to close the connection itself (a disconnect,
    /// pause or logout): the next `disconnected` is its answer, not a drop.
    pub(super) fn expect_requested_close(&self) {
        self.lock().requested = true;
    }

    /// Whether the `disconnected` being read answers a close the gateway
    /// asked for (and forgets that it asked).
    fn take_requested_close(&self) -> bool {
        std::mem::take(&mut self.lock().requested)
    }

    /// The pending attempt, if one.
    pub fn next_attempt(&self) -> Option<NextAttempt> {
        self.lock().next.clone()
    }

    /// The pending attempt has begun.
    fn attempt_began(&self) {
        self.lock().next = None;
    }
}

/// What intake tells about connection changes; it decides about reconnects.
pub(super) struct Supervisor {
    pub inner: Weak<Inner>,
}

impl Supervisor {
    pub(super) fn sessions(&self) -> Option<Sessions> {
        self.inner.upgrade().map(|inner| Sessions { inner })
    }

    /// The session logged in: its failures are forgotten once the login
    /// has lasted the stability window (see [`Self::dropped`]).
    pub fn logged_in(&self, live: &Live) {
        {
            let mut s = live.watch.lock();
            s.logged_in_at = Some(Instant::now());
            // A close the gateway asked for that the network never
            // answered (it was offline already) must not swallow a real
            // drop of this connection.
            s.requested = false;
        }
        live.watch.cancel_pending();
    }

    /// The server rate-limited the session: the next pauses are as many
    /// steps longer as [`RATE_LIMIT_PENALTY`].
    pub fn rate_limited(&self, live: &Live) {
        let mut s = live.watch.lock();
        s.error_count = s.error_count.saturating_add(RATE_LIMIT_PENALTY);
    }

    /// The network dropped the session (`reason`): reconnect after the next
    /// pause, which is returned. A login that lasted the stability window
    /// starts the schedule over; a drop before it (a refused login, a
    /// stream closed at once) is one more failure.
    pub fn dropped(&self, live: &Arc<Live>, reason: &str) -> Option<NextAttempt> {
        if live.watch.take_requested_close() {
            live.watch.lock().logged_in_at = None;
            return None;
        }
        let sessions = self.sessions()?;
        let n = {
            let mut s = live.watch.lock();
            let lasted = s
                .logged_in_at
                .take()
                .is_some_and(|t| t.elapsed() >= sessions.inner.reconnect.stable_after);
            if lasted {
                s.error_count = 0;
            }
            let n = s.error_count;
            s.error_count = s.error_count.saturating_add(1);
            n
        };
        if !sessions.wants_reconnect(live) {
            return None;
        }
        let delay = sessions.jitter(step(&sessions.inner.reconnect.delays, n as usize));
        let why = format!("after a drop: {reason}");
        Some(sessions.schedule_reconnect(live, delay, why, n.saturating_add(1)))
    }

    /// The network locked the account: starts the next cooldown of the
    /// schedule (at least until `until`, when the network said when the lock
    /// ends), after which auto-reconnect resumes. Returns the cooldown and
    /// when it ends (Unix seconds).
    pub fn locked(
        &self,
        live: &Arc<Live>,
        until: Option<i64>,
    ) -> (Duration, i64, Option<NextAttempt>) {
        let Some(sessions) = self.sessions() else {
            return (Duration::ZERO, unix_now(), None);
        };
        let cooldown = {
            let mut s = live.watch.lock();
            let scheduled = step(&sessions.inner.reconnect.lock_backoff, s.locks);
            let stated = until.map_or(Duration::ZERO, |t| {
                Duration::from_secs(t.saturating_sub(unix_now()).max(0) as u64)
            });
            let cooldown = scheduled.max(stated);
            s.locks += 1;
            let until = unix_now().saturating_add(whole_secs(cooldown));
            s.locked_until = Some((Instant::now() + cooldown, until));
            (cooldown, until)
        };
        tracing::warn!(session = %live.id, cooldown_secs = cooldown.0.as_secs_f64(), "account locked; auto-reconnect paused");
        let next = if sessions.wants_reconnect_after_cooldown(live) {
            let count = live.watch.error_count();
            let why = "after the account-lock cooldown".to_owned();
            Some(sessions.schedule_reconnect(live, cooldown.0, why, count))
        } else {
            live.watch.cancel_pending();
            None
        };
        (cooldown.0, cooldown.1, next)
    }
}

impl Intake {
    /// The network locked the account and closed the socket: the session is
    /// disconnected, and auto-reconnect waits out the next cooldown (at
    /// least until `ends`, the lock's end when the network stated it).
    pub(super) fn account_locked(&mut self, reason: &str, ends: Option<i64>, url: Option<String>) {
        self.live.update(|s| {
            s.status = SessionStatus::Disconnected;
            s.qr = None;
            s.last_error = Some(format!("account locked: {reason}"));
        });
        let (cooldown, until, next) = self.supervisor.locked(&self.live, ends);
        let id = &self.live.id;
        let dropped = json!({ "reason": format!("account locked: {reason}") });
        let dropped = Envelope::now(id, EventName::Disconnected, dropped);
        let data = AccountLockedData {
            reason: reason.to_owned(),
            cooldown_secs: whole_secs(cooldown),
            cooldown_until: until,
            expires_at: ends,
            url,
        };
        let locked = Envelope::now(id, EventName::AccountLocked, to_data(&data));
        let owed = self.owed();
        self.queue.push(dropped, owed);
        let owed = self.owed();
        self.queue.push(locked, owed);
        if let Some(next) = next {
            self.publish(EventName::ReconnectScheduled, to_data(&next));
        }
    }
}

impl Sessions {
    /// Whether a dropped session should come back by itself now: it is still
    /// this registry's, paired, meant to be connected, not paused, with
    /// auto-reconnect on, disconnected, and not cooling down after a lock.
    fn wants_reconnect(&self, live: &Arc<Live>) -> bool {
        self.wants_reconnect_after_cooldown(live) && !live.watch.is_locked()
    }

    /// [`Self::wants_reconnect`] once any running cooldown is over.
    fn wants_reconnect_after_cooldown(&self, live: &Arc<Live>) -> bool {
        let Ok(current) = self.live(&live.id) else {
            return false;
        };
        if !Arc::ptr_eq(&current, live) {
            return false;
        }
        let Ok(r) = self.record(&live.id) else {
            return false;
        };
        r.want_connected
            && !r.paused
            && r.auto_reconnect
            && r.account.is_some()
            && live.state().status == SessionStatus::Disconnected
    }

    /// A reconnect pause with the configured jitter.
    fn jitter(&self, delay: Duration) -> Duration {
        jittered(delay, self.inner.reconnect.jitter_percent, &mut rand::rng())
    }

    /// Tries to reconnect after `delay`, unless cancelled or no longer
    /// wanted then; returns the attempt, as the status shows it.
    fn schedule_reconnect(
        &self,
        live: &Arc<Live>,
        delay: Duration,
        reason: String,
        error_count: u32,
    ) -> NextAttempt {
        let next = after(delay, unix_now_ms(), reason, error_count);
        tracing::info!(session = %live.id, delay_ms = next.delay_ms, reason = %next.reason, "reconnect scheduled");
        // Ends with the gateway, or when the session is deleted.
        let token = live.ended.child_token();
        live.watch.set_pending(token.clone(), next.clone());
        let this = self.clone();
        let live = live.clone();
        self.inner.tasks.spawn(async move {
            tokio::select! {
                _ = token.cancelled() => return,
                _ = tokio::time::sleep(delay) => {}
            }
            live.watch.attempt_began();
            this.reconnect_attempt(&live).await;
        });
        next
    }

    async fn reconnect_attempt(&self, live: &Arc<Live>) {
        if !self.wants_reconnect(live) {
            return;
        }
        tracing::info!(session = %live.id, "reconnecting after a drop");
        if let Err(e) = self.connect_live(&live.id).await {
            let failures = {
                let mut s = live.watch.lock();
                s.error_count += 1;
                s.error_count
            };
            tracing::warn!(session = %live.id, error = %e, failures, "reconnect failed");
            if self.wants_reconnect(live) {
                let delay = self.jitter(step(&self.inner.reconnect.delays, failures as usize));
                let why = format!("after a failed reconnect: {e}");
                let next = self.schedule_reconnect(live, delay, why, failures);
                self.inner.bus.publish(Envelope::now(
                    &live.id,
                    EventName::ReconnectScheduled,
                    to_data(&next),
                ));
            }
        }
    }

    /// Whether auto-reconnect is on, the consecutive failures and any
    /// cooldown, served from the stored record (works while disconnected).
    pub fn reconnect_status(&self, id: &str) -> Result<ReconnectStatus, super::SessionError> {
        let live = self.live(id)?;
        let record = self.record(id)?;
        Ok(ReconnectStatus {
            enabled: record.auto_reconnect,
            error_count: live.watch.failures(self.inner.reconnect.stable_after),
            cooldown_until: live.watch.cooldown_until(),
            next_attempt: live.watch.next_attempt(),
        })
    }

    /// Switches auto-reconnect on or off (stored); off cancels a pending attempt.
    pub fn set_auto_reconnect(
        &self,
        id: &str,
        enabled: bool,
    ) -> Result<ReconnectStatus, super::SessionError> {
        let live = self.live(id)?;
        self.modify(id, |r| r.auto_reconnect = enabled)?;
        if !enabled {
            live.watch.cancel_pending();
        }
        self.reconnect_status(id)
    }

    /// Whether message-history sync is skipped for new devices (stored).
    pub fn skip_history_sync(&self, id: &str) -> Result<bool, super::SessionError> {
        self.live(id)?;
        Ok(self.record(id)?.skip_history_sync)
    }

    /// Sets whether message-history sync is skipped for new devices (stored).
    pub fn set_skip_history_sync(&self, id: &str, skip: bool) -> Result<bool, super::SessionError> {
        self.live(id)?;
        Ok(self
            .modify(id, |r| r.skip_history_sync = skip)?
            .skip_history_sync)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(list: &[f64]) -> Vec<Duration> {
        list.iter().map(|s| Duration::from_secs_f64(*s)).collect()
    }

    #[test]
    fn the_schedule_walks_and_its_last_step_repeats() {
        let s = secs(&[300.0, 900.0, 3600.0]);
        let walked: Vec<u64> = (0..5).map(|n| step(&s, n).as_secs()).collect();
        assert_eq!(walked, [300, 900, 3600, 3600, 3600]);
        assert_eq!(step(&[], 3), Duration::ZERO);
    }

    #[test]
    fn the_default_lock_schedule_is_the_specs() {
        let c = ReconnectConfig::default();
        assert_eq!(c.lock_backoff, secs(&[300.0, 900.0, 3600.0]));
        assert_eq!(c.delays[0], Duration::from_secs(1));
    }

    #[test]
    fn a_fractional_cooldown_is_reported_rounded_up() {
        assert_eq!(whole_secs(Duration::from_millis(200)), 1);
        assert_eq!(whole_secs(Duration::from_secs(300)), 300);
        assert_eq!(whole_secs(Duration::ZERO), 0);
    }

    #[test]
    fn a_lift_ends_the_cooldown_and_cancels_the_pending_attempt() {
        let w = Watch::default();
        let token = CancellationToken::new();
        w.set_pending(
            token.clone(),
            after(Duration::from_secs(1), 0, "test".into(), 1),
        );
        w.lock().locked_until = Some((Instant::now() + Duration::from_secs(60), 1));
        assert_eq!(w.cooldown_until(), Some(1));
        w.lift();
        assert!(token.is_cancelled());
        assert_eq!(w.cooldown_until(), None);
    }
}
