//! The groups of the simulated world: the group book (every group, loaded
//! from the store on first use and written through on every change), the
//! reads, creation, joining by invite code, the members a group message
//! reaches, and the notifications (`joined_group`, `group_update`) that member
//! sessions of this gateway receive. The per-operation changes are in
//! `group_ops.rs`; the rules themselves in `group_rules.rs`.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};

use super::group_rules::{GroupRules, not_found, unique};
use super::{World, internal};
use crate::NetworkError;
use crate::domain::event::EventName;
use crate::domain::group::{GroupInfo, GroupSummary, MAX_PARTICIPANTS, Role};
use crate::domain::jid::Jid;
use crate::domain::session::Account;
use crate::domain::time::unix_now;
use crate::groups::{CreatedGroup, GroupError, NewGroup};
use crate::store::{SimGroup, SimMember};

/// Every group of the world by id; `None` until first loaded from the store.
#[derive(Default)]
pub struct GroupBook(Option<BTreeMap<String, SimGroup>>);

/// An event for the member sessions (of this gateway) among `to`.
pub(super) struct Note {
    /// User JIDs the event is for.
    pub to: Vec<String>,
    /// `joined_group` or `group_update`.
    pub event: EventName,
    /// The event data.
    pub data: Value,
}

impl Note {
    /// A `group_update` for `to`: `{jid, sender, timestamp}` and `fields`.
    pub fn update(group: &SimGroup, sender: &str, to: Vec<String>, fields: Value) -> Note {
        let mut data = json!({ "jid": group.jid(), "sender": sender, "timestamp": unix_now() });
        if let (Some(d), Value::Object(f)) = (data.as_object_mut(), fields) {
            d.extend(f);
        }
        Note {
            to,
            event: EventName::GroupUpdate,
            data,
        }
    }

    /// A `joined_group` for `to`: `{jid, name, reason, sender, participants}`.
    pub fn joined(group: &SimGroup, reason: &str, sender: Option<&str>, to: Vec<String>) -> Note {
        Note {
            to,
            event: EventName::JoinedGroup,
            data: json!({
                "jid": group.jid(),
                "name": group.subject,
                "reason": reason,
                "sender": sender,
                "participants": group.member_jids(),
            }),
        }
    }
}

/// Who joins by invite code through the sim control API.
#[derive(Debug, Clone)]
pub enum Joiner {
    /// A session of this gateway (its paired account).
    Session(String),
    /// Any account on the network, by user JID.
    User(Jid),
}

/// What joining by invite code did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum JoinStatus {
    /// Now a member.
    Joined,
    /// Was a member already.
    AlreadyMember,
    /// The group needs approval: the request waits for an admin to add them.
    PendingApproval,
}

impl World {
    /// Runs `f` on the group book, loading it from the store first if needed.
    pub(super) fn with_book<R, E: From<NetworkError>>(
        &self,
        f: impl FnOnce(&mut BTreeMap<String, SimGroup>) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut book = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        if book.0.is_none() {
            let stored = self.store.list_sim_groups().map_err(internal)?;
            book.0 = Some(stored.into_iter().map(|g| (g.id.clone(), g)).collect());
        }
        f(book.0.get_or_insert_default())
    }

    /// Stores a changed group (or removes it once empty) and updates the book.
    pub(super) fn save(
        &self,
        book: &mut BTreeMap<String, SimGroup>,
        group: SimGroup,
    ) -> Result<(), NetworkError> {
        if group.participants.is_empty() {
            self.store.delete_sim_group(&group.id).map_err(internal)?;
            book.remove(&group.id);
        } else {
            self.store.put_sim_group(&group).map_err(internal)?;
            book.insert(group.id.clone(), group);
        }
        Ok(())
    }

    /// The account of a session that is online (group operations need the
    /// connection, as on the real network).
    pub(super) fn me(&self, id: &str) -> Result<Account, NetworkError> {
        self.with(id, |s| match (&s.link, &s.account) {
            (super::Link::Online, Some(a)) => Ok(a.clone()),
            _ => Err(NetworkError::NotConnected),
        })?
    }

