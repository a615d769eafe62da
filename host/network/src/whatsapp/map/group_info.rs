//! Groups between the crate and the gateway, as pure functions: the crate's
//! group metadata as our group info and summaries, our settings and new-group
//! requests as the crate's arguments, per-participant status codes as
//! participant results, the all-or-nothing checks of promote and demote, the
//! `prev_id` check of a description change, and the crate's group errors as
//! [`GroupError`]s. The calls themselves are in `ops/groups.rs`.

use whatsapp_rust::features::{
    GroupCreateOptions, GroupError as WaGroupError, GroupMetadata, GroupParticipant,
    MemberAddMode as WaAddMode, MemberLinkMode as WaLinkMode,
    MembershipApprovalMode as WaApprovalMode, MexError, ParticipantChangeResponse, ParticipantType,
};
use whatsapp_rust::types::message::AddressingMode as WaAddressingMode;
use whatsapp_rust::{ErrorChainExt, Jid as WaJid};

use super::iq_errors::iq_error;
use super::user_jid;
use crate::NetworkError;
use crate::domain::group::{
    AddressingMode, GroupAction, GroupInfo, GroupSettings, GroupSummary, MemberAddMode,
    MemberLinkMode, MembershipApprovalMode, Participant, ParticipantResult, ParticipantStatus,
    Role, SettingsUpdate,
};
use crate::groups::{GroupError, NewGroup};

/// What a failed call was doing, which decides what a refusal means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Not about one existing group (listing, creating): a refusal is the
    /// network's.
    Account,
    /// Reading a group: any refusal means the account is not in it.
    Read,
    /// Leaving a group: any refusal means the account is not in it.
    Leave,
    /// Changing a group: `not-authorized` or `forbidden` is the role (the
    /// caller confirms membership, since an outsider hears the same).
    Change(GroupAction),
}

/// The error for a group that does not exist or that the account is not in
/// (the sim's wording: membership is never leaked).
pub fn not_found(group: &str) -> GroupError {
    GroupError::NotFound(format!(
        "group {group} does not exist or this session's account is not a participant"
    ))
}

/// The error for an action the account's role does not allow.
pub fn not_admin(group: &str, action: GroupAction, why: &str) -> GroupError {
    GroupError::NotAdmin(format!(
        "only admins of group {group} may {}; {why}",
        action.describe()
    ))
}

/// The crate's error of a group call on `group` as ours. The refusals that
/// mean something about the group (not in it, not an admin) are decided
/// here by `op`; every other IQ failure maps as for any request
/// ([`iq_error`]: lost connection, timeout, rate limit, bad request).
pub fn group_error(e: &WaGroupError, group: &str, op: Op) -> GroupError {
    if let WaGroupError::DescriptionConflict = e {
        return GroupError::DescriptionConflict(format!(
            "the description of group {group} changed while it was being replaced; read the group again and retry"
        ));
    }
    if let Some(r) = e.server_rejection() {
        let said = if r.text.is_empty() {
            format!("{}", r.code)
        } else {
            format!("{} {}", r.code, r.text)
        };
        match (r.code, op) {
            (401 | 403 | 404, Op::Read | Op::Leave) | (404, Op::Change(_)) => {
                return not_found(group);
            }
            (401 | 403, Op::Change(action)) => {
                let why = format!("WhatsApp refused this session's account ({said})");
                return not_admin(group, action, &why);
            }
            _ => {}
        }
    }
    let what = match op {
        Op::Account => "the group request".to_owned(),
        _ => format!("the request on group {group}"),
    };
    match e {
        WaGroupError::Iq(iq) | WaGroupError::Mex(MexError::Request(iq)) => {
            iq_error(&what, iq).into()
        }
        _ if e.is_transport_unavailable() => NetworkError::NotConnected.into(),
        _ if e.is_timeout() => {
            NetworkError::Failed(format!("{what} timed out: WhatsApp did not answer in time"))
                .into()
        }
        WaGroupError::InvalidRequest(_) => {
            NetworkError::Rejected(format!("{what} was refused: {e}")).into()
        }
        _ => NetworkError::Failed(format!("{what} failed: {e}")).into(),
    }
}

/// A participant's role.
pub fn role(t: ParticipantType) -> Role {
    match t {
        ParticipantType::SuperAdmin => Role::Superadmin,
        ParticipantType::Admin => Role::Admin,
        ParticipantType::Member => Role::Member,
    }
}

