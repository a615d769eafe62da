//! The simulated network's groups: one document per group, keyed by the group
//! id. Groups are network state: they survive restarts, and deleting a
//! session does not touch them (its account stays a member, as a phone would).

use redb::ReadableTable;

use super::tables::SIM_GROUPS;
use super::{Store, StoreResult, decode, encode};

pub use crate::domain::sim::{SimGroup, SimMember, SimTopic};

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
    use crate::domain::group::{GroupSettings, Role};

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
