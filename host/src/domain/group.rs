//! Groups as the API shows them: the summary, group and group-info shapes,
//! participant roles, the three group settings, per-participant results, the
//! limits on names and descriptions, and who may do what ([`allowed`]).

use serde::{Deserialize, Serialize};

/// Longest group name (subject), in characters.
pub const MAX_SUBJECT_CHARS: usize = 100;
/// Longest group description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2048;
/// Most participants a group holds, and most JIDs one request may name.
pub const MAX_PARTICIPANTS: usize = 1024;

/// A participant's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The group's creator (while a member).
    Superadmin,
    /// A group admin.
    Admin,
    /// A regular member.
    Member,
}

impl Role {
    /// Whether this role administers the group.
    pub fn is_admin(self) -> bool {
        matches!(self, Role::Superadmin | Role::Admin)
    }
}

/// Whether join requests need an admin's approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MembershipApprovalMode {
    /// Anyone with the invite link joins at once.
    #[default]
    Off,
    /// Joining by link leaves a request for the admins.
    On,
}

/// Who can add participants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberAddMode {
    /// Only admins.
    #[default]
    AdminAdd,
    /// Every member.
    AllMemberAdd,
}

/// Who can read and reset the invite link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberLinkMode {
    /// Only admins.
    #[default]
    AdminLink,
    /// Every member.
    AllMemberLink,
}

/// The three settings of a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSettings {
    /// Whether join requests need approval.
    pub membership_approval_mode: MembershipApprovalMode,
    /// Who can add participants.
    pub member_add_mode: MemberAddMode,
    /// Who can read and reset the invite link.
    pub member_link_mode: MemberLinkMode,
}

/// A change of settings: only the fields that are `Some` change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsUpdate {
    /// New approval mode.
    pub membership_approval_mode: Option<MembershipApprovalMode>,
    /// New add mode.
    pub member_add_mode: Option<MemberAddMode>,
    /// New link mode.
    pub member_link_mode: Option<MemberLinkMode>,
}

impl GroupSettings {
    /// Applies `update` and returns what actually changed, as the JSON fields
    /// of a `group_update` event (empty when nothing changed).
    pub fn apply(&mut self, update: &SettingsUpdate) -> serde_json::Map<String, serde_json::Value> {
        let before = *self;
        if let Some(v) = update.membership_approval_mode {
            self.membership_approval_mode = v;
        }
        if let Some(v) = update.member_add_mode {
            self.member_add_mode = v;
        }
        if let Some(v) = update.member_link_mode {
            self.member_link_mode = v;
        }
        let (old, new) = (to_map(&before), to_map(self));
        new.into_iter().filter(|(k, v)| old.get(k) != Some(v)).collect()
    }
}

fn to_map(settings: &GroupSettings) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(settings) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

/// One entry of List Groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupSummary {
    /// The group JID.
    pub jid: String,
    /// The group name (subject).
    pub name: String,
    /// How many participants it has.
    pub participant_count: usize,
}

/// A participant and its role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Participant {
    /// The participant's user JID.
    pub jid: String,
    /// Its role.
    pub role: Role,
}

/// Everything a member can read about a group (Get Group Info, plus the
/// fields Get Group projects from it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupInfo {
    /// The group JID.
    pub jid: String,
    /// The group name (subject).
    pub name: String,
    /// The description; empty when there is none.
    pub topic: String,
    /// The id of the current description (the `prev_id` of the next change);
    /// `None` when there is no description.
    pub topic_id: Option<String>,
    /// The creator's user JID (kept after the creator leaves).
    pub owner: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Participants in the order they joined.
    pub participants: Vec<Participant>,
    /// The group's settings.
    pub settings: GroupSettings,
}

/// Get Group: the group without its participant list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The group JID.
    pub jid: String,
    /// The group name (subject).
    pub name: String,
    /// The description; empty when there is none.
    pub topic: String,
    /// The id of the current description; `None` when there is none.
    pub topic_id: Option<String>,
    /// How many participants it has.
    pub participant_count: usize,
    /// Unix seconds of creation.
    pub created_at: i64,
}

impl From<&GroupInfo> for Group {
    fn from(info: &GroupInfo) -> Self {
        Self {
            jid: info.jid.clone(),
            name: info.name.clone(),
            topic: info.topic.clone(),
            topic_id: info.topic_id.clone(),
            participant_count: info.participants.len(),
            created_at: info.created_at,
        }
    }
}

impl From<&GroupInfo> for GroupSummary {
    fn from(info: &GroupInfo) -> Self {
        Self {
            jid: info.jid.clone(),
            name: info.name.clone(),
            participant_count: info.participants.len(),
        }
    }
}

/// The outcome for one JID of an add or remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ParticipantStatus {
    /// Added to the group.
    Added,
    /// Removed from the group.
    Removed,
    /// Already a member (add): nothing changed.
    AlreadyMember,
    /// Not a member (remove): nothing changed.
    NotMember,
    /// No account on the network has this number (add).
    NotOnNetwork,
    /// The network does not allow it: removing the creator or oneself, or
    /// adding to a full group.
    NotAllowed,
}

/// One JID's result of an add or remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParticipantResult {
    /// The JID as the gateway understood it (canonical form).
    pub jid: String,
    /// What happened to it.
    pub status: ParticipantStatus,
}