/// A group's three settings; a mode the server leaves out is WhatsApp's
/// default, admins only.
pub fn settings(meta: &GroupMetadata) -> GroupSettings {
    GroupSettings {
        membership_approval_mode: if meta.membership_approval {
            MembershipApprovalMode::On
        } else {
            MembershipApprovalMode::Off
        },
        member_add_mode: match meta.member_add_mode {
            Some(WaAddMode::AllMemberAdd) => MemberAddMode::AllMemberAdd,
            Some(WaAddMode::AdminAdd) | None => MemberAddMode::AdminAdd,
        },
        member_link_mode: match meta.member_link_mode {
            Some(WaLinkMode::AllMemberLink) => MemberLinkMode::AllMemberLink,
            Some(WaLinkMode::AdminLink) | None => MemberLinkMode::AdminLink,
        },
    }
}

/// A participant's user JID: the phone JID when the group (LID-addressed)
/// carries it beside the `@lid`, as the API prints participants.
fn participant_jid(p: &GroupParticipant) -> String {
    user_jid(p.phone_number.as_ref().unwrap_or(&p.jid))
}

/// How the group addresses its participants, as the server says.
pub fn addressing_mode(mode: WaAddressingMode) -> AddressingMode {
    match mode {
        WaAddressingMode::Pn => AddressingMode::Pn,
        WaAddressingMode::Lid => AddressingMode::Lid,
    }
}

/// Everything a member reads about a group. `topic_id` is only given with a
/// description (the spec's `null` when there is none).
pub fn group_info(meta: &GroupMetadata) -> GroupInfo {
    GroupInfo {
        jid: user_jid(&meta.id),
        name: meta.subject.clone(),
        subject: meta.subject.clone(),
        topic: meta.description.clone().unwrap_or_default(),
        topic_id: meta.description.as_ref().and(meta.description_id.clone()),
        owner: meta
            .creator_pn
            .as_ref()
            .or(meta.creator.as_ref())
            .map(user_jid)
            .unwrap_or_default(),
        created_at: meta.creation_time.map_or(0, |t| t as i64),
        participants: meta
            .participants
            .iter()
            .map(|p| Participant::new(participant_jid(p), role(p.participant_type)))
            .collect(),
        settings: settings(meta),
        addressing_mode: addressing_mode(meta.addressing_mode),
    }
}

/// The groups of List Groups, oldest first (then by JID, so the order is
/// stable).
pub fn summaries<'a>(metas: impl IntoIterator<Item = &'a GroupMetadata>) -> Vec<GroupSummary> {
    let mut infos: Vec<GroupInfo> = metas.into_iter().map(group_info).collect();
    infos.sort_by(|a, b| (a.created_at, &a.jid).cmp(&(b.created_at, &b.jid)));
    infos.iter().map(GroupSummary::from).collect()
}

/// The crate's approval mode.
pub fn wa_approval(m: MembershipApprovalMode) -> WaApprovalMode {
    match m {
        MembershipApprovalMode::Off => WaApprovalMode::Off,
        MembershipApprovalMode::On => WaApprovalMode::On,
    }
}

/// The crate's add mode.
pub fn wa_add_mode(m: MemberAddMode) -> WaAddMode {
    match m {
        MemberAddMode::AdminAdd => WaAddMode::AdminAdd,
        MemberAddMode::AllMemberAdd => WaAddMode::AllMemberAdd,
    }
}

/// The crate's link mode.
pub fn wa_link_mode(m: MemberLinkMode) -> WaLinkMode {
    match m {
        MemberLinkMode::AdminLink => WaLinkMode::AdminLink,
        MemberLinkMode::AllMemberLink => WaLinkMode::AllMemberLink,
    }
}

/// The create request: the name and the settings, without participants.
/// They are added by a separate call right after, because only an add
/// answers a status code per participant (the crate's create answer drops
/// the `error` of participants it could not add).
pub fn create_options(new: &NewGroup) -> GroupCreateOptions {
    GroupCreateOptions {
        subject: new.name.clone(),
        participants: Vec::new(),
        membership_approval_mode: Some(wa_approval(new.settings.membership_approval_mode)),
        member_add_mode: Some(wa_add_mode(new.settings.member_add_mode)),
        member_link_mode: Some(wa_link_mode(new.settings.member_link_mode)),
        ..GroupCreateOptions::default()
    }
}

/// The fields of `update` that differ from `current`: only those are sent,
/// so a request that changes nothing sends nothing (as on the sim).
pub fn settings_changes(current: &GroupSettings, update: &SettingsUpdate) -> SettingsUpdate {
    SettingsUpdate {
        membership_approval_mode: update
            .membership_approval_mode
            .filter(|v| *v != current.membership_approval_mode),
        member_add_mode: update
            .member_add_mode
            .filter(|v| *v != current.member_add_mode),
        member_link_mode: update
            .member_link_mode
            .filter(|v| *v != current.member_link_mode),
    }
}

