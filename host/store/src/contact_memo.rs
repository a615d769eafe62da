//! Observations known to change nothing in a session's contact directory,
//! so the next message from a known sender skips the read transaction that
//! would tell the same. An entry is trusted only while no change to the
//! directory has been committed since the read that proved it: every
//! committed change (a merge that wrote, a cleared directory, a deleted
//! session) empties the memo, and an entry proved by a read that began
//! before such a change is refused (the generation it was read under is
//! gone).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::domain::contact::Observation;

/// Entries kept before the memo starts over (each a few strings).
const CAPACITY: usize = 65_536;

/// The memo of no-op observations; one per store.
#[derive(Debug, Default)]
pub(crate) struct ContactMemo {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bumped by every committed change.
    generation: u64,
    /// No-op observations by session.
    unchanged: HashMap<String, HashSet<Observation>>,
    entries: usize,
}

impl ContactMemo {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The generation to hand [`ContactMemo::remember`]: taken before the
    /// read whose answer it records.
    pub(crate) fn generation(&self) -> u64 {
        self.state().generation
    }

    /// Whether every one of `observations` is known to change nothing.
    pub(crate) fn knows_all(&self, session_id: &str, observations: &[Observation]) -> bool {
        let state = self.state();
        state
            .unchanged
            .get(session_id)
            .is_some_and(|set| observations.iter().all(|o| set.contains(o)))
    }

    /// Records `observations` as changing nothing, as a read that began at
    /// `generation` found; ignored when a change was committed since.
    pub(crate) fn remember(&self, generation: u64, session_id: &str, observations: &[Observation]) {
        let mut state = self.state();
        if state.generation != generation {
            return;
        }
        if state.entries + observations.len() > CAPACITY {
            state.unchanged.clear();
            state.entries = 0;
        }
        let set = match state.unchanged.get_mut(session_id) {
            Some(set) => set,
            None => state.unchanged.entry(session_id.to_owned()).or_default(),
        };
        let added = observations
            .iter()
            .filter(|o| set.insert((*o).clone()))
            .count();
        state.entries += added;
    }

    /// A change to some directory was committed: nothing remembered holds.
    pub(crate) fn changed(&self) {
        let mut state = self.state();
        state.generation += 1;
        state.unchanged.clear();
        state.entries = 0;
    }
}
