//! The rules of a simulated group, as pure functions on its stored state: who
//! may act, what an add, remove, promote, demote, leave or description change
//! does, and the invariant that a group with members always has an admin.

use crate::domain::group::{
    AddressingMode, GroupAction, GroupInfo, MAX_PARTICIPANTS, Participant, ParticipantResult,
    ParticipantStatus, Role, allowed,
};
use crate::domain::jid::Jid;
use crate::groups::GroupError;
use crate::store::{SimGroup, SimMember, SimTopic};

/// The JID of a group id.
pub fn group_jid(id: &str) -> String {
    format!("{id}@g.us")
}

/// The JIDs of a request, canonical and without repeats, in request order.
pub fn unique(jids: &[Jid]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(jids.len());
    for j in jids {
        let s = j.to_string();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The group rules, on the group record the store keeps (the record is a
/// domain type; its rules are the sim network's).
pub trait GroupRules {
    /// The group's JID.
    fn jid(&self) -> String;

    /// The role of `jid`, when it is a member.
    fn role_of(&self, jid: &str) -> Option<Role>;

    /// Every member's JID, in join order.
    fn member_jids(&self) -> Vec<String>;

    /// What a member reads.
    fn info(&self) -> GroupInfo;

    /// Checks that `actor` is a member allowed to do `action`. A non-member is
    /// told the group is not found: membership is not leaked.
    fn authorize(&self, actor: &str, action: GroupAction) -> Result<Role, GroupError>;

    /// Adds every JID that is on the network (`on_network`) and not yet a
    /// member, while there is room. One result per JID.
    fn add(
        &mut self,
        jids: &[String],
        on_network: impl Fn(&str) -> bool,
        now: i64,
    ) -> Vec<ParticipantResult>;

    /// Removes members on behalf of `actor`: never the actor itself (it
    /// leaves instead) and never the creator. One result per JID.
    fn remove(&mut self, actor: &str, jids: &[String]) -> Vec<ParticipantResult>;

    /// Fails with `not_in_group` unless every JID is a member.
    fn require_members(&self, jids: &[String]) -> Result<(), GroupError>;

    /// Makes members admins, all or nothing; returns who actually changed.
    fn promote(&mut self, jids: &[String]) -> Result<Vec<String>, GroupError>;

    /// Dismisses admins, all or nothing (the creator cannot be dismissed);
    /// returns who actually changed.
    fn demote(&mut self, jids: &[String]) -> Result<Vec<String>, GroupError>;

    /// Takes `jid` out of the group.
    fn leave(&mut self, jid: &str);

    /// Keeps the invariant that a group with members has an admin: when none
    /// is left, the member who joined first becomes one. Returns that member.
    fn ensure_admin(&mut self) -> Option<String>;

    /// Sets (`Some`) or deletes (`None`) the description. With `prev_id`, the
    /// change applies only while that is the current description's id.
    /// Returns whether anything changed; `new_id` is called only then.
    fn set_topic(
        &mut self,
        text: Option<&str>,
        prev_id: Option<&str>,
        actor: &str,
        now: i64,
        new_id: impl FnOnce() -> String,
    ) -> Result<bool, GroupError>;
}

impl GroupRules for SimGroup {
    /// The group's JID.
    fn jid(&self) -> String {
        group_jid(&self.id)
    }

    /// The role of `jid`, when it is a member.
    fn role_of(&self, jid: &str) -> Option<Role> {
        self.participants
            .iter()
            .find(|m| m.jid == jid)
            .map(|m| m.role)
    }

    /// Every member's JID, in join order.
    fn member_jids(&self) -> Vec<String> {
        self.participants.iter().map(|m| m.jid.clone()).collect()
    }

    /// What a member reads.
    fn info(&self) -> GroupInfo {
        let participants: Vec<Participant> = self
            .participants
            .iter()
            .map(|m| Participant::new(m.jid.clone(), m.role))
            .collect();
        // Members are kept by the JID they were added with; the sim adds
        // them by phone number, so a group is LID-addressed only if one of
        // them is known by its `@lid` alone.
        let addressing_mode = if participants.iter().any(|p| p.phone_number.is_none()) {
            AddressingMode::Lid
        } else {
            AddressingMode::Pn
        };
        GroupInfo {
            jid: self.jid(),
            name: self.subject.clone(),
            subject: self.subject.clone(),
            topic: self
                .topic
                .as_ref()
                .map(|t| t.text.clone())
                .unwrap_or_default(),
            topic_id: self.topic.as_ref().map(|t| t.id.clone()),
            owner: self.owner.clone(),
            created_at: self.created_at,
            participants,
            settings: self.settings,
            addressing_mode,
        }
    }

    /// Checks that `actor` is a member allowed to do `action`. A non-member is
    /// told the group is not found: membership is not leaked.
    fn authorize(&self, actor: &str, action: GroupAction) -> Result<Role, GroupError> {
        let role = self.role_of(actor).ok_or_else(|| not_found(&self.jid()))?;
        if !allowed(role, action, &self.settings) {
            return Err(GroupError::NotAdmin(format!(
                "only admins of group {} may {}; this session's account is a {}",
                self.jid(),
                action.describe(),
                role.as_str(),
            )));
        }
        Ok(role)
    }

    /// Adds every JID that is on the network (`on_network`) and not yet a
    /// member, while there is room. One result per JID.
    fn add(
        &mut self,
        jids: &[String],
        on_network: impl Fn(&str) -> bool,
        now: i64,
    ) -> Vec<ParticipantResult> {
        let mut results = Vec::with_capacity(jids.len());
        for jid in jids {
            let status = if self.role_of(jid).is_some() {
                ParticipantStatus::AlreadyMember
            } else if !on_network(jid) {
                ParticipantStatus::NotOnNetwork
            } else if self.participants.len() >= MAX_PARTICIPANTS {
                ParticipantStatus::NotAllowed
            } else {
                self.participants.push(SimMember {
                    jid: jid.clone(),
                    role: Role::Member,
                    joined_at: now,
                });
                self.pending.retain(|p| p != jid);
                ParticipantStatus::Added
            };
            results.push(ParticipantResult {
                jid: jid.clone(),
                status,
            });
        }
        results
    }

    /// Removes members on behalf of `actor`: never the actor itself (it
    /// leaves instead) and never the creator. One result per JID.
    fn remove(&mut self, actor: &str, jids: &[String]) -> Vec<ParticipantResult> {
        let mut results = Vec::with_capacity(jids.len());
        for jid in jids {
            let status = match self.role_of(jid) {
                None => ParticipantStatus::NotMember,
                Some(Role::Superadmin) => ParticipantStatus::NotAllowed,
                Some(_) if jid == actor => ParticipantStatus::NotAllowed,
                Some(_) => {
                    self.participants.retain(|m| &m.jid != jid);
                    ParticipantStatus::Removed
                }
            };
            results.push(ParticipantResult {
                jid: jid.clone(),
                status,
            });
        }
        results
    }

    fn require_members(&self, jids: &[String]) -> Result<(), GroupError> {
        match jids.iter().find(|j| self.role_of(j).is_none()) {
            Some(j) => Err(GroupError::NotParticipant(format!(
                "{j} is not a participant of group {}; nothing was changed",
                self.jid()
            ))),
            None => Ok(()),
        }
    }

    /// Makes members admins, all or nothing; returns who actually changed.
    fn promote(&mut self, jids: &[String]) -> Result<Vec<String>, GroupError> {
        self.require_members(jids)?;
        let mut changed = Vec::new();
        for m in &mut self.participants {
            if jids.contains(&m.jid) && m.role == Role::Member {
                m.role = Role::Admin;
                changed.push(m.jid.clone());
            }
        }
        Ok(changed)
    }

    /// Dismisses admins, all or nothing (the creator cannot be dismissed);
    /// returns who actually changed.
    fn demote(&mut self, jids: &[String]) -> Result<Vec<String>, GroupError> {
        self.require_members(jids)?;
        if let Some(owner) = jids
            .iter()
            .find(|j| self.role_of(j) == Some(Role::Superadmin))
        {
            return Err(GroupError::NotAllowed(format!(
                "{owner} created group {} and cannot be demoted; nothing was changed",
                self.jid()
            )));
        }
        let mut changed = Vec::new();
        for m in &mut self.participants {
            if jids.contains(&m.jid) && m.role == Role::Admin {
                m.role = Role::Member;
                changed.push(m.jid.clone());
            }
        }
        Ok(changed)
    }

    /// Takes `jid` out of the group.
    fn leave(&mut self, jid: &str) {
        self.participants.retain(|m| m.jid != jid);
    }

    /// Keeps the invariant that a group with members has an admin: when none
    /// is left, the member who joined first becomes one. Returns that member.
    fn ensure_admin(&mut self) -> Option<String> {
        if self.participants.iter().any(|m| m.role.is_admin()) {
            return None;
        }
        let first = self.participants.first_mut()?;
        first.role = Role::Admin;
        Some(first.jid.clone())
    }

    /// Sets (`Some`) or deletes (`None`) the description. With `prev_id`, the
    /// change applies only while that is the current description's id.
    /// Returns whether anything changed; `new_id` is called only then.
    fn set_topic(
        &mut self,
        text: Option<&str>,
        prev_id: Option<&str>,
        actor: &str,
        now: i64,
        new_id: impl FnOnce() -> String,
    ) -> Result<bool, GroupError> {
        let current = self.topic.as_ref().map(|t| t.id.as_str());
        if let Some(prev) = prev_id
            && current != Some(prev)
        {
            return Err(GroupError::DescriptionConflict(format!(
                "`prev_id` {prev} is not the current description of group {} (it is {}); read the group again and retry",
                self.jid(),
                current.map_or("none".to_owned(), |c| format!("`{c}`"))
            )));
        }
        let unchanged = self.topic.as_ref().map(|t| t.text.as_str()) == text;
        if unchanged {
            return Ok(false);
        }
        self.topic = text.map(|t| SimTopic {
            id: new_id(),
            text: t.to_owned(),
            set_by: actor.to_owned(),
            set_at: now,
        });
        Ok(true)
    }
}

/// The error for a group that does not exist or that the account is not in.
pub fn not_found(jid: &str) -> GroupError {
    GroupError::NotFound(format!(
        "group {jid} does not exist or this session's account is not a participant"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::group::{GroupSettings, MemberAddMode};

    const OWNER: &str = "15550000001@s.whatsapp.net";
    const ADA: &str = "15550000002@s.whatsapp.net";
    const BOB: &str = "15550000003@s.whatsapp.net";
    const NOBODY: &str = "15550000009@s.whatsapp.net";

    fn group() -> SimGroup {
        let mut g = SimGroup {
            id: "120363000000000001".into(),
            subject: "Team".into(),
            topic: None,
            owner: OWNER.into(),
            created_at: 1,
            participants: vec![SimMember {
                jid: OWNER.into(),
                role: Role::Superadmin,
                joined_at: 1,
            }],
            settings: GroupSettings::default(),
            invite_code: "CODE".into(),
            pending: vec![BOB.into()],
        };
        g.add(&[ADA.into(), BOB.into()], |_| true, 2);
        g
    }

    fn statuses(r: &[ParticipantResult]) -> Vec<ParticipantStatus> {
        r.iter().map(|r| r.status).collect()
    }

    #[test]
    fn a_member_reads_the_subject_and_every_phone_of_a_phone_addressed_group() {
        let info = group().info();
        assert_eq!(
            (info.name.as_str(), info.subject.as_str()),
            ("Team", "Team")
        );
        assert_eq!(info.addressing_mode, AddressingMode::Pn);
        let phones: Vec<Option<&str>> = info
            .participants
            .iter()
            .map(|p| p.phone_number.as_deref())
            .collect();
        assert_eq!(phones, [Some(OWNER), Some(ADA), Some(BOB)]);
        let mut by_lid = group();
        by_lid.participants[2].jid = "99887766@lid".into();
        let info = by_lid.info();
        assert_eq!(info.addressing_mode, AddressingMode::Lid);
        assert_eq!(info.participants[2].phone_number, None);
    }

    #[test]
    fn adding_reports_each_jid_and_clears_a_pending_request() {
        let mut g = group();
        assert!(g.pending.is_empty());
        let r = g.add(&[ADA.into(), NOBODY.into()], |j| j != NOBODY, 3);
        use ParticipantStatus::*;
        assert_eq!(statuses(&r), vec![AlreadyMember, NotOnNetwork]);
        assert_eq!(g.participants.len(), 3);
        assert_eq!(g.role_of(BOB), Some(Role::Member));
    }

    #[test]
    fn removing_spares_the_creator_and_the_actor() {
        let mut g = group();
        g.promote(&[ADA.into()]).unwrap();
        let r = g.remove(ADA, &[OWNER.into(), ADA.into(), BOB.into(), NOBODY.into()]);
        use ParticipantStatus::*;
        assert_eq!(
            statuses(&r),
            vec![NotAllowed, NotAllowed, Removed, NotMember]
        );
        assert_eq!(g.member_jids(), vec![OWNER.to_owned(), ADA.to_owned()]);
    }

    #[test]
    fn members_need_the_right_role_and_outsiders_are_not_told_the_group_exists() {
        let mut g = group();
        assert!(matches!(
            g.authorize(NOBODY, GroupAction::Participate),
            Err(GroupError::NotFound(_))
        ));
        assert!(matches!(
            g.authorize(ADA, GroupAction::SetSubject),
            Err(GroupError::NotAdmin(_))
        ));
        assert!(g.authorize(ADA, GroupAction::Add).is_err());
        g.settings.member_add_mode = MemberAddMode::AllMemberAdd;
        assert_eq!(g.authorize(ADA, GroupAction::Add).unwrap(), Role::Member);
        assert_eq!(
            g.authorize(OWNER, GroupAction::SetSettings).unwrap(),
            Role::Superadmin
        );
    }

    #[test]
    fn promote_and_demote_are_all_or_nothing_and_spare_the_creator() {
        let mut g = group();
        assert!(matches!(
            g.promote(&[ADA.into(), NOBODY.into()]),
            Err(GroupError::NotParticipant(_))
        ));
        assert_eq!(g.role_of(ADA), Some(Role::Member));
        assert_eq!(g.promote(&[ADA.into(), OWNER.into()]).unwrap(), vec![ADA]);
        assert!(g.promote(&[ADA.into()]).unwrap().is_empty());
        assert!(matches!(
            g.demote(&[ADA.into(), OWNER.into()]),
            Err(GroupError::NotAllowed(_))
        ));
        assert_eq!(g.role_of(ADA), Some(Role::Admin));
        assert_eq!(g.demote(&[ADA.into(), BOB.into()]).unwrap(), vec![ADA]);
    }

    #[test]
    fn when_the_last_admin_leaves_the_earliest_member_becomes_admin() {
        let mut g = group();
        g.leave(OWNER);
        assert_eq!(g.ensure_admin().as_deref(), Some(ADA));
        assert_eq!(g.role_of(ADA), Some(Role::Admin));
        assert_eq!(g.owner, OWNER, "the owner stays the creator");
        assert_eq!(g.ensure_admin(), None);
        g.leave(ADA);
        g.leave(BOB);
        assert_eq!(g.ensure_admin(), None);
    }

    #[test]
    fn a_description_change_checks_prev_id_and_gets_a_new_id() {
        let mut g = group();
        let mut n = 0;
        let mut next = || {
            n += 1;
            format!("D{n}")
        };
        assert!(
            g.set_topic(Some("rules"), None, OWNER, 5, &mut next)
                .unwrap()
        );
        assert_eq!(g.info().topic_id.as_deref(), Some("D1"));
        assert!(matches!(
            g.set_topic(Some("new"), Some("D0"), OWNER, 6, &mut next),
            Err(GroupError::DescriptionConflict(_))
        ));
        assert!(
            !g.set_topic(Some("rules"), Some("D1"), OWNER, 6, &mut next)
                .unwrap()
        );
        assert!(
            g.set_topic(Some("new"), Some("D1"), OWNER, 6, &mut next)
                .unwrap()
        );
        assert_eq!(g.info().topic, "new");
        assert!(g.set_topic(None, Some("D2"), OWNER, 7, &mut next).unwrap());
        assert_eq!(g.info().topic, "");
        assert_eq!(g.info().topic_id, None);
        assert!(matches!(
            g.set_topic(Some("x"), Some("D2"), OWNER, 8, &mut next),
            Err(GroupError::DescriptionConflict(_))
        ));
    }
}
