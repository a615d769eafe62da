//! Scheduler knobs, each with a default and an environment variable, so tests
//! and operators can shrink the timings.

use std::time::Duration;

/// How long a due send waits for its session, how network failures are
/// retried, how many sessions' sends are in flight at once and how long one
/// send may take.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleConfig {
    /// How long a due send waits for its session to be able to send (paused,
    /// disconnected, not logged in) before it fails
    /// (`SWITCHBOARD_SCHEDULE_MAX_WAIT_SECS`, 86400).
    pub max_wait: Duration,
    /// Network attempts per send before it fails (`SWITCHBOARD_SCHEDULE_MAX_ATTEMPTS`, 3).
    pub max_attempts: u32,
    /// Pauses before the 2nd, 3rd, … attempt after a network failure; beyond
    /// the list the last pause repeats (`SWITCHBOARD_SCHEDULE_RETRY_DELAYS_SECS`, `10,60`).
    pub retry_delays: Vec<Duration>,
    /// Sessions whose due sends are handed to the network at once, each
    /// session's one at a time and in order; the sessions take turns
    /// (`SWITCHBOARD_SCHEDULE_CONCURRENCY`, 4).
    pub concurrency: usize,
    /// Longest one send may take (its media fetch included) before it is
    /// abandoned and retried like a network failure
    /// (`SWITCHBOARD_SCHEDULE_SEND_TIMEOUT_SECS`, 120).
    pub send_timeout: Duration,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        Self {
            max_wait: Duration::from_secs(86_400),
            max_attempts: 3,
            retry_delays: vec![Duration::from_secs(10), Duration::from_secs(60)],
            concurrency: 4,
            send_timeout: Duration::from_secs(120),
        }
    }
}

impl ScheduleConfig {
    /// The pause after failed attempt `n` (`n` ≥ 1) before the next one.
    pub fn retry_delay(&self, failed_attempt: u32) -> Duration {
        let idx = failed_attempt.saturating_sub(1) as usize;
        self.retry_delays
            .get(idx)
            .or(self.retry_delays.last())
            .copied()
            .unwrap_or(Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_pauses_follow_the_list_then_repeat_the_last() {
        let c = ScheduleConfig::default();
        let secs: Vec<u64> = (1..=4).map(|n| c.retry_delay(n).as_secs()).collect();
        assert_eq!(secs, [10, 60, 60, 60]);
        let empty = ScheduleConfig {
            retry_delays: vec![],
            ..c
        };
        assert_eq!(empty.retry_delay(1), Duration::from_secs(10));
    }
}
