//! The account's reach-out timelock, as WhatsApp tells it: the server's
//! error 463 on a message says only that the recipient needed a trust token
//! the account lacks, which is what a timelock causes but not only that; the
//! account's timelock state (WhatsApp Web's `FetchReachoutTimelock` query,
//! which the crate sends) says whether one holds and until when. Asked on a
//! 463 and at every login, so the gateway holds first contacts only while a
//! lock is really there.

use std::time::Duration;

use whatsapp_rust::Client;

use crate::NetworkError;

/// What the server says of the account's reach-out timelock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lock {
    /// Whether it holds.
    pub active: bool,
    /// Unix seconds when it ends, when the server said.
    pub until: Option<i64>,
}

/// Asks the server, waiting at most `within`.
pub async fn ask(client: &Client, within: Duration) -> Result<Lock, String> {
    let asked = tokio::time::timeout(within, client.mex().fetch_reachout_timelock()).await;
    match asked {
        Err(_) => Err(format!("no answer within {} ms", within.as_millis())),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(state)) => Ok(Lock {
            active: state.is_active == Some(true),
            until: state.time_enforcement_ends.as_deref().and_then(unix_secs),
        }),
    }
}

/// A time the server gives as a decimal string, in seconds (or, past the
/// year 33658, in milliseconds).
pub fn unix_secs(raw: &str) -> Option<i64> {
    let n: i64 = raw.trim().parse().ok()?;
    Some(if n > 999_999_999_999 { n / 1000 } else { n })
}

/// What a message refused with error 463 means, given what the server then
/// says of the timelock: a lock (with its end) when one holds, or when the
/// server could not say (the safe reading: hold first contacts for a
/// while); a plain refusal of this recipient when none holds.
pub fn refusal_463(lock: Result<Lock, String>) -> NetworkError {
    match lock {
        Ok(Lock {
            active: true,
            until,
        }) => NetworkError::ReachOutTimelock { until },
        Ok(_) => NetworkError::Rejected(
            "WhatsApp refused the message (error 463): the recipient takes messages only with a trust token this account does not hold; no reach-out timelock is in force".into(),
        ),
        Err(why) => {
            tracing::warn!(error = %why, "a message was refused with error 463 and the timelock state could not be read; holding first contacts");
            NetworkError::ReachOutTimelock { until: None }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_read_in_seconds_or_milliseconds() {
        assert_eq!(unix_secs("1770000000"), Some(1_770_000_000));
        assert_eq!(unix_secs("1770000000123"), Some(1_770_000_000));
        assert_eq!(unix_secs("soon"), None);
    }

    #[test]
    fn a_463_is_a_timelock_only_when_one_holds_or_the_server_cannot_say() {
        let active = refusal_463(Ok(Lock {
            active: true,
            until: Some(5),
        }));
        assert!(matches!(
            active,
            NetworkError::ReachOutTimelock { until: Some(5) }
        ));
        let none = refusal_463(Ok(Lock {
            active: false,
            until: None,
        }));
        assert!(
            matches!(&none, NetworkError::Rejected(m) if m.contains("trust token")),
            "{none:?}"
        );
        let unknown = refusal_463(Err("timeout".into()));
        assert!(matches!(
            unknown,
            NetworkError::ReachOutTimelock { until: None }
        ));
    }
}
