//! Blocking on the simulated network: each account's blocklist, kept in the
//! gateway's store (so it outlives a restart, as WhatsApp's does), and a
//! blocked account's messages, which never reach the account that blocked
//! it (in a group they still do, as on WhatsApp).

use std::collections::HashSet;

use super::{World, internal};
use crate::NetworkError;
use crate::contacts::Blocked;
use crate::domain::jid::Jid;
use crate::domain::time::unix_now;

impl World {
    /// The accounts session `id`'s account blocked.
    pub(in crate::sim) fn blocklist(&self, id: &str) -> Result<Vec<Blocked>, NetworkError> {
        self.online_account(id)?;
        let list = self.store.sim_blocklist(id).map_err(internal)?;
        Ok(list
            .into_iter()
            .map(|(jid, at)| Blocked {
                jid,
                blocked_at: Some(at),
            })
            .collect())
    }

    /// Blocks or unblocks `jid` for session `id`'s account.
    pub(in crate::sim) fn set_blocked(
        &self,
        id: &str,
        jid: &Jid,
        blocked: bool,
    ) -> Result<(), NetworkError> {
        self.online_account(id)?;
        let at = blocked.then(unix_now);
        self.store
            .set_sim_blocked(id, &jid.to_string(), at)
            .map_err(internal)?;
        // Read again at the next delivery.
        self.with(id, |s| {
            s.blocked = None;
            s.blocks_changed += 1;
        })?;
        Ok(())
    }

    /// Whether session `id`'s account blocked `from` (a user JID).
    pub(in crate::sim) fn blocks(&self, id: &str, from: &str) -> Result<bool, NetworkError> {
        let (known, generation) = self.with(id, |s| {
            (
                s.blocked.as_ref().map(|b| b.contains(from)),
                s.blocks_changed,
            )
        })?;
        if let Some(known) = known {
            return Ok(known);
        }
        let set: HashSet<String> = self
            .store
            .sim_blocklist(id)
            .map_err(internal)?
            .into_iter()
            .map(|(jid, _)| jid)
            .collect();
        let hit = set.contains(from);
        self.with(id, |s| {
            if s.blocks_changed == generation {
                s.blocked = Some(set);
            }
        })?;
        Ok(hit)
    }
}
