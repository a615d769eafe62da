//! Group, contact and account operations of a whatsapp session. Trust
//! tokens are read and pruned in the session's redb state (the crate keeps
//! them there), with the crate's default expiry windows; issuing them needs
//! the live client. Operations not mapped to the crate yet answer
//! `NotSupported` with a message that says so (listed in docs/whatsapp.md).

use async_trait::async_trait;
use whatsapp_rust::wacore::iq::tctoken::{
    TcTokenConfig, is_tc_token_expired_with, sender_tc_token_expiration_cutoff_with,
    tc_token_expiration_cutoff_with,
};
use whatsapp_rust::wacore::store::traits::ProtocolStore;

use super::send::wa_jid;
use super::session::WaSession;
use crate::NetworkError;
use crate::account::{
    AccountOps, Collection, CollectionOutcome, IssuedToken, ResyncMode, SpamReport, TrustToken,
};
use crate::contacts::{ContactInfo, ContactOps, PhoneCheck, ProfilePicture, UserInfo};
use crate::domain::group::{GroupInfo, GroupSummary, ParticipantResult, SettingsUpdate};
use crate::domain::jid::Jid;
use crate::groups::{CreatedGroup, GroupError, GroupOps, NewGroup};
use crate::store::whatsapp::WaStore;

/// The error of an operation the backend does not map yet.
fn not_yet(what: &str) -> NetworkError {
    NetworkError::NotSupported(format!(
        "{what} is not supported by the whatsapp backend yet (see docs/whatsapp.md)"
    ))
}

fn store_error(e: impl std::fmt::Display) -> NetworkError {
    NetworkError::Failed(format!("could not read the device store: {e}"))
}

impl WaSession {
    fn wa_store(&self) -> WaStore {
        WaStore::new(self.inner.store.clone(), &self.inner.id)
    }
}

#[async_trait]
impl GroupOps for WaSession {
    async fn groups(&self) -> Result<Vec<GroupSummary>, GroupError> {
        Err(not_yet("listing groups").into())
    }

    async fn group_info(&self, _group: &Jid) -> Result<GroupInfo, GroupError> {
        Err(not_yet("reading a group").into())
    }

    async fn create_group(&self, _new: &NewGroup) -> Result<CreatedGroup, GroupError> {
        Err(not_yet("creating a group").into())
    }

    async fn set_group_subject(&self, _group: &Jid, _subject: &str) -> Result<(), GroupError> {
        Err(not_yet("renaming a group").into())
    }

    async fn set_group_description(
        &self,
        _group: &Jid,
        _description: Option<&str>,
        _prev_id: Option<&str>,
    ) -> Result<(), GroupError> {
        Err(not_yet("describing a group").into())
    }

    async fn update_group_settings(
        &self,
        _group: &Jid,
        _update: &SettingsUpdate,
    ) -> Result<(), GroupError> {
        Err(not_yet("changing group settings").into())
    }

    async fn leave_group(&self, _group: &Jid) -> Result<(), GroupError> {
        Err(not_yet("leaving a group").into())
    }

    async fn add_participants(
        &self,
        _group: &Jid,
        _who: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        Err(not_yet("adding group participants").into())
    }

    async fn remove_participants(
        &self,
        _group: &Jid,
        _who: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        Err(not_yet("removing group participants").into())
    }

    async fn promote_participants(&self, _group: &Jid, _who: &[Jid]) -> Result<(), GroupError> {
        Err(not_yet("promoting group participants").into())
    }

    async fn demote_participants(&self, _group: &Jid, _who: &[Jid]) -> Result<(), GroupError> {
        Err(not_yet("demoting group participants").into())
    }

    async fn invite_link(&self, _group: &Jid, _reset: bool) -> Result<String, GroupError> {
        Err(not_yet("group invite links").into())
    }
}

#[async_trait]
impl ContactOps for WaSession {
    async fn check_phones(&self, _phones: &[String]) -> Result<Vec<PhoneCheck>, NetworkError> {
        Err(not_yet("checking phone numbers"))
    }

    async fn contact_info(&self, _jid: &Jid) -> Result<ContactInfo, NetworkError> {
        Err(not_yet("contact info"))
    }

    async fn profile_picture(&self, _jid: &Jid) -> Result<Option<ProfilePicture>, NetworkError> {
        Err(not_yet("profile pictures"))
    }

    async fn user_info(&self, _jids: &[Jid]) -> Result<Vec<UserInfo>, NetworkError> {
        Err(not_yet("user info"))
    }
}

#[async_trait]
impl AccountOps for WaSession {
    async fn issue_trust_tokens(&self, jids: &[Jid]) -> Result<Vec<IssuedToken>, NetworkError> {
        let client = self.logged_in().await?;
        let targets = jids.iter().map(wa_jid).collect::<Result<Vec<_>, _>>()?;
        let issued = client
            .tc_token()
            .issue_tokens(&targets)
            .await
            .map_err(|e| NetworkError::Failed(format!("issuing trust tokens failed: {e}")))?;
        Ok(issued
            .iter()
            .map(|t| IssuedToken {
                jid: t.jid.to_non_ad_string(),
                timestamp: t.timestamp,
            })
            .collect())
    }

    async fn trust_token(&self, jid: &Jid) -> Result<Option<TrustToken>, NetworkError> {
        let key = jid.to_string();
        let entry = self
            .wa_store()
            .get_tc_token(&key)
            .await
            .map_err(store_error)?;
        let config = TcTokenConfig::default();
        Ok(entry.map(|e| {
            let has_token = !e.token.is_empty();
            TrustToken {
                jid: key,
                token_timestamp: has_token.then_some(e.token_timestamp),
                sender_timestamp: e.sender_timestamp,
                expired: !has_token || is_tc_token_expired_with(e.token_timestamp, &config),
            }
        }))
    }

    async fn trust_token_jids(&self) -> Result<Vec<String>, NetworkError> {
        let mut jids = self
            .wa_store()
            .get_all_tc_token_jids()
            .await
            .map_err(store_error)?;
        jids.sort();
        Ok(jids)
    }

    async fn prune_trust_tokens(&self) -> Result<usize, NetworkError> {
        let config = TcTokenConfig::default();
        let token_cutoff = tc_token_expiration_cutoff_with(&config);
        let sender_cutoff = sender_tc_token_expiration_cutoff_with(&config);
        let n = self
            .wa_store()
            .delete_expired_tc_tokens(token_cutoff, sender_cutoff)
            .await
            .map_err(store_error)?;
        Ok(n as usize)
    }

    async fn report_spam(&self, _report: &SpamReport) -> Result<String, NetworkError> {
        Err(not_yet("spam reports"))
    }

    async fn resync_app_state(
        &self,
        _collections: &[Collection],
        _mode: ResyncMode,
    ) -> Result<Vec<(Collection, CollectionOutcome)>, NetworkError> {
        Err(not_yet("app-state resync"))
    }
}
