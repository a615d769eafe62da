//! Group operations through the crate's `groups()` feature. Each acts as the
//! session's account on the live, logged-in client; the conversions and the
//! error mapping are the pure functions of `map/group_info.rs`.
//!
//! Where the sim checks something before changing a group and WhatsApp
//! would only answer with a bare refusal (promote/demote all or nothing,
//! the creator, `prev_id`, settings that do not change), the group is read
//! first and checked the same way, so the answers match the sim's.

use std::sync::Arc;

use async_trait::async_trait;
use whatsapp_rust::features::{GroupDescription, GroupMetadata, GroupSubject, PreviousDescription};
use whatsapp_rust::{Client, Jid as WaJid};

use crate::NetworkError;
use crate::domain::group::{
    GroupAction, GroupInfo, GroupSummary, ParticipantResult, ParticipantStatus, SettingsUpdate,
};
use crate::domain::jid::Jid;
use crate::groups::{CreatedGroup, GroupError, GroupOps, NewGroup};
use crate::whatsapp::map::group_info::{self as map, DescriptionPlan, Op, group_error, not_found};
use crate::whatsapp::map::user_jid;
use crate::whatsapp::send::wa_jid;
use crate::whatsapp::session::WaSession;

/// One group call's context: the live client, the group in both forms.
struct On {
    client: Arc<Client>,
    /// The group as the crate addresses it.
    jid: WaJid,
    /// The group as the API prints it (`<id>@g.us`).
    name: String,
}

impl On {
    /// The crate's error of this call as ours. A refusal of a change that
    /// reads as "not an admin" is checked by reading the group: an outsider
    /// is refused the same way, and must hear that the group is not found.
    async fn refused(&self, e: whatsapp_rust::features::GroupError, op: Op) -> GroupError {
        let mapped = group_error(&e, &self.name, op);
        if let GroupError::NotAdmin(_) = mapped
            && let Err(read) = self.client.groups().get_metadata(&self.jid).await
            && let GroupError::NotFound(_) = group_error(&read, &self.name, Op::Read)
        {
            return not_found(&self.name);
        }
        mapped
    }

    /// The group's metadata (a refusal means the account is not in it).
    async fn metadata(&self) -> Result<GroupMetadata, GroupError> {
        self.client
            .groups()
            .get_metadata(&self.jid)
            .await
            .map_err(|e| group_error(&e, &self.name, Op::Read))
    }

    /// The account's own JIDs (phone and `@lid`), to find its role.
    fn own(&self) -> Vec<WaJid> {
        [self.client.pn(), self.client.lid()]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The requested JIDs without repeats, beside their crate form.
    fn wanted(jids: &[Jid]) -> Result<Vec<(String, WaJid)>, GroupError> {
        Ok(map::unique(jids, wa_jid)?)
    }
}

impl WaSession {
    /// The context of a call on `group`, or `NotConnected`.
    async fn on(&self, group: &Jid) -> Result<On, GroupError> {
        let client = self.logged_in().await?;
        Ok(On {
            client,
            jid: wa_jid(group)?,
            name: group.to_string(),
        })
    }
}

/// The crate's form of many JIDs.
fn wa_jids(wanted: &[(String, WaJid)]) -> Vec<WaJid> {
    wanted.iter().map(|(_, j)| j.clone()).collect()
}

#[async_trait]
impl GroupOps for WaSession {
    async fn groups(&self) -> Result<Vec<GroupSummary>, GroupError> {
        let client = self.logged_in().await?;
        let groups = client
            .groups()
            .get_participating()
            .await
            .map_err(|e| group_error(&e, "(all groups)", Op::Account))?;
        Ok(map::summaries(groups.values()))
    }

    async fn group_info(&self, group: &Jid) -> Result<GroupInfo, GroupError> {
        let on = self.on(group).await?;
        Ok(map::group_info(&on.metadata().await?))
    }

    async fn create_group(&self, new: &NewGroup) -> Result<CreatedGroup, GroupError> {
        let client = self.logged_in().await?;
        let wanted = On::wanted(&new.participants)?;
        let created = client
            .groups()
            .create_group(map::create_options(new))
            .await
            .map_err(|e| group_error(&e, &new.name, Op::Account))?;
        let gid = created.metadata.id;
        let jid = user_jid(&gid);
        if wanted.is_empty() {
            return Ok(CreatedGroup {
                jid,
                participants: Vec::new(),
            });
        }
        // The group exists now: a failed add must not read as a failed
        // create (a retry would make a second group), so it reports every
        // participant as not added.
        let participants = match client
            .groups()
            .add_participants(gid, &wa_jids(&wanted))
            .await
        {
            Ok(answers) => map::participant_results(&wanted, &answers, map::add_status),
            Err(e) => {
                tracing::warn!(group = %jid, error = %e, "created a group but could not add its participants");
                wanted
                    .into_iter()
                    .map(|(jid, _)| ParticipantResult {
                        jid,
                        status: ParticipantStatus::NotAllowed,
                    })
                    .collect()
            }
        };
        Ok(CreatedGroup { jid, participants })
    }

    async fn set_group_subject(&self, group: &Jid, subject: &str) -> Result<(), GroupError> {
        let on = self.on(group).await?;
        let subject = GroupSubject::new(subject)
            .map_err(|e| NetworkError::Rejected(format!("the group name is refused: {e}")))?;
        match on
            .client
            .groups()
            .set_subject(on.jid.clone(), subject)
            .await
        {
            Ok(()) => Ok(()),
            Err(e) => Err(on.refused(e, Op::Change(GroupAction::SetSubject)).await),
        }
    }

