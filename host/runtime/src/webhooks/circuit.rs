//! Per-URL suspension: after `threshold` consecutive failed deliveries a URL
//! is suspended; when the suspension ends exactly one event goes as a probe;
//! success resumes delivery, failure suspends again for twice as long, up to a
//! cap. Pure state: the caller passes the time in.

use std::time::Duration;

use tokio::time::Instant;

/// When a URL is suspended, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuspendPolicy {
    /// Consecutive failures that suspend.
    pub threshold: u32,
    /// First suspension.
    pub base: Duration,
    /// Longest suspension.
    pub max: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Delivering,
    Suspended { until: Instant, duration: Duration },
    Probing { duration: Duration },
}

/// What to do with the next event for a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Deliver it normally.
    Deliver,
    /// Deliver it as the single probe of a suspended URL.
    Probe,
    /// Do not attempt it (counted as skipped).
    Skip,
}

/// A change worth a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The URL was suspended for this long.
    Suspended(Duration),
    /// A probe succeeded; delivery resumed.
    Resumed,
}

/// The delivery health of one URL.
#[derive(Debug, Clone)]
pub struct Circuit {
    state: State,
    consecutive_failures: u32,
    skipped: u64,
    last_error: Option<String>,
}

impl Default for Circuit {
    fn default() -> Self {
        Self {
            state: State::Delivering,
            consecutive_failures: 0,
            skipped: 0,
            last_error: None,
        }
    }
}

/// A snapshot for `diagnostics.webhooks[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// Deliveries are currently suspended (or a probe is in flight).
    pub circuit_open: bool,
    /// Consecutive failed deliveries.
    pub consecutive_failures: u32,
    /// Seconds until the next probe may go, while suspended.
    pub retry_in_seconds: Option<f64>,
    /// The last delivery error.
    pub last_error: Option<String>,
    /// Events not attempted while suspended.
    pub skipped_while_suspended: u64,
}

impl Circuit {
    /// Decides about the next event at `now`.
    pub fn admit(&mut self, now: Instant) -> Admit {
        match self.state {
            State::Delivering => Admit::Deliver,
            State::Suspended { until, duration } if now >= until => {
                self.state = State::Probing { duration };
                Admit::Probe
            }
            State::Suspended { .. } | State::Probing { .. } => {
                self.skipped += 1;
                Admit::Skip
            }
        }
    }

    /// Whether deliveries are suspended or a probe is in flight.
    pub fn is_open(&self) -> bool {
        !matches!(self.state, State::Delivering)
    }

    /// Records a successful delivery.
    pub fn on_success(&mut self) -> Option<Transition> {
        self.consecutive_failures = 0;
        if let State::Probing { .. } = self.state {
            self.state = State::Delivering;
            return Some(Transition::Resumed);
        }
        None
    }

    /// Records a failed delivery attempt; `probe` says whether it was the probe.
    pub fn on_failure(
        &mut self,
        error: &str,
        probe: bool,
        now: Instant,
        policy: &SuspendPolicy,
    ) -> Option<Transition> {
        self.consecutive_failures = self.consecutive_failures.saturating_add(1);
        self.last_error = Some(error.to_owned());
        let duration = match self.state {
            State::Probing { duration } if probe => (duration.saturating_mul(2)).min(policy.max),
            State::Delivering if self.consecutive_failures >= policy.threshold => {
                policy.base.min(policy.max)
            }
            _ => return None,
        };
        self.state = State::Suspended {
            until: now + duration,
            duration,
        };
        Some(Transition::Suspended(duration))
    }

    /// Clears any suspension (re-enable).
    pub fn reset(&mut self) {
        self.state = State::Delivering;
        self.consecutive_failures = 0;
    }

    /// The diagnostics snapshot at `now`.
    pub fn health(&self, now: Instant) -> Health {
        let retry_in_seconds = match self.state {
            State::Suspended { until, .. } => {
                Some(until.saturating_duration_since(now).as_secs_f64())
            }
            _ => None,
        };
        Health {
            circuit_open: self.is_open(),
            consecutive_failures: self.consecutive_failures,
            retry_in_seconds,
            last_error: self.last_error.clone(),
            skipped_while_suspended: self.skipped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: SuspendPolicy = SuspendPolicy {
        threshold: 3,
        base: Duration::from_secs(300),
        max: Duration::from_secs(1000),
    };

    fn fail(c: &mut Circuit, probe: bool, now: Instant) -> Option<Transition> {
        c.on_failure("HTTP 500", probe, now, &POLICY)
    }

    #[test]
    fn the_threshold_failure_suspends_and_later_events_are_skipped_and_counted() {
        let now = Instant::now();
        let mut c = Circuit::default();
        assert_eq!(fail(&mut c, false, now), None);
        assert_eq!(fail(&mut c, false, now), None);
        assert_eq!(
            fail(&mut c, false, now),
            Some(Transition::Suspended(Duration::from_secs(300)))
        );
        assert_eq!(c.admit(now + Duration::from_secs(10)), Admit::Skip);
        assert_eq!(c.admit(now + Duration::from_secs(20)), Admit::Skip);
        let h = c.health(now + Duration::from_secs(100));
        assert!(h.circuit_open);
        assert_eq!(h.skipped_while_suspended, 2);
        assert_eq!(h.retry_in_seconds, Some(200.0));
        assert_eq!(h.consecutive_failures, 3);
    }

    #[test]
    fn after_the_suspension_exactly_one_probe_goes_and_its_success_resumes() {
        let now = Instant::now();
        let mut c = Circuit::default();
        for _ in 0..3 {
            fail(&mut c, false, now);
        }
        let later = now + Duration::from_secs(300);
        assert_eq!(c.admit(later), Admit::Probe);
        assert_eq!(c.admit(later), Admit::Skip, "only one probe at a time");
        assert_eq!(c.on_success(), Some(Transition::Resumed));
        assert_eq!(c.admit(later), Admit::Deliver);
        assert_eq!(c.health(later).consecutive_failures, 0);
    }

    #[test]
    fn each_failed_probe_doubles_the_suspension_up_to_the_cap() {
        let mut now = Instant::now();
        let mut c = Circuit::default();
        for _ in 0..3 {
            fail(&mut c, false, now);
        }
        let mut seen = Vec::new();
        for _ in 0..4 {
            now += Duration::from_secs(2000);
            assert_eq!(c.admit(now), Admit::Probe);
            match fail(&mut c, true, now) {
                Some(Transition::Suspended(d)) => seen.push(d.as_secs()),
                other => panic!("expected a suspension, got {other:?}"),
            }
        }
        assert_eq!(seen, [600, 1000, 1000, 1000]);
    }

    #[test]
    fn a_late_failure_of_an_ordinary_delivery_does_not_end_a_probe() {
        let now = Instant::now();
        let mut c = Circuit::default();
        for _ in 0..3 {
            fail(&mut c, false, now);
        }
        assert_eq!(c.admit(now + Duration::from_secs(300)), Admit::Probe);
        assert_eq!(fail(&mut c, false, now), None);
        assert!(c.is_open());
    }

    #[test]
    fn reset_clears_a_suspension_at_once() {
        let now = Instant::now();
        let mut c = Circuit::default();
        for _ in 0..3 {
            fail(&mut c, false, now);
        }
        c.reset();
        assert_eq!(c.admit(now), Admit::Deliver);
        assert!(!c.health(now).circuit_open);
    }
}
