//! The simulated network's groups: one document per group, keyed by the group
//! id. Groups are network state: they survive restarts, and deleting a
//! session does not touch them (its account stays a member, as a phone would).

use redb::ReadableTable;
use serde::{Deserialize, Serialize};

use super::tables::SIM_GROUPS;
use super::{Store, StoreResult, decode, encode};
use crate::domain::group::{GroupSettings, Role};

/// A group as the simulated network keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimGroup {
    /// The digits before `@g.us`.
    pub id: String,
    /// The group name.
    pub subject: String,
    /// The description, when there is one.
    pub topic: Option<SimTopic>,
    /// The creator's user JID (kept after the creator leaves).
    pub owner: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Members in the order they joined.
    pub participants: Vec<SimMember>,
    /// The three settings.
    pub settings: GroupSettings,
    /// The current invite code; earlier codes no longer work.
    pub invite_code: String,
    /// User JIDs that asked to join by link while approval was on.
    #[serde(default)]
    pub pending: Vec<String>,
}

/// A group description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimTopic {
    /// Its id: the `prev_id` a later change names.
    pub id: String,
    /// The text.
    pub text: String,
    /// Who set it (user JID).
    pub set_by: String,
    /// Unix seconds when it was set.
    pub set_at: i64,
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimMember {
    /// The member's user JID.
    pub jid: String,
    /// Its role.
    pub role: Role,
    /// Unix seconds when it joined.
    pub joined_at: i64,
}

impl Store {
    /// Stores (or replaces) a group.
    pub fn put_sim_group(&self, group: &SimGroup) -> StoreResult<()> {
        let bytes = encode(group)?;
        self.write(|tx| {
            tx.open_table(SIM_GROUPS)?
                .insert(group.id.as_str(), bytes.as_slice())?;
            Ok(())
        })
    }

    /// Removes a group (the network deletes a group its last member left).
    pub fn delete_sim_group(&self, id: &str) -> StoreResult<()> {
        self.write(|tx| {
            tx.open_table(SIM_GROUPS)?.remove(id)?;
            Ok(())
        })
    }

    /// Every group, ordered by id.
    pub fn list_sim_groups(&self) -> StoreResult<Vec<SimGroup>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_GROUPS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                out.push(decode(row?.1.value())?);
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(id: &str) -> SimGroup {
        SimGroup {
            id: id.into(),
            subject: "Team".into(),
            topic: None,
            owner: "15550000001@s.whatsapp.net".into(),
            created_at: 1,
            participants: vec![SimMember {
                jid: "15550000001@s.whatsapp.net".into(),
                role: Role::Superadmin,
                joined_at: 1,
            }],
            settings: GroupSettings::default(),
            invite_code: "CODE".into(),
            pending: Vec::new(),
        }
    }

    #[test]
    fn groups_are_stored_replaced_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.put_sim_group(&group("2")).unwrap();
        let mut g = group("1");
        store.put_sim_group(&g).unwrap();
        g.subject = "Renamed".into();
        store.put_sim_group(&g).unwrap();
        let all = store.list_sim_groups().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0], g);
        store.delete_sim_group("1").unwrap();
        assert_eq!(store.list_sim_groups().unwrap(), vec![group("2")]);
    }
}