    async fn set_group_description(
        &self,
        group: &Jid,
        description: Option<&str>,
        prev_id: Option<&str>,
    ) -> Result<(), GroupError> {
        let on = self.on(group).await?;
        let meta = on.metadata().await?;
        let DescriptionPlan::Send { prev } = map::plan_description(&meta, description, prev_id)?
        else {
            return Ok(());
        };
        let text = description
            .map(GroupDescription::new)
            .transpose()
            .map_err(|e| NetworkError::Rejected(format!("the description is refused: {e}")))?;
        let prev = match prev.as_deref() {
            Some(id) => PreviousDescription::Id(id),
            None => PreviousDescription::Absent,
        };
        match on
            .client
            .groups()
            .set_description(on.jid.clone(), text, prev)
            .await
        {
            Ok(()) => Ok(()),
            Err(e) => Err(on.refused(e, Op::Change(GroupAction::SetDescription)).await),
        }
    }

    async fn update_group_settings(
        &self,
        group: &Jid,
        update: &SettingsUpdate,
    ) -> Result<(), GroupError> {
        let on = self.on(group).await?;
        let meta = on.metadata().await?;
        map::require_admin(&meta, &on.own(), GroupAction::SetSettings)?;
        let changes = map::settings_changes(&map::settings(&meta), update);
        let groups = on.client.groups();
        let mut done = Ok(());
        if let Some(m) = changes.membership_approval_mode {
            done = groups
                .set_membership_approval(on.jid.clone(), map::wa_approval(m))
                .await;
        }
        if let (Ok(()), Some(m)) = (&done, changes.member_add_mode) {
            done = groups
                .set_member_add_mode(on.jid.clone(), map::wa_add_mode(m))
                .await;
        }
        if let (Ok(()), Some(m)) = (&done, changes.member_link_mode) {
            done = groups
                .set_member_link_mode(&on.jid, map::wa_link_mode(m))
                .await;
        }
        match done {
            Ok(()) => Ok(()),
            Err(e) => Err(on.refused(e, Op::Change(GroupAction::SetSettings)).await),
        }
    }

    async fn leave_group(&self, group: &Jid) -> Result<(), GroupError> {
        let on = self.on(group).await?;
        on.client
            .groups()
            .leave(on.jid.clone())
            .await
            .map_err(|e| group_error(&e, &on.name, Op::Leave))
    }

    async fn add_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        let on = self.on(group).await?;
        let wanted = On::wanted(participants)?;
        match on
            .client
            .groups()
            .add_participants(on.jid.clone(), &wa_jids(&wanted))
            .await
        {
            Ok(answers) => Ok(map::participant_results(&wanted, &answers, map::add_status)),
            Err(e) => Err(on.refused(e, Op::Change(GroupAction::Add)).await),
        }
    }

    async fn remove_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        let on = self.on(group).await?;
        let wanted = On::wanted(participants)?;
        // The account itself leaves instead of being removed, as on the sim:
        // it is not sent, and its result is "not allowed".
        let own = on.own();
        let others: Vec<(String, WaJid)> = wanted
            .iter()
            .filter(|(_, j)| !own.iter().any(|o| o.is_same_chat_as(j)))
            .cloned()
            .collect();
        let answers = if others.is_empty() {
            // Nothing to send; still refuse a group the account is not in.
            on.metadata().await?;
            Vec::new()
        } else {
            match on
                .client
                .groups()
                .remove_participants(on.jid.clone(), &wa_jids(&others))
                .await
            {
                Ok(answers) => answers,
                Err(e) => return Err(on.refused(e, Op::Change(GroupAction::Remove)).await),
            }
        };
        let sent = map::participant_results(&others, &answers, map::remove_status);
        Ok(wanted
            .into_iter()
            .map(|(jid, _)| {
                let status = sent
                    .iter()
                    .find(|r| r.jid == jid)
                    .map_or(ParticipantStatus::NotAllowed, |r| r.status);
                ParticipantResult { jid, status }
            })
            .collect())
    }

    async fn promote_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError> {
        change_roles(self, group, participants, true).await
    }

    async fn demote_participants(
        &self,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError> {
        change_roles(self, group, participants, false).await
    }

    async fn invite_link(&self, group: &Jid, reset: bool) -> Result<String, GroupError> {
        let on = self.on(group).await?;
        match on
            .client
            .groups()
            .get_invite_link(on.jid.clone(), reset)
            .await
        {
            Ok(link) => Ok(link),
            Err(e) => Err(on.refused(e, Op::Change(GroupAction::InviteLink)).await),
        }
    }
}

/// Promotes (`promote`) or demotes, all or nothing: the group is read and
/// every JID checked first (as the sim does), then only those whose role
/// changes are sent.
async fn change_roles(
    session: &WaSession,
    group: &Jid,
    participants: &[Jid],
    promote: bool,
) -> Result<(), GroupError> {
    let on = session.on(group).await?;
    let wanted = On::wanted(participants)?;
    let meta = on.metadata().await?;
    let action = if promote {
        GroupAction::Promote
    } else {
        GroupAction::Demote
    };
    map::require_admin(&meta, &on.own(), action)?;
    let targets = map::role_change_targets(&meta, &wanted, promote)?;
    if targets.is_empty() {
        return Ok(());
    }
    let groups = on.client.groups();
    let answered = if promote {
        groups.promote_participants(on.jid.clone(), &targets).await
    } else {
        groups.demote_participants(on.jid.clone(), &targets).await
    };
    match answered {
        Ok(answers) => map::role_change_outcome(&on.name, &answers, promote),
        Err(e) => Err(on.refused(e, Op::Change(action)).await),
    }
}
