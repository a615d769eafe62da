//! The simulated network's in-memory account state beside the attached
//! sessions: which app-state collections each session is fetching right now
//! (a concurrent fetch of the same collection is `skipped`), the spam
//! reports the network received, the messages each account starred, and
//! presence: who shows as available and who subscribed to whom. Like
//! faults, it resets on restart.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::account::{Collection, SpamReport};

/// How the sim fails an app-state fetch of one collection (set in [`super::Faults`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AppStateFault {
    /// The server refuses the collection (as a 400/404): `fatal`.
    Fatal,
    /// The server fails (as a 5xx or a timeout): `retryable`.
    Retryable,
}

/// A spam report as the network received it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReceivedReport {
    /// The id answered to the reporter.
    pub report_id: String,
    /// Unix seconds of receipt.
    pub received_at: i64,
    /// The report.
    #[serde(flatten)]
    pub report: SpamReport,
}

/// A starred message: its chat and id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StarredMessage {
    /// The chat JID.
    pub chat: String,
    /// The message id.
    pub message_id: String,
}

#[derive(Default)]
struct State {
    fetching: HashSet<(String, Collection)>,
    spam_reports: HashMap<String, Vec<ReceivedReport>>,
    starred: HashMap<String, HashSet<StarredMessage>>,
    /// Whether each session shows as available, and since when (Unix seconds).
    presence: HashMap<String, (bool, i64)>,
    /// The JIDs each session subscribed to.
    subscriptions: HashMap<String, HashSet<String>>,
}

/// The in-memory account state of the whole simulated network.
#[derive(Default)]
pub struct AccountMemory {
    state: Mutex<State>,
}

impl AccountMemory {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Claims each collection for a fetch by `session`: `true` where this
    /// caller now fetches it, `false` where another fetch already does.
    pub fn claim(&self, session: &str, collections: &[Collection]) -> Vec<bool> {
        let mut s = self.lock();
        collections
            .iter()
            .map(|c| s.fetching.insert((session.to_owned(), *c)))
            .collect()
    }

    /// Ends the fetches of these collections.
    pub fn release(&self, session: &str, collections: &[Collection]) {
        let mut s = self.lock();
        for c in collections {
            s.fetching.remove(&(session.to_owned(), *c));
        }
    }

    /// Records a received spam report.
    pub fn add_report(&self, session: &str, report: ReceivedReport) {
        self.lock()
            .spam_reports
            .entry(session.to_owned())
            .or_default()
            .push(report);
    }

    /// The spam reports received from a session, oldest first.
    pub fn reports(&self, session: &str) -> Vec<ReceivedReport> {
        self.lock()
            .spam_reports
            .get(session)
            .cloned()
            .unwrap_or_default()
    }

    /// Stars (`true`) or unstars a message for a session's account.
    pub fn set_starred(&self, session: &str, chat: &str, message_id: &str, starred: bool) {
        let mut s = self.lock();
        let set = s.starred.entry(session.to_owned()).or_default();
        let m = StarredMessage {
            chat: chat.to_owned(),
            message_id: message_id.to_owned(),
        };
        if starred {
            set.insert(m);
        } else {
            set.remove(&m);
        }
    }

    /// The messages a session's account starred, by chat and id.
    pub fn starred(&self, session: &str) -> Vec<StarredMessage> {
        let mut all: Vec<StarredMessage> = self
            .lock()
            .starred
            .get(session)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        all.sort();
        all
    }

    /// Records a session's presence as of `at` (Unix seconds).
    pub fn set_presence(&self, session: &str, available: bool, at: i64) {
        self.lock()
            .presence
            .insert(session.to_owned(), (available, at));
    }

    /// A session's presence and since when; unavailable since ever when it
    /// never said.
    pub fn presence(&self, session: &str) -> (bool, Option<i64>) {
        match self.lock().presence.get(session) {
            Some((available, at)) => (*available, Some(*at)),
            None => (false, None),
        }
    }

    /// Subscribes a session to a JID's presence.
    pub fn subscribe(&self, session: &str, jid: &str) {
        self.lock()
            .subscriptions
            .entry(session.to_owned())
            .or_default()
            .insert(jid.to_owned());
    }

    /// The sessions subscribed to `jid`'s presence.
    pub fn subscribers(&self, jid: &str) -> Vec<String> {
        self.lock()
            .subscriptions
            .iter()
            .filter(|(_, jids)| jids.contains(jid))
            .map(|(session, _)| session.clone())
            .collect()
    }

    /// Forgets a deleted session.
    pub fn forget(&self, session: &str) {
        let mut s = self.lock();
        s.fetching.retain(|(id, _)| id != session);
        s.spam_reports.remove(session);
        s.starred.remove(session);
        s.presence.remove(session);
        s.subscriptions.remove(session);
    }
}

/// Releases claimed collections when a fetch ends, however it ends (also
/// when the request that started it is dropped).
pub struct Claim<'a> {
    memory: &'a AccountMemory,
    session: String,
    collections: Vec<Collection>,
}

impl<'a> Claim<'a> {
    /// Holds the claim on `collections` until dropped.
    pub fn new(memory: &'a AccountMemory, session: &str, collections: Vec<Collection>) -> Self {
        Self {
            memory,
            session: session.to_owned(),
            collections,
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.memory.release(&self.session, &self.collections);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_is_fetched_by_one_caller_at_a_time_per_session() {
        let m = AccountMemory::default();
        let cols = [Collection::Regular, Collection::RegularLow];
        assert_eq!(m.claim("a", &cols), [true, true]);
        {
            let _claim = Claim::new(&m, "a", vec![Collection::Regular]);
            assert_eq!(m.claim("a", &[Collection::Regular]), [false]);
            assert_eq!(m.claim("b", &[Collection::Regular]), [true], "per session");
        }
        assert_eq!(
            m.claim("a", &[Collection::Regular]),
            [true],
            "released on drop"
        );
        m.forget("a");
        assert_eq!(m.claim("a", &cols), [true, true]);
    }
}
