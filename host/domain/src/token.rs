//! API tokens beside the admin token: what each may do (its scopes), on
//! which sessions, until when, and the pure rules that decide a request.
//! The secret itself is never kept: a token is found by the SHA-256 of its
//! secret.

use serde::{Deserialize, Serialize};

/// The prefix of every minted secret, so secret scanners can recognise a
/// leaked one.
pub const SECRET_PREFIX: &str = "sbt_";

/// What a token may do. Each route needs one scope; `admin` opens every
/// route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Read a session and what it holds: status, messages, chats, contacts,
    /// groups, media, blasts, scheduled sends, webhooks and their dead
    /// letters, the event stream.
    Read,
    /// Send: messages, actions on messages, presence and typing, blasts and
    /// scheduled sends (and cancelling them), uploads.
    Send,
    /// Run a session: create, connect, pair, pause, delete it; webhooks;
    /// group and chat changes; contact lookups on the network; session
    /// operations.
    Manage,
    /// Everything, and what only an operator does: tokens, plugins and
    /// their bindings, the simulated network's control API, the broker's
    /// status, the metrics.
    Admin,
}

impl Scope {
    /// Every scope, in the documentation's order.
    pub const ALL: [Scope; 4] = [Scope::Read, Scope::Send, Scope::Manage, Scope::Admin];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Send => "send",
            Scope::Manage => "manage",
            Scope::Admin => "admin",
        }
    }
}

/// The sessions a token may act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SessionSet {
    /// Every session (`"*"`).
    All(AllSessions),
    /// These session ids.
    Only(Vec<String>),
}

/// The `"*"` of [`SessionSet::All`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AllSessions {
    /// Every session.
    #[serde(rename = "*")]
    Star,
}

impl SessionSet {
    /// Whether the set is a list naming session `id` (not `"*"`).
    pub fn names(&self, id: &str) -> bool {
        matches!(self, SessionSet::Only(ids) if ids.iter().any(|s| s == id))
    }

    /// Whether session `id` is in the set.
    pub fn covers(&self, id: &str) -> bool {
        match self {
            SessionSet::All(_) => true,
            SessionSet::Only(ids) => ids.iter().any(|s| s == id),
        }
    }
}

/// A minted token as stored: everything but its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// Its id (a UUID), used to revoke and rotate it.
    pub id: String,
    /// The operator's name for it (shown in lists, logs and metrics).
    pub name: String,
    /// The first characters of its secret (`sbt_` and 6 more), to tell
    /// tokens apart without the secret.
    pub prefix: String,
    /// Hex SHA-256 of the secret.
    pub hash: String,
    /// The sessions it may act on.
    pub sessions: SessionSet,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Unix seconds of minting.
    pub created_at: i64,
    /// Unix seconds after which it no longer works; `None`: never.
    pub expires_at: Option<i64>,
    /// Unix seconds of its last use (kept to the minute).
    pub last_used_at: Option<i64>,
    /// Unix seconds of its revocation; a revoked token never works again.
    pub revoked_at: Option<i64>,
    /// Most requests per minute (`None`: no limit).
    pub rate_per_minute: Option<u32>,
}

/// Why a token does not work now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefusal {
    /// It was revoked.
    Revoked,
    /// It expired.
    Expired,
}

impl TokenRecord {
    /// Whether it works at `now`, or why not.
    pub fn check(&self, now: i64) -> Result<(), TokenRefusal> {
        if self.revoked_at.is_some() {
            return Err(TokenRefusal::Revoked);
        }
        if self.expires_at.is_some_and(|e| e <= now) {
            return Err(TokenRefusal::Expired);
        }
        Ok(())
    }

    /// Whether it has `scope`. `admin` includes the other scopes; the
    /// `admin` scope itself (tokens, plugins, the sim: what no session
    /// limits) needs the token to be over every session, so a token over a
    /// list of sessions cannot reach beyond them through it.
    pub fn allows(&self, scope: Scope) -> bool {
        let admin = self.scopes.contains(&Scope::Admin);
        match scope {
            Scope::Admin => admin && matches!(self.sessions, SessionSet::All(_)),
            other => admin || self.scopes.contains(&other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(scopes: &[Scope], sessions: SessionSet) -> TokenRecord {
        TokenRecord {
            id: "t".into(),
            name: "crm".into(),
            prefix: "sbt_abcdef".into(),
            hash: "00".into(),
            sessions,
            scopes: scopes.to_vec(),
            created_at: 0,
            expires_at: Some(100),
            last_used_at: None,
            revoked_at: None,
            rate_per_minute: None,
        }
    }

    #[test]
    fn a_token_allows_its_scopes_and_admin_allows_all() {
        let t = token(&[Scope::Read], SessionSet::Only(vec!["a".into()]));
        assert!(t.allows(Scope::Read));
        assert!(!t.allows(Scope::Send));
        let admin = token(&[Scope::Admin], SessionSet::All(AllSessions::Star));
        assert!(Scope::ALL.iter().all(|s| admin.allows(*s)));
        let limited = token(&[Scope::Admin], SessionSet::Only(vec!["a".into()]));
        assert!(limited.allows(Scope::Manage));
        assert!(
            !limited.allows(Scope::Admin),
            "admin over a list of sessions opens nothing beyond them"
        );
    }

    #[test]
    fn a_token_covers_its_sessions_and_star_covers_every_one() {
        let t = token(&[Scope::Read], SessionSet::Only(vec!["a".into()]));
        assert!(t.sessions.covers("a"));
        assert!(!t.sessions.covers("b"));
        let all: SessionSet = serde_json::from_str("\"*\"").unwrap();
        assert!(all.covers("anything"));
        let some: SessionSet = serde_json::from_str("[\"a\"]").unwrap();
        assert_eq!(some, SessionSet::Only(vec!["a".into()]));
    }

    #[test]
    fn a_token_stops_working_when_revoked_or_expired() {
        let mut t = token(&[Scope::Read], SessionSet::Only(vec![]));
        assert_eq!(t.check(99), Ok(()));
        assert_eq!(t.check(100), Err(TokenRefusal::Expired));
        t.revoked_at = Some(50);
        assert_eq!(t.check(10), Err(TokenRefusal::Revoked));
    }
}