/// The status of one JID of an add, from its code in the answer: none (or
/// 200) is added; 409 already a member; 404 no such account; everything
/// else (403 privacy settings, 408 left recently, 419 or 500 group full, 421
/// waiting for approval) is the network not allowing it.
pub fn add_status(code: Option<&str>) -> ParticipantStatus {
    match code {
        None | Some("200") => ParticipantStatus::Added,
        Some("409") => ParticipantStatus::AlreadyMember,
        Some("404") => ParticipantStatus::NotOnNetwork,
        Some(_) => ParticipantStatus::NotAllowed,
    }
}

/// The status of one JID of a remove, from its code in the answer: none (or
/// 200) is removed; 404 not a member; everything else (406 for the creator,
/// 401/403) is the network not allowing it.
pub fn remove_status(code: Option<&str>) -> ParticipantStatus {
    match code {
        None | Some("200") => ParticipantStatus::Removed,
        Some("404") => ParticipantStatus::NotMember,
        Some(_) => ParticipantStatus::NotAllowed,
    }
}

/// Whether a participant answer is about `wanted` (the server may answer a
/// phone JID with the `@lid` and the phone beside it).
fn answers(r: &ParticipantChangeResponse, wanted: &WaJid) -> bool {
    r.jid.is_same_chat_as(wanted)
        || r.phone_number
            .as_ref()
            .is_some_and(|p| p.is_same_chat_as(wanted))
}

/// One result per requested JID, in request order, from the answers of an
/// add or remove. An answer is found by JID; when none names a JID and the
/// server answered exactly one entry per request, the entry at the same
/// position is taken (the server answers in request order). A JID nothing
/// answers is reported as not allowed: nothing is known to have happened.
pub fn participant_results(
    wanted: &[(String, WaJid)],
    answers_got: &[ParticipantChangeResponse],
    status: fn(Option<&str>) -> ParticipantStatus,
) -> Vec<ParticipantResult> {
    let positional = answers_got.len() == wanted.len();
    wanted
        .iter()
        .enumerate()
        .map(|(i, (jid, wa))| {
            let answer = answers_got.iter().find(|r| answers(r, wa)).or_else(|| {
                answers_got
                    .get(i)
                    .filter(|r| positional && !wanted.iter().any(|(_, other)| answers(r, other)))
            });
            ParticipantResult {
                jid: jid.clone(),
                status: answer.map_or(ParticipantStatus::NotAllowed, |r| {
                    status(r.error.as_deref())
                }),
            }
        })
        .collect()
}

/// Whether `p` is `wanted`, by its JID, phone or `@lid`.
fn is_participant(p: &GroupParticipant, wanted: &WaJid) -> bool {
    std::iter::once(&p.jid)
        .chain(p.phone_number.as_ref())
        .chain(p.lid.as_ref())
        .any(|j| j.is_same_chat_as(wanted))
}

/// The account's role in the group, when one of `own` (its phone and `@lid`
/// JIDs) is a participant.
pub fn own_role(meta: &GroupMetadata, own: &[WaJid]) -> Option<Role> {
    meta.participants
        .iter()
        .find(|p| own.iter().any(|o| is_participant(p, o)))
        .map(|p| role(p.participant_type))
}

/// Refuses an admin-only action of a member, as the sim does before looking
/// at the request. An account the metadata does not show is left to the
/// server to judge.
pub fn require_admin(
    meta: &GroupMetadata,
    own: &[WaJid],
    action: GroupAction,
) -> Result<(), GroupError> {
    match own_role(meta, own) {
        Some(r) if !r.is_admin() => Err(not_admin(
            &user_jid(&meta.id),
            action,
            &format!("this session's account is a {}", r.as_str()),
        )),
        _ => Ok(()),
    }
}

/// Who a promote (`promote`) or demote actually changes, as the group
/// addresses them, checked all or nothing as on the sim: a JID that is not
/// a participant is [`GroupError::NotParticipant`], demoting the creator
/// [`GroupError::NotAllowed`]; promoting an admin or demoting a member is
/// left out (a no-op).
pub fn role_change_targets(
    meta: &GroupMetadata,
    wanted: &[(String, WaJid)],
    promote: bool,
) -> Result<Vec<WaJid>, GroupError> {
    let group = user_jid(&meta.id);
    let mut found = Vec::with_capacity(wanted.len());
    for (jid, wa) in wanted {
        match meta.participants.iter().find(|p| is_participant(p, wa)) {
            Some(p) => found.push((jid, p)),
            None => {
                return Err(GroupError::NotParticipant(format!(
                    "{jid} is not a participant of group {group}; nothing was changed"
                )));
            }
        }
    }
    if !promote
        && let Some((jid, _)) = found
            .iter()
            .find(|(_, p)| p.participant_type == ParticipantType::SuperAdmin)
    {
        return Err(GroupError::NotAllowed(format!(
            "{jid} created group {group} and cannot be demoted; nothing was changed"
        )));
    }
    let from = if promote {
        ParticipantType::Member
    } else {
        ParticipantType::Admin
    };
    Ok(found
        .into_iter()
        .filter(|(_, p)| p.participant_type == from)
        .map(|(_, p)| p.jid.clone())
        .collect())
}

