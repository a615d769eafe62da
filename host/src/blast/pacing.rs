//! How long the worker pauses between two sends: `delay_ms` plus a uniform
//! random 0..=`jitter_ms`.

use std::time::Duration;

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
}
