//! The changes a member makes to a simulated group: each checks the rules
//! (`group_rules.rs`), stores the group in one step and then tells the member
//! sessions what changed.

use serde_json::{Value, json};

use super::World;
use super::group_rules::{GroupRules, not_found, unique};
use super::groups::Note;
use crate::domain::group::{
    GroupAction, ParticipantResult, ParticipantStatus, SettingsUpdate, allowed,
};
use crate::domain::jid::Jid;
use crate::domain::session::Account;
use crate::domain::time::unix_now;
use crate::groups::{GroupError, INVITE_BASE};
use crate::store::SimGroup;

/// The JIDs whose result has `status`.
fn with_status(results: &[ParticipantResult], status: ParticipantStatus) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.status == status)
        .map(|r| r.jid.clone())
        .collect()
}

impl World {
    /// Changes one group the session's account belongs to: `f` gets a copy to
    /// change and returns its answer and the notifications; the copy is stored
    /// only when `f` succeeds and changed something, and the notifications go
    /// out after that.
    async fn change<R>(
        &self,
        id: &str,
        group: &Jid,
        f: impl FnOnce(&mut SimGroup, &Account) -> Result<(R, Vec<Note>), GroupError>,
    ) -> Result<R, GroupError> {
        let me = self.me(id)?;
        let (out, notes) = self.with_book(|book| {
            let current = book
                .get(group.user_part())
                .filter(|g| g.role_of(&me.jid).is_some())
                .ok_or_else(|| not_found(&group.to_string()))?;
            let mut next = current.clone();
            let out = f(&mut next, &me)?;
            if next != *current {
                self.save(book, next)?;
            }
            Ok::<_, GroupError>(out)
        })?;
        self.notify(notes).await;
        Ok(out)
    }

    /// Renames a group.
    pub(in crate::sim) async fn set_group_subject(
        &self,
        id: &str,
        group: &Jid,
        subject: &str,
    ) -> Result<(), GroupError> {
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::SetSubject)?;
            if g.subject == subject {
                return Ok(((), Vec::new()));
            }
            g.subject = subject.to_owned();
            let note = Note::update(g, &me.jid, g.member_jids(), json!({ "name": subject }));
            Ok(((), vec![note]))
        })
        .await
    }

    /// Sets or deletes the description.
    pub(in crate::sim) async fn set_group_description(
        &self,
        id: &str,
        group: &Jid,
        description: Option<&str>,
        prev_id: Option<&str>,
    ) -> Result<(), GroupError> {
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::SetDescription)?;
            let new_id = || self.rng().description_id();
            if !g.set_topic(description, prev_id, &me.jid, unix_now(), new_id)? {
                return Ok(((), Vec::new()));
            }
            let topic_id = g.topic.as_ref().map(|t| t.id.clone());
            let fields = json!({ "topic": description, "topic_id": topic_id });
            Ok(((), vec![Note::update(g, &me.jid, g.member_jids(), fields)]))
        })
        .await
    }

    /// Changes the settings `update` names.
    pub(in crate::sim) async fn update_group_settings(
        &self,
        id: &str,
        group: &Jid,
        update: &SettingsUpdate,
    ) -> Result<(), GroupError> {
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::SetSettings)?;
            let changed = g.settings.apply(update);
            if changed.is_empty() {
                return Ok(((), Vec::new()));
            }
            let note = Note::update(g, &me.jid, g.member_jids(), Value::Object(changed));
            Ok(((), vec![note]))
        })
        .await
    }

    /// Leaves a group; the last member leaving deletes it.
    pub(in crate::sim) async fn leave_group(
        &self,
        id: &str,
        group: &Jid,
    ) -> Result<(), GroupError> {
        self.change(id, group, |g, me| {
            let before = g.member_jids();
            g.leave(&me.jid);
            let mut fields = json!({ "leave": [me.jid] });
            if let Some(admin) = g.ensure_admin() {
                fields["promote"] = json!([admin]);
            }
            Ok(((), vec![Note::update(g, &me.jid, before, fields)]))
        })
        .await
    }

    /// Adds participants that are on the network.
    pub(in crate::sim) async fn add_participants(
        &self,
        id: &str,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        let wanted = unique(participants);
        let known = self.on_network(&wanted)?;
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::Add)?;
            let before = g.member_jids();
            let results = g.add(&wanted, |j| known.contains(j), unix_now());
            let added = with_status(&results, ParticipantStatus::Added);
            let mut notes = Vec::new();
            if !added.is_empty() {
                notes.push(Note::update(g, &me.jid, before, json!({ "join": added })));
                notes.push(Note::joined(g, "add", Some(&me.jid), added));
            }
            Ok((results, notes))
        })
        .await
    }

    /// Removes participants.
    pub(in crate::sim) async fn remove_participants(
        &self,
        id: &str,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantResult>, GroupError> {
        let wanted = unique(participants);
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::Remove)?;
            let before = g.member_jids();
            let results = g.remove(&me.jid, &wanted);
            let removed = with_status(&results, ParticipantStatus::Removed);
            let mut notes = Vec::new();
            if !removed.is_empty() {
                notes.push(Note::update(
                    g,
                    &me.jid,
                    before,
                    json!({ "leave": removed }),
                ));
            }
            Ok((results, notes))
        })
        .await
    }

    /// Makes participants admins.
    pub(in crate::sim) async fn promote_participants(
        &self,
        id: &str,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError> {
        let wanted = unique(participants);
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::Promote)?;
            let promoted = g.promote(&wanted)?;
            let mut notes = Vec::new();
            if !promoted.is_empty() {
                let fields = json!({ "promote": promoted });
                notes.push(Note::update(g, &me.jid, g.member_jids(), fields));
            }
            Ok(((), notes))
        })
        .await
    }

    /// Dismisses admins.
    pub(in crate::sim) async fn demote_participants(
        &self,
        id: &str,
        group: &Jid,
        participants: &[Jid],
    ) -> Result<(), GroupError> {
        let wanted = unique(participants);
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::Demote)?;
            let demoted = g.demote(&wanted)?;
            let mut notes = Vec::new();
            if !demoted.is_empty() {
                let mut fields = json!({ "demote": demoted });
                if let Some(admin) = g.ensure_admin() {
                    fields["promote"] = json!([admin]);
                }
                notes.push(Note::update(g, &me.jid, g.member_jids(), fields));
            }
            Ok(((), notes))
        })
        .await
    }

    /// The invite link; `reset` replaces the code first. Members who may use
    /// the link are told the new one.
    pub(in crate::sim) async fn invite_link(
        &self,
        id: &str,
        group: &Jid,
        reset: bool,
    ) -> Result<String, GroupError> {
        self.change(id, group, |g, me| {
            g.authorize(&me.jid, GroupAction::InviteLink)?;
            let mut notes = Vec::new();
            if reset {
                g.invite_code = self.rng().invite_code();
                let link = format!("{INVITE_BASE}/{}", g.invite_code);
                let to = g
                    .participants
                    .iter()
                    .filter(|m| allowed(m.role, GroupAction::InviteLink, &g.settings))
                    .map(|m| m.jid.clone())
                    .collect();
                notes.push(Note::update(g, &me.jid, to, json!({ "invite_link": link })));
            }
            Ok((format!("{INVITE_BASE}/{}", g.invite_code), notes))
        })
        .await
    }
}