/// The outcome of a promote or demote from its answers: the first
/// participant the server refused, as an error (404: not a participant,
/// anything else: not allowed).
pub fn role_change_outcome(
    group: &str,
    answers_got: &[ParticipantChangeResponse],
    promote: bool,
) -> Result<(), GroupError> {
    let Some((r, code)) = answers_got
        .iter()
        .find_map(|r| r.error.as_deref().map(|code| (r, code)))
    else {
        return Ok(());
    };
    let jid = user_jid(r.phone_number.as_ref().unwrap_or(&r.jid));
    let verb = if promote { "promote" } else { "demote" };
    Err(match code {
        "404" => GroupError::NotParticipant(format!("{jid} is not a participant of group {group}")),
        _ => GroupError::NotAllowed(format!(
            "WhatsApp did not allow to {verb} {jid} in group {group} (error {code})"
        )),
    })
}

/// What a description change does after reading the group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescriptionPlan {
    /// The text is already the description: nothing to send (as on the sim).
    Unchanged,
    /// Send the change, naming `prev` (the server's id of the description it
    /// replaces, `None` when the group never had one).
    Send {
        /// The token the server checks the change against.
        prev: Option<String>,
    },
}

/// Checks `prev_id` against the group's current description (a `prev_id`
/// that is not the current `topic_id`, also when there is no description,
/// is a conflict, as on the sim) and decides whether anything is sent.
pub fn plan_description(
    meta: &GroupMetadata,
    description: Option<&str>,
    prev_id: Option<&str>,
) -> Result<DescriptionPlan, GroupError> {
    let current = meta
        .description
        .as_ref()
        .and(meta.description_id.as_deref());
    if let Some(prev) = prev_id
        && current != Some(prev)
    {
        return Err(GroupError::DescriptionConflict(format!(
            "`prev_id` {prev} is not the current description of group {} (it is {}); read the group again and retry",
            user_jid(&meta.id),
            current.map_or("none".to_owned(), |c| format!("`{c}`"))
        )));
    }
    if meta.description.as_deref() == description {
        return Ok(DescriptionPlan::Unchanged);
    }
    Ok(DescriptionPlan::Send {
        prev: meta.description_id.clone(),
    })
}

