//! The scheduler's decisions as pure functions: how long a due send may
//! wait for its session, and how long to sleep. What a failed send means is
//! the send core's [`crate::messages::SendFailure`].

use std::time::Duration;

use crate::domain::time::iso8601;

/// Unix milliseconds of a Unix-seconds time (0 for times before the epoch).
pub fn secs_to_ms(unix: i64) -> u64 {
    (unix.max(0) as u64).saturating_mul(1000)
}

/// Until when a due send waits for its session: `max_wait` after it came due
/// while the gateway ran, that is after the later of `send_at` and the
/// scheduler's start (a send that came due during a downtime gets the whole
/// wait once the gateway is back, so its session has time to reconnect).
pub fn wait_deadline_ms(send_at: i64, started_ms: u64, max_wait: Duration) -> u64 {
    secs_to_ms(send_at)
        .max(started_ms)
        .saturating_add(max_wait.as_millis().min(u64::MAX as u128) as u64)
}

/// Seconds for messages: `86400 s`, `0.25 s`.
pub fn human_secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

/// `last_error` of a send that waits for its session.
pub fn waiting_reason(reason: &str, deadline_ms: u64) -> String {
    format!(
        "waiting for the session to be able to send (until {} at the latest): {reason}",
        iso8601((deadline_ms / 1000) as i64)
    )
}

/// `last_error` of a send that waited for its session in vain.
pub fn gave_up_reason(reason: &str, max_wait: Duration) -> String {
    format!(
        "the session could not send within the wait limit of {} after the send came due: {reason}",
        human_secs(max_wait)
    )
}

/// How long to sleep until the next due entry, at most `cap` (the fallback
/// that guards against a wall clock that jumps); zero when one is due.
pub fn sleep_for(next_due_ms: Option<u64>, now_ms: u64, cap: Duration) -> Duration {
    match next_due_ms {
        None => cap,
        Some(due) => Duration::from_millis(due.saturating_sub(now_ms)).min(cap),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_counts_from_send_at_or_from_the_start_when_it_came_due_during_a_downtime() {
        let wait = Duration::from_secs(60);
        assert_eq!(wait_deadline_ms(1_000, 500_000, wait), 1_060_000);
        assert_eq!(wait_deadline_ms(1_000, 2_000_000, wait), 2_060_000);
        assert_eq!(wait_deadline_ms(-5, 0, wait), 60_000);
    }

    #[test]
    fn the_sleep_reaches_the_next_due_entry_and_never_exceeds_the_cap() {
        let cap = Duration::from_secs(300);
        assert_eq!(sleep_for(None, 10, cap), cap);
        assert_eq!(
            sleep_for(Some(1_500), 1_000, cap),
            Duration::from_millis(500)
        );
        assert_eq!(sleep_for(Some(900), 1_000, cap), Duration::ZERO);
        assert_eq!(sleep_for(Some(u64::MAX), 0, cap), cap);
    }

    #[test]
    fn reasons_name_the_limit_and_the_cause() {
        assert_eq!(human_secs(Duration::from_secs(86_400)), "86400 s");
        assert_eq!(human_secs(Duration::from_millis(250)), "0.25 s");
        let r = gave_up_reason(
            "session `s` is paused; resume it first",
            Duration::from_secs(5),
        );
        assert!(r.contains("5 s") && r.contains("paused"), "{r}");
        let w = waiting_reason("paused", 1_795_314_877_000);
        assert!(w.contains("2026-11-22T02:34:37Z"), "{w}");
    }
}
