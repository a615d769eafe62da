//! The stored shape of a scheduled send, its status, and its id.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::time::unix_now_ms;

/// Where a scheduled send is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScheduledStatus {
    /// Waiting for its time, for its session to be able to send, or for a retry.
    Scheduled,
    /// Handed to the network; a stop in this state is resolved on the next start.
    Sending,
    /// The network accepted it (terminal).
    Sent,
    /// It could not be sent (terminal); `last_error` says why.
    Failed,
    /// Cancelled before it was sent (terminal).
    Cancelled,
}

impl ScheduledStatus {
    /// Every status, in the order of the API reference.
    pub const ALL: [ScheduledStatus; 5] = [
        ScheduledStatus::Scheduled,
        ScheduledStatus::Sending,
        ScheduledStatus::Sent,
        ScheduledStatus::Failed,
        ScheduledStatus::Cancelled,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduledStatus::Scheduled => "scheduled",
            ScheduledStatus::Sending => "sending",
            ScheduledStatus::Sent => "sent",
            ScheduledStatus::Failed => "failed",
            ScheduledStatus::Cancelled => "cancelled",
        }
    }

    /// The status with this exact wire spelling, if any.
    pub fn parse(s: &str) -> Option<ScheduledStatus> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether nothing more happens to a send in this status.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ScheduledStatus::Sent | ScheduledStatus::Failed | ScheduledStatus::Cancelled
        )
    }
}

impl std::fmt::Display for ScheduledStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One scheduled send as stored. The request body it sends is stored apart
/// (it may hold megabytes of media) and dropped once the send is terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduledSend {
    /// The scheduled id: a UUID whose leading bits are its creation time, so
    /// ids sort oldest first.
    pub id: String,
    /// The session that sends it.
    pub session_id: String,
    /// The send kind (`text`, `cta-url`, …).
    pub kind: String,
    /// The recipient, in canonical JID form.
    pub to: String,
    /// When to send, Unix seconds.
    pub send_at: i64,
    /// Where it is in its life.
    pub status: ScheduledStatus,
    /// When it was scheduled, Unix seconds.
    pub created_at: i64,
    /// How many times it was handed to the network.
    pub attempts: u32,
    /// The message id, chosen when it was scheduled and kept for every
    /// attempt, so the network sees one message however often it is tried.
    pub message_id: String,
    /// The network's timestamp of the sent message, Unix seconds.
    pub sent_at: Option<i64>,
    /// When it became sent, failed or cancelled, Unix seconds.
    pub finished_at: Option<i64>,
    /// Why the latest attempt did not send it (or why it waits); cleared once sent.
    pub last_error: Option<String>,
    /// The content as it will be delivered, without `to` (media `data` as its size).
    pub body: serde_json::Value,
    /// Its key in the due index (Unix milliseconds) while there is work to do.
    pub due_ms: Option<u64>,
    /// Parked until its session can send; `due_ms` is then the wait's deadline.
    #[serde(default)]
    pub waiting: bool,
}

/// The last millisecond handed to an id, so ids of one process strictly increase.
static LAST_ID_MS: AtomicU64 = AtomicU64::new(0);

/// A new scheduled id: a version-7 UUID (time-ordered), strictly increasing
/// within this process even for ids made in the same millisecond.
pub fn new_scheduled_id() -> String {
    let now = unix_now_ms().max(0) as u64;
    let mut last = LAST_ID_MS.load(Ordering::Relaxed);
    let ms = loop {
        let next = now.max(last + 1);
        match LAST_ID_MS.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(seen) => last = seen,
        }
    };
    let random = uuid::Uuid::new_v4().into_bytes();
    let mut tail = [0u8; 10];
    tail.copy_from_slice(&random[..10]);
    uuid::Builder::from_unix_timestamp_millis(ms, &tail)
        .into_uuid()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_through_its_wire_spelling() {
        for st in ScheduledStatus::ALL {
            assert_eq!(ScheduledStatus::parse(st.as_str()), Some(st));
            assert_eq!(serde_json::to_value(st).unwrap(), st.as_str());
        }
        assert_eq!(ScheduledStatus::parse("Sent"), None);
        let terminal: Vec<_> = ScheduledStatus::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                ScheduledStatus::Sent,
                ScheduledStatus::Failed,
                ScheduledStatus::Cancelled
            ]
        );
    }

    #[test]
    fn scheduled_ids_are_uuids_that_sort_in_creation_order() {
        let ids: Vec<String> = (0..200).map(|_| new_scheduled_id()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} !< {}", pair[0], pair[1]);
        }
        let parsed = uuid::Uuid::parse_str(&ids[0]).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
    }
}