/// The requested JIDs, canonical and without repeats, in request order,
/// beside their crate form.
pub fn unique<T: ToString>(
    jids: &[T],
    convert: impl Fn(&T) -> Result<WaJid, NetworkError>,
) -> Result<Vec<(String, WaJid)>, NetworkError> {
    let mut out: Vec<(String, WaJid)> = Vec::with_capacity(jids.len());
    for j in jids {
        let s = j.to_string();
        if !out.iter().any(|(seen, _)| *seen == s) {
            out.push((s, convert(j)?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use whatsapp_rust::IqError;
    use whatsapp_rust::NodeBuilder;
    use whatsapp_rust::wacore::protocol::ProtocolNode;

    use super::*;

    const G: &str = "120363000000000001@g.us";
    const OWNER: &str = "15550000001";
    const ADA: &str = "15550000002";
    const BOB: &str = "15550000003";

    fn pn(user: &str) -> WaJid {
        WaJid::pn(user)
    }

    fn member(jid: WaJid, t: ParticipantType) -> GroupParticipant {
        GroupParticipant {
            jid,
            phone_number: None,
            lid: None,
            username: None,
            participant_type: t,
            details: None,
        }
    }

    fn meta() -> GroupMetadata {
        GroupMetadata {
            id: WaJid::group("120363000000000001"),
            subject: "Team".into(),
            creator: Some(pn(OWNER)),
            creation_time: Some(1_700_000_000),
            description: Some("rules".into()),
            description_id: Some("D1D2D3D4".into()),
            participants: vec![
                member(pn(OWNER), ParticipantType::SuperAdmin),
                member(pn(ADA), ParticipantType::Admin),
                GroupParticipant {
                    phone_number: Some(pn(BOB)),
                    lid: Some(WaJid::lid("99887766")),
                    ..member(WaJid::lid("99887766"), ParticipantType::Member)
                },
            ],
            membership_approval: true,
            member_add_mode: Some(WaAddMode::AllMemberAdd),
            member_link_mode: None,
            ..GroupMetadata::default()
        }
    }

    fn wanted(users: &[&str]) -> Vec<(String, WaJid)> {
        users
            .iter()
            .map(|u| (format!("{u}@s.whatsapp.net"), pn(u)))
            .collect()
    }

    fn answer(jid: &str, error: Option<&str>, phone: Option<&str>) -> ParticipantChangeResponse {
        let mut b = NodeBuilder::new("participant").attr("jid", jid);
        if let Some(e) = error {
            b = b.attr("error", e);
        }
        if let Some(p) = phone {
            b = b.attr("phone_number", p);
        }
        ParticipantChangeResponse::try_from_node(&b.build()).expect("a participant answer")
    }

    fn rejected(code: u16, text: &str) -> WaGroupError {
        WaGroupError::Iq(IqError::ServerError {
            code,
            text: text.into(),
            error_type: None,
            backoff: None,
        })
    }

    fn statuses(r: &[ParticipantResult]) -> Vec<(&str, ParticipantStatus)> {
        r.iter().map(|r| (r.jid.as_str(), r.status)).collect()
    }

    #[test]
    fn group_metadata_becomes_group_info_field_by_field() {
        let info = group_info(&meta());
        assert_eq!(info.jid, G);
        assert_eq!(info.name, "Team");
        assert_eq!(info.subject, "Team", "waxum's name for the name");
        assert_eq!(info.addressing_mode, AddressingMode::Pn);
        assert_eq!(info.topic, "rules");
        assert_eq!(info.topic_id.as_deref(), Some("D1D2D3D4"));
        assert_eq!(info.owner, "15550000001@s.whatsapp.net");
        assert_eq!(info.created_at, 1_700_000_000);
        let roles: Vec<(&str, Role)> = info
            .participants
            .iter()
            .map(|p| (p.jid.as_str(), p.role))
            .collect();
        assert_eq!(
            roles,
            vec![
                ("15550000001@s.whatsapp.net", Role::Superadmin),
                ("15550000002@s.whatsapp.net", Role::Admin),
                ("15550000003@s.whatsapp.net", Role::Member),
            ],
            "a LID participant is shown by the phone beside it"
        );
        assert_eq!(
            info.settings.membership_approval_mode,
            MembershipApprovalMode::On
        );
        assert_eq!(info.settings.member_add_mode, MemberAddMode::AllMemberAdd);
        assert_eq!(info.settings.member_link_mode, MemberLinkMode::AdminLink);
    }

    #[test]
    fn a_lid_addressed_group_gives_each_participants_phone_when_the_server_does() {
        let m = GroupMetadata {
            addressing_mode: WaAddressingMode::Lid,
            participants: vec![
                GroupParticipant {
                    phone_number: Some(pn(OWNER)),
                    lid: Some(WaJid::lid("11223344")),
                    ..member(WaJid::lid("11223344"), ParticipantType::SuperAdmin)
                },
                member(WaJid::lid("55667788"), ParticipantType::Member),
            ],
            ..meta()
        };
        let info = group_info(&m);
        assert_eq!(info.addressing_mode, AddressingMode::Lid);
        let shown: Vec<(&str, Option<&str>)> = info
            .participants
            .iter()
            .map(|p| (p.jid.as_str(), p.phone_number.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "15550000001@s.whatsapp.net",
                    Some("15550000001@s.whatsapp.net")
                ),
                ("55667788@lid", None),
            ],
            "a participant the server gives no phone for has none"
        );
        let summary = &summaries([&m])[0];
        assert_eq!(summary.subject, "Team");
        assert_eq!(summary.addressing_mode, AddressingMode::Lid);
        assert_eq!(summary.participants, info.participants);
    }

    #[test]
    fn a_group_without_description_creator_or_time_reads_as_empty() {
        let m = GroupMetadata {
            description: None,
            description_id: Some("OLD00001".into()),
            creator: None,
            creation_time: None,
            creator_pn: None,
            ..meta()
        };
        let info = group_info(&m);
        assert_eq!(info.topic, "");
        assert_eq!(info.topic_id, None, "no description, no topic_id");
        assert_eq!(info.owner, "");
        assert_eq!(info.created_at, 0);
        assert_eq!(
            settings(&GroupMetadata::default()),
            GroupSettings::default()
        );
    }

    #[test]
    fn the_owner_is_the_creators_phone_when_the_server_gives_it() {
        let m = GroupMetadata {
            creator: Some(WaJid::lid("12345")),
            creator_pn: Some(pn(OWNER)),
            ..meta()
        };
        assert_eq!(group_info(&m).owner, "15550000001@s.whatsapp.net");
    }

    #[test]
    fn summaries_list_groups_oldest_first_with_their_participant_count() {
        let newer = GroupMetadata {
            id: WaJid::group("120363000000000009"),
            subject: "Later".into(),
            creation_time: Some(1_800_000_000),
            participants: vec![member(pn(ADA), ParticipantType::SuperAdmin)],
            ..GroupMetadata::default()
        };
        let list = summaries([&newer, &meta()]);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].jid, G);
        assert_eq!(list[0].name, "Team");
        assert_eq!(list[0].participant_count, 3);
        assert_eq!(list[1].jid, "120363000000000009@g.us");
        assert_eq!(list[1].participant_count, 1);
    }

    #[test]
    fn roles_and_settings_convert_both_ways() {
        assert_eq!(role(ParticipantType::SuperAdmin), Role::Superadmin);
        assert_eq!(role(ParticipantType::Admin), Role::Admin);
        assert_eq!(role(ParticipantType::Member), Role::Member);
        assert_eq!(wa_approval(MembershipApprovalMode::On), WaApprovalMode::On);
        assert_eq!(
            wa_approval(MembershipApprovalMode::Off),
            WaApprovalMode::Off
        );
        assert_eq!(wa_add_mode(MemberAddMode::AdminAdd), WaAddMode::AdminAdd);
        assert_eq!(
            wa_add_mode(MemberAddMode::AllMemberAdd),
            WaAddMode::AllMemberAdd
        );
        assert_eq!(
            wa_link_mode(MemberLinkMode::AdminLink),
            WaLinkMode::AdminLink
        );
        assert_eq!(
            wa_link_mode(MemberLinkMode::AllMemberLink),
            WaLinkMode::AllMemberLink
        );
    }

    #[test]
    fn a_new_group_is_created_with_its_name_and_settings_and_no_participants() {
        let new = NewGroup {
            name: "Team".into(),
            participants: vec!["15550000002@s.whatsapp.net".parse().unwrap()],
            settings: GroupSettings {
                membership_approval_mode: MembershipApprovalMode::On,
                member_add_mode: MemberAddMode::AdminAdd,
                member_link_mode: MemberLinkMode::AllMemberLink,
            },
        };
        let o = create_options(&new);
        assert_eq!(o.subject, "Team");
        assert!(o.participants.is_empty(), "participants are added after");
        assert_eq!(o.membership_approval_mode, Some(WaApprovalMode::On));
        assert_eq!(o.member_add_mode, Some(WaAddMode::AdminAdd));
        assert_eq!(o.member_link_mode, Some(WaLinkMode::AllMemberLink));
        assert_eq!(o.ephemeral_expiration, Some(0));
        assert!(!o.is_parent);
        assert_eq!(o.description, None);
    }

    #[test]
    fn only_settings_that_differ_are_sent() {
        let current = settings(&meta());
        let update = SettingsUpdate {
            membership_approval_mode: Some(MembershipApprovalMode::On),
            member_add_mode: Some(MemberAddMode::AdminAdd),
            member_link_mode: None,
        };
        let changes = settings_changes(&current, &update);
        assert_eq!(changes.membership_approval_mode, None, "already on");
        assert_eq!(changes.member_add_mode, Some(MemberAddMode::AdminAdd));
        assert_eq!(changes.member_link_mode, None);
        assert_eq!(
            settings_changes(&current, &SettingsUpdate::default()),
            SettingsUpdate::default()
        );
    }

    #[test]
    fn add_and_remove_codes_become_participant_statuses() {
        use ParticipantStatus::*;
        assert_eq!(add_status(None), Added);
        assert_eq!(add_status(Some("200")), Added);
        assert_eq!(add_status(Some("409")), AlreadyMember);
        assert_eq!(add_status(Some("404")), NotOnNetwork);
        for refused in ["403", "408", "419", "421", "500"] {
            assert_eq!(add_status(Some(refused)), NotAllowed, "{refused}");
        }
        assert_eq!(remove_status(None), Removed);
        assert_eq!(remove_status(Some("404")), NotMember);
        assert_eq!(remove_status(Some("406")), NotAllowed);
        assert_eq!(remove_status(Some("403")), NotAllowed);
    }

    #[test]
    fn participant_results_follow_the_request_order_and_match_lid_answers_by_phone() {
        let want = wanted(&[ADA, BOB, "15550000004", "15550000005"]);
        let got = vec![
            answer("15550000004@s.whatsapp.net", Some("403"), None),
            answer(
                "99887766@lid",
                Some("409"),
                Some("15550000003@s.whatsapp.net"),
            ),
            answer("15550000002@s.whatsapp.net", None, None),
        ];
        let r = participant_results(&want, &got, add_status);
        use ParticipantStatus::*;
        assert_eq!(
            statuses(&r),
            vec![
                ("15550000002@s.whatsapp.net", Added),
                ("15550000003@s.whatsapp.net", AlreadyMember),
                ("15550000004@s.whatsapp.net", NotAllowed),
                ("15550000005@s.whatsapp.net", NotAllowed),
            ],
            "a JID nothing answers is not allowed"
        );
    }

    #[test]
    fn an_answer_only_by_lid_is_matched_by_position_when_every_jid_was_answered() {
        let want = wanted(&[ADA, BOB]);
        let got = vec![
            answer("11111@lid", None, None),
            answer("15550000003@s.whatsapp.net", Some("404"), None),
        ];
        let r = participant_results(&want, &got, remove_status);
        use ParticipantStatus::*;
        assert_eq!(
            statuses(&r),
            vec![
                ("15550000002@s.whatsapp.net", Removed),
                ("15550000003@s.whatsapp.net", NotMember),
            ]
        );
    }

    #[test]
    fn the_accounts_role_is_found_by_phone_or_lid() {
        let m = meta();
        assert_eq!(own_role(&m, &[pn(OWNER)]), Some(Role::Superadmin));
        assert_eq!(
            own_role(&m, &[pn("15550000009"), WaJid::lid("99887766")]),
            Some(Role::Member)
        );
        assert_eq!(own_role(&m, &[pn("15550000009")]), None);
        assert!(require_admin(&m, &[pn(ADA)], GroupAction::SetSettings).is_ok());
        assert!(require_admin(&m, &[], GroupAction::SetSettings).is_ok());
        let err = require_admin(&m, &[pn(BOB)], GroupAction::SetSettings).unwrap_err();
        match err {
            GroupError::NotAdmin(msg) => {
                assert!(msg.contains(G), "{msg}");
                assert!(msg.contains("change the settings"), "{msg}");
                assert!(msg.contains("is a member"), "{msg}");
            }
            other => panic!("expected NotAdmin, got {other:?}"),
        }
    }

    #[test]
    fn promote_targets_only_members_as_the_group_addresses_them() {
        let m = meta();
        let t = role_change_targets(&m, &wanted(&[OWNER, ADA, BOB]), true).unwrap();
        assert_eq!(t, vec![WaJid::lid("99887766")]);
        let t = role_change_targets(&m, &wanted(&[ADA, BOB]), false).unwrap();
        assert_eq!(t, vec![pn(ADA)]);
    }

    #[test]
    fn promote_and_demote_refuse_strangers_and_the_creator_before_sending() {
        let m = meta();
        let err = role_change_targets(&m, &wanted(&[ADA, "15550000009"]), true).unwrap_err();
        match err {
            GroupError::NotParticipant(msg) => {
                assert!(msg.starts_with("15550000009@s.whatsapp.net"), "{msg}");
                assert!(msg.contains(G), "{msg}");
            }
            other => panic!("expected NotParticipant, got {other:?}"),
        }
        let err = role_change_targets(&m, &wanted(&[ADA, OWNER]), false).unwrap_err();
        assert!(
            matches!(&err, GroupError::NotAllowed(m) if m.contains("15550000001@s.whatsapp.net")),
            "{err:?}"
        );
        assert!(role_change_targets(&m, &wanted(&[OWNER]), true).is_ok());
    }

    #[test]
    fn a_refused_participant_of_a_promote_is_an_error() {
        assert!(role_change_outcome(G, &[answer("1@lid", None, None)], true).is_ok());
        let got = [
            answer("15550000002@s.whatsapp.net", None, None),
            answer("77@lid", Some("404"), Some("15550000003@s.whatsapp.net")),
        ];
        let err = role_change_outcome(G, &got, true).unwrap_err();
        assert!(
            matches!(&err, GroupError::NotParticipant(m) if m.contains("15550000003@s.whatsapp.net")),
            "{err:?}"
        );
        let got = [answer("15550000001@s.whatsapp.net", Some("406"), None)];
        let err = role_change_outcome(G, &got, false).unwrap_err();
        assert!(
            matches!(&err, GroupError::NotAllowed(m) if m.contains("demote") && m.contains("406")),
            "{err:?}"
        );
    }

    #[test]
    fn a_description_change_checks_prev_id_against_the_current_description() {
        let m = meta();
        assert_eq!(
            plan_description(&m, Some("new"), Some("D1D2D3D4")).unwrap(),
            DescriptionPlan::Send {
                prev: Some("D1D2D3D4".into())
            }
        );
        assert_eq!(
            plan_description(&m, None, None).unwrap(),
            DescriptionPlan::Send {
                prev: Some("D1D2D3D4".into())
            },
            "no prev_id changes unconditionally, against the current id"
        );
        assert_eq!(
            plan_description(&m, Some("rules"), None).unwrap(),
            DescriptionPlan::Unchanged
        );
        let err = plan_description(&m, Some("new"), Some("STALE")).unwrap_err();
        assert!(
            matches!(&err, GroupError::DescriptionConflict(msg) if msg.contains("`D1D2D3D4`")),
            "{err:?}"
        );
        let bare = GroupMetadata {
            description: None,
            description_id: None,
            ..meta()
        };
        assert_eq!(
            plan_description(&bare, Some("first"), None).unwrap(),
            DescriptionPlan::Send { prev: None }
        );
        assert_eq!(
            plan_description(&bare, None, None).unwrap(),
            DescriptionPlan::Unchanged
        );
        let err = plan_description(&bare, Some("x"), Some("D1D2D3D4")).unwrap_err();
        assert!(
            matches!(&err, GroupError::DescriptionConflict(msg) if msg.contains("it is none")),
            "a prev_id with no description is a conflict: {err:?}"
        );
    }

    #[test]
    fn server_refusals_map_to_the_group_errors_the_sim_gives() {
        let change = Op::Change(GroupAction::SetSubject);
        assert!(matches!(
            group_error(&rejected(403, "forbidden"), G, Op::Read),
            GroupError::NotFound(_)
        ));
        assert!(matches!(
            group_error(&rejected(401, "not-authorized"), G, Op::Leave),
            GroupError::NotFound(_)
        ));
        assert!(matches!(
            group_error(&rejected(404, "item-not-found"), G, change),
            GroupError::NotFound(_)
        ));
        match group_error(&rejected(401, "not-authorized"), G, change) {
            GroupError::NotAdmin(msg) => {
                assert!(msg.contains("change the group name"), "{msg}");
                assert!(msg.contains("401 not-authorized"), "{msg}");
            }
            other => panic!("expected NotAdmin, got {other:?}"),
        }
        assert!(matches!(
            group_error(&rejected(403, "forbidden"), G, change),
            GroupError::NotAdmin(_)
        ));
        assert!(matches!(
            group_error(&WaGroupError::DescriptionConflict, G, change),
            GroupError::DescriptionConflict(_)
        ));
    }

    #[test]
    fn network_failures_map_to_network_errors() {
        let net = |e: GroupError| match e {
            GroupError::Network(n) => n,
            other => panic!("expected a network error, got {other:?}"),
        };
        let op = Op::Change(GroupAction::Add);
        assert!(matches!(
            net(group_error(&rejected(429, "rate-overlimit"), G, op)),
            NetworkError::Failed(m) if m.contains("rate limited")
        ));
        assert!(matches!(
            net(group_error(&rejected(400, "bad-request"), G, op)),
            NetworkError::Rejected(m) if m.contains("400 bad-request")
        ));
        assert!(matches!(
            net(group_error(&rejected(503, ""), G, op)),
            NetworkError::Failed(m) if m.contains("answered 503")
        ));
        assert!(matches!(
            net(group_error(&rejected(403, "forbidden"), G, Op::Account)),
            NetworkError::Rejected(_)
        ));
        assert!(matches!(
            net(group_error(&WaGroupError::Iq(IqError::Timeout), G, op)),
            NetworkError::Failed(m) if m.contains("timed out")
        ));
        assert!(matches!(
            net(group_error(&WaGroupError::Iq(IqError::NotConnected), G, op)),
            NetworkError::NotConnected
        ));
        assert!(matches!(
            net(group_error(
                &WaGroupError::InvalidRequest("bad".into()),
                G,
                op
            )),
            NetworkError::Rejected(_)
        ));
        let mex = WaGroupError::Mex(MexError::Request(IqError::ServerError {
            code: 403,
            text: "forbidden".into(),
            error_type: None,
            backoff: None,
        }));
        assert!(
            matches!(
                group_error(&mex, G, Op::Change(GroupAction::SetSettings)),
                GroupError::NotAdmin(_)
            ),
            "a refusal inside a MEX call is found too"
        );
        let internal = WaGroupError::Internal(anyhow::anyhow!("cache"));
        assert!(matches!(
            net(group_error(&internal, G, op)),
            NetworkError::Failed(_)
        ));
    }

    #[test]
    fn requested_jids_collapse_repeats_in_request_order() {
        let jids: Vec<crate::domain::jid::Jid> = [
            "15550000003@s.whatsapp.net",
            "15550000002",
            "15550000003@s.whatsapp.net",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        let u = unique(&jids, crate::whatsapp::send::wa_jid).unwrap();
        assert_eq!(
            u,
            vec![
                ("15550000003@s.whatsapp.net".to_owned(), pn(BOB)),
                ("15550000002@s.whatsapp.net".to_owned(), pn(ADA)),
            ]
        );
    }
}