/// What a member asks to do in a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupAction {
    /// Read the group, send to it, leave it.
    Participate,
    /// Change the name.
    SetSubject,
    /// Change or delete the description.
    SetDescription,
    /// Change the settings.
    SetSettings,
    /// Add participants.
    Add,
    /// Remove participants.
    Remove,
    /// Make admins.
    Promote,
    /// Dismiss admins.
    Demote,
    /// Read or reset the invite link.
    InviteLink,
}

/// Whether a member with `role` may do `action` under `settings`: admins may do
/// everything; members may participate, add when `member_add_mode` is
/// `all_member_add`, and use the invite link when `member_link_mode` is
/// `all_member_link`.
pub fn allowed(role: Role, action: GroupAction, settings: &GroupSettings) -> bool {
    if role.is_admin() {
        return true;
    }
    match action {
        GroupAction::Participate => true,
        GroupAction::Add => settings.member_add_mode == MemberAddMode::AllMemberAdd,
        GroupAction::InviteLink => settings.member_link_mode == MemberLinkMode::AllMemberLink,
        GroupAction::SetSubject
        | GroupAction::SetDescription
        | GroupAction::SetSettings
        | GroupAction::Remove
        | GroupAction::Promote
        | GroupAction::Demote => false,
    }
}

/// Checks a new name: not blank, at most [`MAX_SUBJECT_CHARS`] characters.
pub fn check_subject(subject: &str) -> Result<(), String> {
    if subject.trim().is_empty() {
        return Err("must not be blank".into());
    }
    let n = subject.chars().count();
    if n > MAX_SUBJECT_CHARS {
        return Err(format!(
            "is {n} characters; at most {MAX_SUBJECT_CHARS} are allowed"
        ));
    }
    Ok(())
}

/// Normalises a new description: blank means none; longer than
/// [`MAX_DESCRIPTION_CHARS`] characters is refused.
pub fn check_description(description: Option<&str>) -> Result<Option<&str>, String> {
    let Some(d) = description.filter(|d| !d.trim().is_empty()) else {
        return Ok(None);
    };
    let n = d.chars().count();
    if n > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "is {n} characters; at most {MAX_DESCRIPTION_CHARS} are allowed"
        ));
    }
    Ok(Some(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admins_may_do_everything_and_members_only_what_the_settings_open() {
        let closed = GroupSettings::default();
        let open = GroupSettings {
            member_add_mode: MemberAddMode::AllMemberAdd,
            member_link_mode: MemberLinkMode::AllMemberLink,
            ..GroupSettings::default()
        };
        use GroupAction::*;
        let all = [
            Participate,
            SetSubject,
            SetDescription,
            SetSettings,
            Add,
            Remove,
            Promote,
            Demote,
            InviteLink,
        ];
        for action in all {
            assert!(allowed(Role::Superadmin, action, &closed));
            assert!(allowed(Role::Admin, action, &closed));
        }
        assert!(allowed(Role::Member, Participate, &closed));
        assert!(!allowed(Role::Member, Add, &closed));
        assert!(allowed(Role::Member, Add, &open));
        assert!(!allowed(Role::Member, InviteLink, &closed));
        assert!(allowed(Role::Member, InviteLink, &open));
        for action in [SetSubject, SetDescription, SetSettings, Remove, Promote, Demote] {
            assert!(!allowed(Role::Member, action, &open), "{action:?}");
        }
    }

    #[test]
    fn a_settings_update_changes_only_the_given_fields_and_reports_real_changes() {
        let mut s = GroupSettings::default();
        let changed = s.apply(&SettingsUpdate {
            member_add_mode: Some(MemberAddMode::AllMemberAdd),
            membership_approval_mode: Some(MembershipApprovalMode::Off),
            ..SettingsUpdate::default()
        });
        assert_eq!(s.member_add_mode, MemberAddMode::AllMemberAdd);
        assert_eq!(s.member_link_mode, MemberLinkMode::AdminLink);
        assert_eq!(changed.len(), 1, "approval was already off: {changed:?}");
        assert_eq!(changed["member_add_mode"], "all_member_add");
        assert!(s.apply(&SettingsUpdate::default()).is_empty());
    }

    #[test]
    fn settings_and_roles_use_the_spec_spelling() {
        let s = serde_json::to_value(GroupSettings::default()).unwrap();
        assert_eq!(
            s,
            serde_json::json!({
                "membership_approval_mode": "off",
                "member_add_mode": "admin_add",
                "member_link_mode": "admin_link",
            })
        );
        assert_eq!(serde_json::to_value(Role::Superadmin).unwrap(), "superadmin");
        let status = serde_json::to_value(ParticipantStatus::NotOnNetwork).unwrap();
        assert_eq!(status, "NotOnNetwork");
        let bad = serde_json::from_str::<SettingsUpdate>(r#"{"member_add_mode":"everyone"}"#);
        assert!(bad.is_err());
    }

    #[test]
    fn subjects_and_descriptions_are_checked() {
        assert!(check_subject("Team").is_ok());
        assert!(check_subject("  ").is_err());
        assert!(check_subject(&"x".repeat(MAX_SUBJECT_CHARS + 1)).is_err());
        assert!(check_subject(&"é".repeat(MAX_SUBJECT_CHARS)).is_ok());
        assert_eq!(check_description(Some(" ")), Ok(None));
        assert_eq!(check_description(None), Ok(None));
        assert_eq!(check_description(Some("rules")), Ok(Some("rules")));
        assert!(check_description(Some(&"x".repeat(MAX_DESCRIPTION_CHARS + 1))).is_err());
    }
}
