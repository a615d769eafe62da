//! The session: one linked account on a network, addressed by its id.

use serde::{Deserialize, Serialize};

/// Connection status of a session as reported by `GET /sessions/{id}/status`.
///
/// Transitions (documented in `docs/api.md`):
/// `disconnected → connecting → waiting_for_qr | waiting_for_pair_code → logged_in`
/// for a session that is not yet paired; `disconnected → connecting → connected →
/// logged_in` for one that is; any state → `disconnected` on disconnect, pause,
/// logout or a network drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// No socket to the network.
    Disconnected,
    /// Opening the socket.
    Connecting,
    /// Unpaired: showing QR codes for a phone to scan.
    WaitingForQr,
    /// Unpaired: waiting for the pair code to be typed on the phone.
    WaitingForPairCode,
    /// Socket open, authentication under way.
    Connected,
    /// Socket open and authenticated: the session can send and receive.
    LoggedIn,
}

impl SessionStatus {
    /// The wire spelling (`waiting_for_qr`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disconnected => "disconnected",
            Self::Connecting => "connecting",
            Self::WaitingForQr => "waiting_for_qr",
            Self::WaitingForPairCode => "waiting_for_pair_code",
            Self::Connected => "connected",
            Self::LoggedIn => "logged_in",
        }
    }

    /// All statuses, in lifecycle order.
    pub const ALL: [SessionStatus; 6] = [
        Self::Disconnected,
        Self::Connecting,
        Self::WaitingForQr,
        Self::WaitingForPairCode,
        Self::Connected,
        Self::LoggedIn,
    ];
}

/// The account a session is linked to, known once pairing succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The account's user JID.
    pub jid: String,
    /// Digits of the account's phone number.
    pub phone: String,
    /// The name the account shows to others.
    pub push_name: Option<String>,
}

/// Everything stored about a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session id used in every path.
    pub id: String,
    /// An operator-chosen label.
    pub name: Option<String>,
    /// The network backend that serves the session (`sim`, `whatsapp`).
    pub network: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// For the simulated network: the phone number the account should have.
    #[serde(default)]
    pub phone_hint: Option<String>,
    /// The linked account; `None` until paired and again after logout.
    #[serde(default)]
    pub account: Option<Account>,
    /// Deliberately offline (pause); survives restarts.
    #[serde(default)]
    pub paused: bool,
    /// The operator asked for the session to be connected (connect was called and
    /// not followed by disconnect or logout); restored on start.
    #[serde(default)]
    pub want_connected: bool,
    /// Reconnect by itself after a drop.
    #[serde(default = "default_true")]
    pub auto_reconnect: bool,
    /// Skip message-history sync when a new device connects.
    #[serde(default)]
    pub skip_history_sync: bool,
    /// Which session of this id this is: a number the store gives each time
    /// a session is created (never reused), so whatever is written for a
    /// deleted session (an intake still running, a registration under way)
    /// is refused rather than read by a later session of the same id.
    /// Records from before it was kept read as 0.
    #[serde(default)]
    pub incarnation: u64,
    /// The proxy the session connects through (credentials sealed);
    /// `None` takes the gateway's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<super::proxy::StoredProxy>,
}

fn default_true() -> bool {
    true
}

impl SessionRecord {
    /// A new, unpaired, disconnected session.
    pub fn new(
        id: String,
        name: Option<String>,
        network: String,
        phone_hint: Option<String>,
    ) -> Self {
        Self {
            id,
            name,
            network,
            created_at: super::time::unix_now(),
            phone_hint,
            account: None,
            paused: false,
            want_connected: false,
            auto_reconnect: true,
            skip_history_sync: false,
            incarnation: 0,
            proxy: None,
        }
    }
}

/// Checks a caller-chosen session id: 1 to 64 characters of `A-Z a-z 0-9 _ - .`,
/// not starting with `.`, so it is safe in paths, file names and logs.
pub fn validate_session_id(id: &str) -> Result<(), &'static str> {
    if id.is_empty() || id.len() > 64 {
        return Err("must be 1 to 64 characters long");
    }
    if id.starts_with('.') {
        return Err("must not start with a dot");
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err("may only contain letters, digits, `_`, `-` and `.`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_with_path_characters_are_refused() {
        assert!(validate_session_id("sales-1").is_ok());
        assert!(validate_session_id("a.b_c").is_ok());
        assert!(validate_session_id("").is_err());
        assert!(validate_session_id("a/b").is_err());
        assert!(validate_session_id("..").is_err());
        assert!(validate_session_id(&"x".repeat(65)).is_err());
        assert!(validate_session_id("naïve").is_err());
    }

    #[test]
    fn status_wire_spelling_matches_serde() {
        for s in SessionStatus::ALL {
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(json, s.as_str());
        }
    }
}