    /// Which of `jids` have an account on the network: a paired session of
    /// this gateway or a registered outside user.
    pub(super) fn on_network(&self, jids: &[String]) -> Result<HashSet<String>, NetworkError> {
        let sessions: HashSet<String> = self
            .lock()
            .values()
            .filter_map(|s| s.account.as_ref().map(|a| a.jid.clone()))
            .collect();
        let mut known = HashSet::new();
        for jid in jids {
            let phone = Jid::parse(jid)
                .ok()
                .and_then(|j| j.phone().map(str::to_owned));
            let registered = match phone {
                Some(p) => self.store.get_sim_user(&p).map_err(internal)?.is_some(),
                None => false,
            };
            if registered || sessions.contains(jid) {
                known.insert(jid.clone());
            }
        }
        Ok(known)
    }

    /// Hands each note to the member sessions it names that are online;
    /// sessions that are offline miss it (the group state is always readable).
    pub(super) async fn notify(&self, notes: Vec<Note>) {
        for note in notes {
            let targets: Vec<String> = self
                .lock()
                .iter()
                .filter(|(_, s)| s.account.as_ref().is_some_and(|a| note.to.contains(&a.jid)))
                .map(|(id, _)| id.clone())
                .collect();
            for target in targets {
                let _ = self
                    .inject_event(&target, note.event, note.data.clone())
                    .await;
            }
        }
    }

    /// The groups a session's account is a member of, oldest first.
    pub(in crate::sim) fn list_groups(&self, id: &str) -> Result<Vec<GroupSummary>, GroupError> {
        let me = self.me(id)?;
        self.with_book(|book| {
            let mut mine: Vec<&SimGroup> = book
                .values()
                .filter(|g| g.role_of(&me.jid).is_some())
                .collect();
            mine.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            Ok(mine.iter().map(|g| GroupSummary::from(&g.info())).collect())
        })
    }

    /// One group the session's account is a member of.
    pub(in crate::sim) fn group_info(
        &self,
        id: &str,
        group: &Jid,
    ) -> Result<GroupInfo, GroupError> {
        let me = self.me(id)?;
        self.with_book(|book| {
            book.get(group.user_part())
                .filter(|g| g.role_of(&me.jid).is_some())
                .map(SimGroup::info)
                .ok_or_else(|| not_found(&group.to_string()))
        })
    }

    /// Creates a group with the session's account as creator and superadmin.
    pub(in crate::sim) async fn create_group(
        &self,
        id: &str,
        new: &NewGroup,
    ) -> Result<CreatedGroup, GroupError> {
        let me = self.me(id)?;
        let wanted = unique(&new.participants);
        let known = self.on_network(&wanted)?;
        let now = unix_now();
        let (group, participants) = self.with_book(|book| {
            let gid = loop {
                let candidate = self.rng().group_id();
                if !book.contains_key(&candidate) {
                    break candidate;
                }
            };
            let mut group = SimGroup {
                id: gid,
                subject: new.name.clone(),
                topic: None,
                owner: me.jid.clone(),
                created_at: now,
                participants: vec![SimMember {
                    jid: me.jid.clone(),
                    role: Role::Superadmin,
                    joined_at: now,
                }],
                settings: new.settings,
                invite_code: self.rng().invite_code(),
                pending: Vec::new(),
            };
            let results = group.add(&wanted, |j| known.contains(j), now);
            self.save(book, group.clone())?;
            Ok::<_, GroupError>((group, results))
        })?;
        let note = Note::joined(&group, "create", Some(&me.jid), group.member_jids());
        self.notify(vec![note]).await;
        Ok(CreatedGroup {
            jid: group.jid(),
            participants,
        })
    }

