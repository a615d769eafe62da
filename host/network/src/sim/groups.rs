//! Groups on the simulated network: the [`GroupOps`] of a [`SimClient`] (each
//! acts as the session's account on the world's group book) and the control
//! surface's join by invite code.

use async_trait::async_trait;

use super::SimNetwork;
use super::client::SimClient;
use super::world::groups::{JoinStatus, Joiner};
use crate::domain::group::{GroupInfo, GroupSummary, ParticipantResult, SettingsUpdate};
use crate::domain::jid::Jid;
use crate::groups::{CreatedGroup, GroupError, GroupOps, NewGroup};

#[async_trait]
impl GroupOps for SimClient {
    async fn groups(&self) -> Result<Vec<GroupSummary>, GroupError> {
        self.world.list_groups(&self.id)
    }

    async fn group_info(&self, group: &Jid) -> Result<GroupInfo, GroupError> {
        self.world.group_info(&self.id, group)
    }

    async fn create_group(&self, new: &NewGroup) -> Result<CreatedGroup, GroupError> {
        self.world.create_group(&self.id, new).await
    }

    async fn set_group_subject(&self, group: &Jid, subject: &str) -> Result<(), GroupError> {
        self.world.set_group_subject(&self.id, group, subject).await
    }

    async fn set_group_description(
        &self,
        group: &Jid,
        description: Option<&str>,
        prev_id: Option<&str>,
    ) -> Result<(), GroupError> {
        self.world
            .set_group_description(&self.id, group, description, prev_id)
            .await
    }

    async fn update_group_settings(
        &self,
        group: &Jid,
        update: &SettingsUpdate,
    ) -> Result<(), GroupError> {
        self.world
            .update_group_settings(&self.id, group, update)
            .await
    }

    async fn leave_group(&self, group: &Jid) -> Result<(), GroupError> {
        self.world.leave_group(&self.id, group).await
    }

    async fn add_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        self.world
            .add_participants(&self.id, group, participants)
            .await
    }

    async fn remove_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        self.world
            .remove_participants(&self.id, group, participants)
            .await
    }

    async fn promote_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError> {
        self.world
            .promote_participants(&self.id, group, participants)
            .await
    }

    async fn demote_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError> {
        self.world
            .demote_participants(&self.id, group, participants)
            .await
    }

    async fn invite_link(&self, group: &Jid, reset: bool) -> Result<String, GroupError> {
        self.world.invite_link(&self.id, group, reset).await
    }
}

impl SimNetwork {
    /// Joins the group whose current invite code is `code`, as `joiner`
    /// following the link on a phone would. Answers the group JID and what
    /// happened; a replaced or unknown code is [`GroupError::NotFound`].
    pub async fn join_by_invite(
        &self,
        joiner: &Joiner,
        code: &str,
    ) -> Result<(String, JoinStatus), GroupError> {
        self.world.join_by_invite(joiner, code).await
    }
}
