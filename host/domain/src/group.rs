//! Groups as the API shows them: the summary, group and group-info shapes,
//! participant roles, how a group addresses its participants, per-participant
//! results, the limits on names and descriptions, and who may do what
//! ([`allowed`]). The three settings are in `group_settings.rs` and
//! re-exported here.

use serde::{Deserialize, Serialize};

pub use super::group_settings::{
    GroupSettings, MemberAddMode, MemberLinkMode, MembershipApprovalMode, SettingsUpdate,
};

/// Longest group name (subject), in characters.
pub const MAX_SUBJECT_CHARS: usize = 100;
/// Longest group description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2048;
/// Most participants a group holds, and most JIDs one request may name.
pub const MAX_PARTICIPANTS: usize = 1024;

/// A participant's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Superadmin => "superadmin",
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }
}

/// How a group addresses its participants on the network. Spelled as waxum
/// prints it (the variant names), so its clients compare the same strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AddressingMode {
    /// By phone-number JID (`<digits>@s.whatsapp.net`).
    Pn,
    /// By linked identity (`<id>@lid`); the phone beside it when the network
    /// gives it.
    Lid,
}

/// One entry of List Groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupSummary {
    /// The group JID.
    pub jid: String,
    /// The group name (subject).
    pub name: String,
    /// The same as `name`, under waxum's name, for its clients.
    pub subject: String,
    /// How many participants it has.
    pub participant_count: usize,
    /// Participants in the order they joined (waxum lists them here).
    pub participants: Vec<Participant>,
    /// How the group addresses its participants (waxum's field).
    pub addressing_mode: AddressingMode,
}

/// A participant and its role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Participant {
    /// The participant's user JID: its phone-number JID when the network
    /// gives one, else its `@lid`.
    pub jid: String,
    /// Its role.
    pub role: Role,
    /// The participant's phone-number JID (`<digits>@s.whatsapp.net`, as
    /// waxum prints it); `null` when the network does not reveal the phone
    /// of a participant it addresses by `@lid`.
    #[serde(default)]
    pub phone_number: Option<String>,
}

impl Participant {
    /// A participant addressed by `jid`; its phone is the JID's own when that
    /// is a phone-number JID.
    pub fn new(jid: String, role: Role) -> Self {
        let phone_number = phone_jid(&jid);
        Self {
            jid,
            role,
            phone_number,
        }
    }
}

/// `jid` when it is a phone-number JID (`<digits>@s.whatsapp.net`).
fn phone_jid(jid: &str) -> Option<String> {
    crate::jid::Jid::parse(jid)
        .ok()
        .filter(|j| j.phone().is_some())
        .map(|j| j.to_string())
}

/// Everything a member can read about a group (Get Group Info, plus the
/// fields Get Group projects from it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupInfo {
    /// The group JID.
    pub jid: String,
    /// The group name (subject).
    pub name: String,
    /// The same as `name`, under waxum's name, for its clients.
    pub subject: String,
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
    /// How the group addresses its participants (waxum's field).
    pub addressing_mode: AddressingMode,
}

/// Get Group: the group without its participant list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Group {
    /// The group JID.
    pub jid: String,
    /// The group name (subject).
    pub name: String,
    /// The same as `name`, under waxum's name, for its clients.
    pub subject: String,
    /// The description; empty when there is none.
    pub topic: String,
    /// The id of the current description; `None` when there is none.
    pub topic_id: Option<String>,
    /// How many participants it has.
    pub participant_count: usize,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Participants in the order they joined (waxum's Get Group lists them).
    pub participants: Vec<Participant>,
    /// How the group addresses its participants (waxum's field).
    pub addressing_mode: AddressingMode,
}

impl From<&GroupInfo> for Group {
    fn from(info: &GroupInfo) -> Self {
        Self {
            jid: info.jid.clone(),
            name: info.name.clone(),
            subject: info.subject.clone(),
            topic: info.topic.clone(),
            topic_id: info.topic_id.clone(),
            participant_count: info.participants.len(),
            created_at: info.created_at,
            participants: info.participants.clone(),
            addressing_mode: info.addressing_mode,
        }
    }
}

impl From<&GroupInfo> for GroupSummary {
    fn from(info: &GroupInfo) -> Self {
        Self {
            jid: info.jid.clone(),
            name: info.name.clone(),
            subject: info.subject.clone(),
            participant_count: info.participants.len(),
            participants: info.participants.clone(),
            addressing_mode: info.addressing_mode,
        }
    }
}

/// The outcome for one JID of an add or remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

impl GroupAction {
    /// What the action does, for messages (`only admins may …`).
    pub fn describe(self) -> &'static str {
        match self {
            GroupAction::Participate => "take part",
            GroupAction::SetSubject => "change the group name",
            GroupAction::SetDescription => "change the description",
            GroupAction::SetSettings => "change the settings",
            GroupAction::Add => "add participants",
            GroupAction::Remove => "remove participants",
            GroupAction::Promote => "promote participants",
            GroupAction::Demote => "demote admins",
            GroupAction::InviteLink => "read or reset the invite link",
        }
    }
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
        for action in [
            SetSubject,
            SetDescription,
            SetSettings,
            Remove,
            Promote,
            Demote,
        ] {
            assert!(!allowed(Role::Member, action, &open), "{action:?}");
        }
    }

    #[test]
    fn a_participant_has_a_phone_number_only_when_addressed_by_phone() {
        let by_phone = Participant::new("15550001111@s.whatsapp.net".into(), Role::Admin);
        assert_eq!(
            by_phone.phone_number.as_deref(),
            Some("15550001111@s.whatsapp.net")
        );
        let by_lid = Participant::new("99887766@lid".into(), Role::Member);
        assert_eq!(by_lid.phone_number, None);
        assert_eq!(serde_json::to_value(AddressingMode::Lid).unwrap(), "Lid");
        assert_eq!(serde_json::to_value(AddressingMode::Pn).unwrap(), "Pn");
    }

    #[test]
    fn roles_and_statuses_use_the_spec_spelling() {
        assert_eq!(
            serde_json::to_value(Role::Superadmin).unwrap(),
            "superadmin"
        );
        let status = serde_json::to_value(ParticipantStatus::NotOnNetwork).unwrap();
        assert_eq!(status, "NotOnNetwork");
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