    /// Joins a group by invite code, as a phone following the link would.
    /// An unknown or replaced code is `NotFound`.
    pub(in crate::sim) async fn join_by_invite(
        &self,
        joiner: &Joiner,
        code: &str,
    ) -> Result<(String, JoinStatus), GroupError> {
        let jid = match joiner {
            Joiner::Session(id) => self
                .with(id, |s| s.account.as_ref().map(|a| a.jid.clone()))?
                .ok_or_else(|| {
                    NetworkError::InvalidState(format!(
                        "session `{id}` is not paired; it has no account to join with"
                    ))
                })?,
            Joiner::User(user) => user.to_string(),
        };
        if self.on_network(std::slice::from_ref(&jid))?.is_empty() {
            return Err(NetworkError::NotFound(format!(
                "{jid} has no account on the simulated network; register it with POST /api/v1/sim/users"
            ))
            .into());
        }
        let now = unix_now();
        let (group_jid, status, notes) = self.with_book(|book| {
            let mut group = book
                .values()
                .find(|g| g.invite_code == code)
                .cloned()
                .ok_or_else(|| {
                    GroupError::NotFound(format!(
                        "invite code `{code}` does not open any group (it was reset, or never existed)"
                    ))
                })?;
            let group_jid = group.jid();
            if group.role_of(&jid).is_some() {
                return Ok((group_jid, JoinStatus::AlreadyMember, Vec::new()));
            }
            if group.settings.membership_approval_mode
                == crate::domain::group::MembershipApprovalMode::On
            {
                if !group.pending.contains(&jid) {
                    group.pending.push(jid.clone());
                    self.save(book, group)?;
                }
                return Ok((group_jid, JoinStatus::PendingApproval, Vec::new()));
            }
            if group.participants.len() >= MAX_PARTICIPANTS {
                return Err(GroupError::NotAllowed(format!(
                    "group {} is full",
                    group.jid()
                )));
            }
            let before = group.member_jids();
            group.add(std::slice::from_ref(&jid), |_| true, now);
            let notes = vec![
                Note::update(&group, &jid, before, json!({ "join": [jid] })),
                Note::joined(&group, "invite", None, vec![jid.clone()]),
            ];
            self.save(book, group)?;
            Ok((group_jid, JoinStatus::Joined, notes))
        })?;
        self.notify(notes).await;
        Ok((group_jid, status))
    }

    /// The sessions of this gateway a message from session `id` (account
    /// `me`) to `to` reaches: the other member sessions of a group, or the
    /// session whose account has the user's number. An unknown group is
    /// `NotFound`; a group `me` is not in is `Rejected`.
    pub(super) fn reached_by(
        &self,
        id: &str,
        me: &Account,
        to: &Jid,
    ) -> Result<Vec<String>, NetworkError> {
        if !to.is_group() {
            let peer = self.lock().iter().find_map(|(other, s)| {
                let theirs = s.account.as_ref().map(|a| a.phone.as_str());
                (other != id && theirs.is_some() && theirs == to.phone()).then(|| other.clone())
            });
            return Ok(peer.into_iter().collect());
        }
        let group = to;
        let members = self.with_book(|book| {
            let g = book.get(group.user_part()).ok_or_else(|| {
                NetworkError::NotFound(format!(
                    "group {group} does not exist on the simulated network"
                ))
            })?;
            if g.role_of(&me.jid).is_none() {
                return Err(NetworkError::Rejected(format!(
                    "this session's account is not a participant of group {group}; only members can send to it"
                )));
            }
            Ok(g.member_jids())
        })?;
        Ok(self
            .lock()
            .iter()
            .filter(|(other, s)| {
                *other != id && s.account.as_ref().is_some_and(|a| members.contains(&a.jid))
            })
            .map(|(other, _)| other.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event_data::validate;
    use crate::domain::group::GroupSettings;

    #[test]
    fn the_notes_fit_the_documented_event_shapes() {
        let owner = "15550000001@s.whatsapp.net";
        let group = SimGroup {
            id: "120363000000000001".into(),
            subject: "Team".into(),
            topic: None,
            owner: owner.into(),
            created_at: 1,
            participants: vec![SimMember {
                jid: owner.into(),
                role: Role::Superadmin,
                joined_at: 1,
            }],
            settings: GroupSettings::default(),
            invite_code: "CODE".into(),
            pending: Vec::new(),
        };
        let to = || vec![owner.to_owned()];
        let updates = [
            json!({ "name": "New" }),
            json!({ "topic": null, "topic_id": null }),
            json!({ "topic": "Rules", "topic_id": "AB12" }),
            json!({ "member_add_mode": "all_member_add", "membership_approval_mode": "on" }),
            json!({ "join": [owner], "leave": [owner], "promote": [owner], "demote": [owner] }),
            json!({ "invite_link": "https://chat.whatsapp.com/CODE" }),
        ];
        for fields in updates {
            let note = Note::update(&group, owner, to(), fields);
            assert_eq!(note.event, EventName::GroupUpdate);
            validate(note.event, &note.data).unwrap();
            assert_eq!(note.data["jid"], "120363000000000001@g.us");
        }
        for sender in [Some(owner), None] {
            let note = Note::joined(&group, "create", sender, to());
            validate(note.event, &note.data).unwrap();
            assert_eq!(note.data["participants"], json!([owner]));
        }
    }
}
