//! Group notifications: one `group_update` per change (in the sim's field
//! names), or `joined_group` when the change adds this session's own account
//! (an add, or a group created with it). A deleted group is a
//! `group_update` in which the account leaves it (`deleted: true`); members
//! whose number changed are `renumbered`. Changes the spec has no field for
//! (community links, suspensions, membership requests) map to nothing.

use serde_json::{Value, json};
use whatsapp_rust::types::events::GroupUpdate;
use whatsapp_rust::wacore::stanza::groups::{GroupNotificationAction as A, GroupParticipantInfo};

use super::{MapContext, other, user_jid};
use crate::NetworkEvent;
use crate::domain::event::EventName;

fn jids(ps: &[GroupParticipantInfo]) -> Vec<String> {
    // Prefer the phone JID when the notification carries it beside an @lid.
    ps.iter()
        .map(|p| user_jid(p.phone_number.as_ref().unwrap_or(&p.jid)))
        .collect()
}

fn includes_own(ps: &[GroupParticipantInfo], cx: &MapContext) -> bool {
    ps.iter().any(|p| {
        std::iter::once(&p.jid)
            .chain(p.phone_number.as_ref())
            .any(|j| cx.own_users.iter().any(|u| *u == j.user.as_str()))
    })
}

/// The event for one group notification, if the spec has one.
pub fn update(e: &GroupUpdate, cx: &MapContext) -> Option<NetworkEvent> {
    let jid = user_jid(&e.group_jid);
    let sender = e
        .participant_pn
        .as_ref()
        .or(e.participant.as_ref())
        .map(user_jid);
    if let A::Create { raw } = &e.action {
        return Some(created(&jid, sender, raw));
    }
    if let A::Add {
        participants,
        reason,
    } = &e.action
        && includes_own(participants, cx)
    {
        return Some(other(
            EventName::JoinedGroup,
            json!({
                "jid": jid,
                "reason": reason,
                "sender": sender,
                "participants": jids(participants),
            }),
        ));
    }
    let change: Value = match &e.action {
        A::Add { participants, .. } => json!({ "join": jids(participants) }),
        A::Remove { participants, .. } => json!({ "leave": jids(participants) }),
        A::Promote { participants } => json!({ "promote": jids(participants) }),
        A::Demote { participants } => json!({ "demote": jids(participants) }),
        A::Subject { subject, .. } => json!({ "name": subject }),
        A::Description { id, description } => json!({ "topic": description, "topic_id": id }),
        A::Locked { .. } => json!({ "locked": true }),
        A::Unlocked => json!({ "locked": false }),
        A::Announce => json!({ "announce": true }),
        A::NotAnnounce => json!({ "announce": false }),
        A::Ephemeral { expiration, .. } => {
            json!({ "ephemeral_seconds": if *expiration == 0 { None } else { Some(*expiration) } })
        }
        A::MembershipApprovalMode { enabled } => {
            json!({ "membership_approval_mode": if *enabled { "on" } else { "off" } })
        }
        A::MemberAddMode { mode } if mode == "admin_add" || mode == "all_member_add" => {
            json!({ "member_add_mode": mode })
        }
        A::Invite { code } => json!({ "invite_link": format!("https://chat.whatsapp.com/{code}") }),
        A::Delete { reason } => {
            let own: Vec<String> = cx
                .own_users
                .first()
                .map(|u| format!("{u}@s.whatsapp.net"))
                .into_iter()
                .collect();
            json!({ "leave": own, "deleted": true, "reason": reason })
        }
        A::Modify { participants } => json!({ "renumbered": jids(participants) }),
        A::RevokeInvite => json!({ "invite_link": Value::Null }),
        _ => return None,
    };
    let mut data = json!({
        "jid": jid,
        "sender": sender,
        "timestamp": e.timestamp.timestamp(),
    });
    if let (Some(d), Some(c)) = (data.as_object_mut(), change.as_object()) {
        d.extend(c.clone());
    }
    Some(other(EventName::GroupUpdate, data))
}

/// A group created with this account in it: the `<create>` notification
/// carries the new group (`<group subject creator …><participant jid/>…`).
fn created(
    jid: &str,
    sender: Option<String>,
    raw: &whatsapp_rust::wacore_binary::node::Node,
) -> NetworkEvent {
    let group = raw.get_optional_child("group");
    let attr = |n: &whatsapp_rust::wacore_binary::node::Node, k: &str| {
        n.attrs.get(k).map(|v| v.to_string())
    };
    let name = group.and_then(|g| attr(g, "subject"));
    let creator = group
        .and_then(|g| attr(g, "creator"))
        .and_then(|c| c.parse::<whatsapp_rust::Jid>().ok())
        .map(|c| user_jid(&c));
    let participants: Vec<String> = group
        .map(|g| {
            g.get_children_by_tag("participant")
                .filter_map(|p| {
                    let pn = attr(p, "phone_number").or_else(|| attr(p, "jid"))?;
                    pn.parse::<whatsapp_rust::Jid>().ok().map(|j| user_jid(&j))
                })
                .collect()
        })
        .unwrap_or_default();
    other(
        EventName::JoinedGroup,
        json!({
            "jid": jid,
            "name": name,
            "reason": "create",
            "sender": sender.or(creator),
            "participants": participants,
        }),
    )
}
