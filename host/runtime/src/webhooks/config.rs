//! Webhook delivery knobs, each with a default from the spec and an environment
//! variable, so tests and operators can shrink the timings.

use std::time::Duration;

use super::target::StaticHosts;

/// How deliveries are retried, dead-lettered and suspended.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookConfig {
    /// Total delivery attempts per event before dead-lettering (`WEBHOOK_RETRY_MAX_ATTEMPTS`, 3).
    pub max_attempts: u32,
    /// Also retry 4xx answers; when false, 4xx is permanent except 408 and 429
    /// (`WEBHOOK_RETRY_ON_4XX`, true).
    pub retry_on_4xx: bool,
    /// Dead-letter entries kept per session, newest first (`WEBHOOK_DLQ_CAPACITY`, 100).
    pub dlq_capacity: usize,
    /// Pauses before the 2nd, 3rd, … attempt; after the list, the last pause
    /// doubles (`WEBHOOK_RETRY_DELAYS_SECS`, `5,30`).
    pub retry_delays: Vec<Duration>,
    /// Longest pause between attempts (`WEBHOOK_RETRY_MAX_DELAY_SECS`, 300).
    pub max_retry_delay: Duration,
    /// Consecutive failures that suspend a URL (`WEBHOOK_SUSPEND_THRESHOLD`, 25).
    pub suspend_threshold: u32,
    /// First suspension (`WEBHOOK_SUSPEND_SECS`, 300); doubles per failed probe.
    pub suspend_base: Duration,
    /// Longest suspension (`WEBHOOK_SUSPEND_MAX_SECS`, 3600).
    pub suspend_max: Duration,
    /// Timeout of one delivery request (`WEBHOOK_TIMEOUT_SECS`, 10).
    pub timeout: Duration,
    /// Allow URLs that resolve to loopback, private, link-local or other
    /// internal addresses (`WEBHOOK_ALLOW_PRIVATE`, false).
    pub allow_private: bool,
    /// Deliveries a URL may have pending in the outbox; past it the oldest
    /// go to the dead-letter queue with the reason `backlog_full`
    /// (`WEBHOOK_BACKLOG_LIMIT`, 10,000).
    pub backlog_limit: usize,
    /// Webhooks a session may have (`MAX_WEBHOOKS_PER_SESSION`, 20): every
    /// event writes one outbox row per webhook, in the write all sessions share.
    pub max_per_session: usize,
    /// Deliveries in flight at once per URL.
    pub concurrency_per_url: usize,
    /// Test-only fixed DNS answers (`None`, the system's resolver). No flag
    /// or environment variable sets it. Registration and delivery look host
    /// names up here first, beneath the internal-address guard, which still
    /// checks every address it answers: it lets a test make a public-looking
    /// name resolve inward after registration, as DNS rebinding would.
    #[doc(hidden)]
    pub static_hosts: Option<StaticHosts>,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            retry_on_4xx: true,
            dlq_capacity: 100,
            retry_delays: vec![Duration::from_secs(5), Duration::from_secs(30)],
            max_retry_delay: Duration::from_secs(300),
            suspend_threshold: 25,
            suspend_base: Duration::from_secs(300),
            suspend_max: Duration::from_secs(3600),
            timeout: Duration::from_secs(10),
            allow_private: false,
            backlog_limit: 10_000,
            max_per_session: 20,
            concurrency_per_url: 32,
            static_hosts: None,
        }
    }
}

impl WebhookConfig {
    /// The pause before attempt `n` (`n` ≥ 2; attempt 1 goes at once).
    pub fn retry_delay(&self, attempt: u32) -> Duration {
        if attempt <= 1 {
            return Duration::ZERO;
        }
        let idx = (attempt - 2) as usize;
        let delay = match self.retry_delays.get(idx) {
            Some(d) => *d,
            None => {
                let last = self
                    .retry_delays
                    .last()
                    .copied()
                    .unwrap_or(Duration::from_secs(5));
                let doublings = (idx + 1 - self.retry_delays.len()).min(32) as u32;
                last.saturating_mul(2u32.saturating_pow(doublings))
            }
        };
        delay.min(self.max_retry_delay)
    }
}

/// Parses seconds that may be fractional (`0.05`) into a duration.
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{s}` must be zero or more seconds"));
    }
    Ok(Duration::from_secs_f64(v))
}

/// A comma-separated list of (fractional) seconds, as one flag value.
#[derive(Debug, Clone, PartialEq)]
pub struct SecsList(pub Vec<Duration>);

/// Parses a comma-separated list of (fractional) seconds.
pub fn parse_secs_list(s: &str) -> Result<SecsList, String> {
    let list: Vec<Duration> = s.split(',').map(parse_secs).collect::<Result<_, _>>()?;
    if list.is_empty() {
        return Err("the list needs at least one delay".into());
    }
    Ok(SecsList(list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_schedule_is_now_5s_30s_then_doubling_capped_at_5_minutes() {
        let c = WebhookConfig::default();
        let secs: Vec<u64> = (1..=8).map(|n| c.retry_delay(n).as_secs()).collect();
        assert_eq!(secs, [0, 5, 30, 60, 120, 240, 300, 300]);
    }

    #[test]
    fn fractional_seconds_parse() {
        assert_eq!(parse_secs("0.05").unwrap(), Duration::from_millis(50));
        assert_eq!(parse_secs_list("0.1,0.2").unwrap().0.len(), 2);
        assert!(parse_secs("-1").is_err());
        assert!(parse_secs("soon").is_err());
    }
}
