//! How long the worker pauses between two sends: `delay_ms` plus a uniform
//! random 0..=`jitter_ms`.

use std::time::Duration;

use tokio::time::Instant;

use rand::Rng;

use super::model::BlastOptions;

/// The pause after a send of a job with these options.
pub fn pause(options: &BlastOptions, rng: &mut impl Rng) -> Duration {
    let jitter = if options.jitter_ms == 0 {
        0
    } else {
        rng.random_range(0..=options.jitter_ms)
    };
    Duration::from_millis(options.delay_ms.saturating_add(jitter))
}

/// The pause a session owes after its last send: chosen by the job that
/// sent, and shortened for any other job to that job's own `delay_ms` from
/// the same send, so a cancelled job's long pause never holds a new one up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owed {
    /// When the last send went out.
    pub sent_at: Instant,
    /// The end of the pause the sending job chose (delay plus its jitter).
    pub until: Instant,
    /// The sending job's `seq`.
    pub seq: u64,
}

impl Owed {
    /// When a send of job `seq` with `options` may go out.
    pub fn ready_at(&self, seq: u64, options: &BlastOptions) -> Instant {
        if seq == self.seq {
            self.until
        } else {
            self.until
                .min(self.sent_at + Duration::from_millis(options.delay_ms))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    fn options(delay_ms: u64, jitter_ms: u64) -> BlastOptions {
        BlastOptions {
            delay_ms,
            jitter_ms,
            ..BlastOptions::default()
        }
    }

    #[test]
    fn without_jitter_the_pause_is_exactly_the_delay() {
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..100 {
            assert_eq!(
                pause(&options(250, 0), &mut rng),
                Duration::from_millis(250)
            );
        }
    }

    #[test]
    fn jitter_adds_between_zero_and_jitter_ms_inclusive_and_reaches_both_ends() {
        let mut rng = StdRng::seed_from_u64(2);
        let seen: BTreeSet<u128> = (0..2000)
            .map(|_| pause(&options(100, 3), &mut rng).as_millis())
            .collect();
        assert_eq!(seen, BTreeSet::from([100, 101, 102, 103]));
    }

    #[test]
    fn the_largest_values_do_not_overflow() {
        let mut rng = StdRng::seed_from_u64(3);
        let p = pause(&options(u64::MAX, u64::MAX), &mut rng);
        assert_eq!(p, Duration::from_millis(u64::MAX));
    }

    #[test]
    fn another_job_waits_its_own_delay_from_the_last_send_not_a_longer_pause() {
        let sent_at = Instant::now();
        let owed = Owed {
            sent_at,
            until: sent_at + Duration::from_secs(3600),
            seq: 1,
        };
        assert_eq!(owed.ready_at(1, &options(3_600_000, 0)), owed.until);
        assert_eq!(
            owed.ready_at(2, &options(5, 0)),
            sent_at + Duration::from_millis(5)
        );
        let short = Owed {
            until: sent_at + Duration::from_millis(2),
            ..owed
        };
        assert_eq!(
            short.ready_at(2, &options(5_000, 0)),
            short.until,
            "never later than the pause already owed"
        );
    }
}
