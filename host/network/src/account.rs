//! Account operations a network serves for a session: trust contact tokens,
//! spam reports and app-state resync, with their value types and the pure
//! rules that go with them (the closed value sets and the resync summary).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::NetworkError;
use crate::domain::jid::Jid;

/// A stored trust contact token of one chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TrustToken {
    /// The contact's JID.
    pub jid: String,
    /// Unix seconds when the contact's token for this account was received.
    pub token_timestamp: Option<i64>,
    /// Unix seconds when this account last issued its token to the contact.
    pub sender_timestamp: Option<i64>,
    /// Whether the token is past its lifetime (it stays until pruned).
    pub expired: bool,
}

/// A token this account issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IssuedToken {
    /// The contact's JID.
    pub jid: String,
    /// Unix seconds of issue.
    pub timestamp: i64,
}

macro_rules! closed_set {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:tt),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub enum $name { $($(#[$vdoc])* #[serde(rename = $wire)] $variant),* }

        impl $name {
            /// Every value, in the spec's order.
            pub const ALL: &[$name] = &[$($name::$variant),*];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),* }
            }

            /// The value of a wire spelling.
            pub fn parse(s: &str) -> Option<$name> {
                match s { $($wire => Some($name::$variant),)* _ => None }
            }

            /// The wire spellings, comma-separated (for error messages).
            pub fn list() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }
    };
}

closed_set!(
    /// Where in the app a spam report was made.
    SpamFlow {
        /// The message context menu (the default).
        MessageMenu = "message_menu",
        /// The group spam banner.
        GroupSpamBannerReport = "group_spam_banner_report",
        /// The group info page.
        GroupInfoReport = "group_info_report",
        /// The contact info page.
        ContactInfo = "contact_info",
        /// The status viewer.
        StatusReport = "status_report",
    }
);

closed_set!(
    /// An app-state collection.
    Collection {
        /// Blocked contacts, critical.
        CriticalBlock = "critical_block",
        /// Contacts and other low-priority critical state (the address book lives here).
        CriticalUnblockLow = "critical_unblock_low",
        /// Low-priority regular state.
        RegularLow = "regular_low",
        /// High-priority regular state.
        RegularHigh = "regular_high",
        /// Regular state.
        Regular = "regular",
    }
);

closed_set!(
    /// How an app-state resync fetches.
    ResyncMode {
        /// Patches after the stored version (the default).
        Incremental = "incremental",
        /// Discard the stored state and rebuild from the server snapshot.
        Snapshot = "snapshot",
    }
);

/// What happened to one collection in a resync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectionOutcome {
    /// Fetched, applied and persisted.
    Synced,
    /// Refused outright by the server; retrying will not help.
    Fatal,
    /// Not synced; a later attempt can succeed.
    Retryable,
    /// Left to another sync already fetching that collection.
    Skipped,
}

/// A spam report as the network receives it (already validated).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SpamReport {
    /// The reported message.
    pub message_id: String,
    /// The reported message's timestamp.
    pub message_timestamp: f64,
    /// The sender.
    pub from_jid: Option<String>,
    /// The participant (group messages).
    pub participant_jid: Option<String>,
    /// The group (group reports).
    pub group_jid: Option<String>,
    /// The group's name (group reports).
    pub group_subject: Option<String>,
    /// Where the report was made.
    pub spam_flow: SpamFlow,
    /// The reported message's media type.
    pub media_type: Option<String>,
}

/// Token, spam and app-state operations of one session.
#[async_trait]
pub trait AccountOps: Send + Sync {
    /// Issues this account's trust token to each contact (needs a live connection).
    async fn issue_trust_tokens(&self, jids: &[Jid]) -> Result<Vec<IssuedToken>, NetworkError>;

    /// The stored token of one chat, if any (local: works while disconnected).
    async fn trust_token(&self, jid: &Jid) -> Result<Option<TrustToken>, NetworkError>;

    /// The JIDs with a stored token, sorted (local).
    async fn trust_token_jids(&self) -> Result<Vec<String>, NetworkError>;

    /// Removes the stored tokens past their lifetime; returns how many (local).
    async fn prune_trust_tokens(&self) -> Result<usize, NetworkError>;

    /// Sends a spam report; returns the report id (needs a live connection).
    async fn report_spam(&self, report: &SpamReport) -> Result<String, NetworkError>;

    /// Fetches and applies the collections (distinct, in the order given);
    /// returns one outcome per collection (needs a live connection).
    async fn resync_app_state(
        &self,
        collections: &[Collection],
        mode: ResyncMode,
    ) -> Result<Vec<(Collection, CollectionOutcome)>, NetworkError>;
}

/// The answer of `POST /sessions/{id}/appstate/resync`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResyncSummary {
    /// Fetched, applied and persisted.
    pub synced: Vec<Collection>,
    /// Refused outright by the server.
    pub fatal: Vec<Collection>,
    /// Not synced; a later attempt can succeed.
    pub retryable: Vec<Collection>,
    /// Left to another sync already fetching them.
    pub skipped: Vec<Collection>,
    /// Every requested collection is in `synced`.
    pub all_synced: bool,
}

impl ResyncSummary {
    /// Sorts per-collection outcomes into the answer.
    pub fn of(outcomes: &[(Collection, CollectionOutcome)]) -> Self {
        let mut s = Self::default();
        for (c, o) in outcomes {
            match o {
                CollectionOutcome::Synced => s.synced.push(*c),
                CollectionOutcome::Fatal => s.fatal.push(*c),
                CollectionOutcome::Retryable => s.retryable.push(*c),
                CollectionOutcome::Skipped => s.skipped.push(*c),
            }
        }
        s.all_synced = !outcomes.is_empty() && s.synced.len() == outcomes.len();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_sets_parse_their_wire_spellings_only() {
        assert_eq!(SpamFlow::parse("message_menu"), Some(SpamFlow::MessageMenu));
        assert_eq!(SpamFlow::parse("Message_Menu"), None);
        assert_eq!(SpamFlow::ALL.len(), 5);
        assert_eq!(Collection::ALL.len(), 5);
        for c in Collection::ALL {
            assert_eq!(Collection::parse(c.as_str()), Some(*c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert_eq!(ResyncMode::parse("snapshot"), Some(ResyncMode::Snapshot));
        assert!(Collection::list().starts_with("critical_block, critical_unblock_low"));
    }

    #[test]
    fn the_summary_sorts_outcomes_and_is_all_synced_only_when_every_one_synced() {
        use Collection::*;
        use CollectionOutcome::*;
        let all = ResyncSummary::of(&[(Regular, Synced), (RegularLow, Synced)]);
        assert!(all.all_synced);
        let mixed = ResyncSummary::of(&[
            (Regular, Synced),
            (RegularLow, Fatal),
            (RegularHigh, Retryable),
            (CriticalBlock, Skipped),
        ]);
        assert!(!mixed.all_synced);
        assert_eq!(mixed.synced, [Regular]);
        assert_eq!(mixed.fatal, [RegularLow]);
        assert_eq!(mixed.retryable, [RegularHigh]);
        assert_eq!(mixed.skipped, [CriticalBlock]);
        assert!(!ResyncSummary::of(&[]).all_synced);
    }
}
