//! Blast worker knobs, each with a flag and an environment variable, so tests
//! and operators can shrink the timings.

use std::time::Duration;

/// How the blast worker waits and how large a blast may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlastConfig {
    /// How often an idle worker looks for work anyway; it is also woken at
    /// once on create, retry and a session coming online
    /// (`SWITCHBOARD_BLAST_IDLE_POLL_MS`, 30000).
    pub idle_poll: Duration,
    /// How long a job whose session cannot send (paused, disconnected) is set
    /// aside before the worker looks at the session again
    /// (`SWITCHBOARD_BLAST_OFFLINE_RETRY_MS`, 5000).
    pub offline_retry: Duration,
    /// Most recipients in one blast (`SWITCHBOARD_BLAST_MAX_RECIPIENTS`, 100000).
    pub max_recipients: usize,
    /// Longest one recipient's send may take (its media fetch included)
    /// before it is abandoned and counted as a failed attempt, so a send
    /// held inside the network does not hold the one worker
    /// (`SWITCHBOARD_BLAST_SEND_TIMEOUT_SECS`, 120).
    pub send_timeout: Duration,
}

impl Default for BlastConfig {
    fn default() -> Self {
        Self {
            idle_poll: Duration::from_secs(30),
            offline_retry: Duration::from_secs(5),
            max_recipients: 100_000,
            send_timeout: Duration::from_secs(120),
        }
    }
}
