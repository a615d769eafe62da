//! The next automatic reconnect of a session: when it comes and why, as the
//! session's reconnect status and the `reconnect_scheduled` event show it,
//! and the jitter that spreads the pauses of many sessions dropped at once
//! (a server restart drops every session together; reconnecting them all
//! on the same beat is a burst the server may answer with a rate limit).

use std::time::Duration;

use rand::Rng;

pub use crate::domain::event_data::own::ReconnectScheduledData as NextAttempt;

/// A reconnect after `delay` from `now_ms`.
pub fn after(delay: Duration, now_ms: i64, reason: String, error_count: u32) -> NextAttempt {
    let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    NextAttempt {
        reason,
        delay_ms,
        at_ms: now_ms.saturating_add(i64::try_from(delay_ms).unwrap_or(i64::MAX)),
        error_count,
    }
}

/// `delay` stretched by a uniform random part of up to `percent` of it, so
/// sessions that failed together do not come back together. Never shorter
/// than `delay`: the schedule's steps stay the least a session waits.
pub fn jittered(delay: Duration, percent: u8, rng: &mut impl Rng) -> Duration {
    let spread = delay.mul_f64(f64::from(percent.min(100)) / 100.0);
    if spread.is_zero() {
        return delay;
    }
    delay + spread.mul_f64(rng.random::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn jitter_only_lengthens_a_pause_and_by_at_most_its_share() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let base = Duration::from_secs(10);
        let all: Vec<Duration> = (0..200).map(|_| jittered(base, 20, &mut rng)).collect();
        assert!(
            all.iter()
                .all(|d| *d >= base && *d <= Duration::from_secs(12))
        );
        assert!(
            all.iter().any(|d| *d != all[0]),
            "the pauses are spread: {all:?}"
        );
        assert_eq!(jittered(base, 0, &mut rng), base);
        assert_eq!(jittered(Duration::ZERO, 20, &mut rng), Duration::ZERO);
    }

    #[test]
    fn the_next_attempt_is_its_delay_from_now() {
        let n = after(
            Duration::from_millis(1500),
            10_000,
            "after a drop".into(),
            2,
        );
        assert_eq!((n.delay_ms, n.at_ms, n.error_count), (1500, 11_500, 2));
    }
}
