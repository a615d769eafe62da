//! Account operations of the simulated network: the [`AccountOps`] of a sim
//! session's client (trust tokens, spam reports, app-state resync), and the
//! control surface to lock an account, replace its connection by another
//! client's, and read the spam reports received.

use async_trait::async_trait;

use super::ReceivedReport;
use super::SimNetwork;
use super::client::SimClient;
use crate::NetworkError;
use crate::account::{
    AccountOps, Collection, CollectionOutcome, IssuedToken, ResyncMode, SpamReport, TrustToken,
};
use crate::domain::jid::Jid;

#[async_trait]
impl AccountOps for SimClient {
    async fn issue_trust_tokens(&self, jids: &[Jid]) -> Result<Vec<IssuedToken>, NetworkError> {
        self.world.issue_tokens(&self.id, jids)
    }

    async fn trust_token(&self, jid: &Jid) -> Result<Option<TrustToken>, NetworkError> {
        self.world.trust_token(&self.id, jid)
    }

    async fn trust_token_jids(&self) -> Result<Vec<String>, NetworkError> {
        self.world.trust_token_jids(&self.id)
    }

    async fn prune_trust_tokens(&self) -> Result<usize, NetworkError> {
        self.world.prune_tokens(&self.id)
    }

    async fn report_spam(&self, report: &SpamReport) -> Result<String, NetworkError> {
        self.world.report_spam(&self.id, report)
    }

    async fn resync_app_state(
        &self,
        collections: &[Collection],
        mode: ResyncMode,
    ) -> Result<Vec<(Collection, CollectionOutcome)>, NetworkError> {
        self.world
            .resync_app_state(&self.id, collections, mode)
            .await
    }
}

impl SimNetwork {
    /// Locks the account of an online session: the network closes its socket
    /// (credentials kept) and tells it why, and until when (Unix seconds)
    /// when `until` is given; `NotConnected` when it is not online.
    pub async fn lock_account(
        &self,
        session_id: &str,
        reason: String,
        until: Option<i64>,
    ) -> Result<(), NetworkError> {
        self.world.lock_account(session_id, reason, until).await
    }

    /// Another client connects with an online session's device, as a second
    /// gateway restored from the same credentials would: the network closes
    /// the session's socket as replaced.
    pub async fn replace_connection(&self, session_id: &str) -> Result<(), NetworkError> {
        self.world.replace_connection(session_id).await
    }

    /// Puts a reach-out timelock on a session until `until` (Unix seconds):
    /// its messages to people its account has no chat with are refused
    /// (error 463), saying until when only if `stated`.
    pub fn set_timelock(
        &self,
        session_id: &str,
        until: i64,
        stated: bool,
    ) -> Result<(), NetworkError> {
        self.world.set_timelock(session_id, until, stated)
    }

    /// Lifts a session's reach-out timelock; `true` when one held.
    pub fn lift_timelock(&self, session_id: &str) -> Result<bool, NetworkError> {
        self.world.lift_timelock(session_id)
    }

    /// The spam reports the network received from a session, oldest first.
    pub fn spam_reports(&self, session_id: &str) -> Result<Vec<ReceivedReport>, NetworkError> {
        self.world.spam_reports(session_id)
    }
}
