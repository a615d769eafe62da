//! The group capability of a network session ([`GroupOps`], a supertrait of
//! [`super::NetworkSession`]): list, read, create, rename, describe, configure,
//! leave, add/remove/promote/demote participants and the invite link. Every
//! operation acts as the session's own account; a group the account is not a
//! member of is [`GroupError::NotFound`], so membership is never leaked.

use async_trait::async_trait;

use super::NetworkError;
use crate::domain::group::{
    GroupInfo, GroupSettings, GroupSummary, ParticipantResult, SettingsUpdate,
};
use crate::domain::jid::Jid;

/// Where invite links point: a link is `{INVITE_BASE}/<code>`.
pub const INVITE_BASE: &str = "https://chat.whatsapp.com";

/// Why a group operation was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GroupError {
    /// No such group, or the session's account is not a member of it.
    #[error("{0}")]
    NotFound(String),
    /// The account's role does not allow this (for example a member renaming).
    #[error("{0}")]
    NotAdmin(String),
    /// The description changed since the `prev_id` the request named.
    #[error("{0}")]
    DescriptionConflict(String),
    /// A promote or demote named someone who is not a participant.
    #[error("{0}")]
    NotParticipant(String),
    /// The network does not allow this change (demoting the creator).
    #[error("{0}")]
    NotAllowed(String),
    /// The network itself refused or failed.
    #[error(transparent)]
    Network(#[from] NetworkError),
}

/// What creating a group asks for (validated by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGroup {
    /// The group name (subject).
    pub name: String,
    /// Who to add besides the creator (user JIDs, duplicates removed).
    pub participants: Vec<Jid>,
    /// The initial settings.
    pub settings: GroupSettings,
}

/// A group that was just created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedGroup {
    /// The new group's JID.
    pub jid: String,
    /// What happened to each requested participant.
    pub participants: Vec<ParticipantResult>,
}

/// Group operations of one session, acting as its account.
#[async_trait]
pub trait GroupOps: Send + Sync {
    /// The groups the account is a member of.
    async fn groups(&self) -> Result<Vec<GroupSummary>, GroupError>;

    /// One group with its participants.
    async fn group_info(&self, group: &Jid) -> Result<GroupInfo, GroupError>;

    /// Creates a group with the account as its creator (superadmin).
    async fn create_group(&self, new: &NewGroup) -> Result<CreatedGroup, GroupError>;

    /// Renames a group (admins).
    async fn set_group_subject(&self, group: &Jid, subject: &str) -> Result<(), GroupError>;

    /// Sets (`Some`) or deletes (`None`) the description (admins). With
    /// `prev_id`, the change applies only while that is the current
    /// description's id.
    async fn set_group_description(
        &self,
        group: &Jid,
        description: Option<&str>,
        prev_id: Option<&str>,
    ) -> Result<(), GroupError>;

    /// Changes the settings that `update` names (admins).
    async fn update_group_settings(
        &self,
        group: &Jid,
        update: &SettingsUpdate,
    ) -> Result<(), GroupError>;

    /// Leaves a group.
    async fn leave_group(&self, group: &Jid) -> Result<(), GroupError>;

    /// Adds participants; one result per JID.
    async fn add_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError>;

    /// Removes participants (admins); one result per JID.
    async fn remove_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError>;

    /// Makes participants admins (admins); all or nothing.
    async fn promote_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError>;

    /// Dismisses admins (admins); all or nothing.
    async fn demote_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError>;

    /// The invite link, `{INVITE_BASE}/<code>`; `reset` replaces the code first,
    /// and the old one stops working.
    async fn invite_link(&self, group: &Jid, reset: bool) -> Result<String, GroupError>;
}
