//! [`StaticHosts`]: fixed DNS answers by host name, for tests only. No flag
//! or environment variable sets it, so a production gateway always asks
//! the system's resolver. It replaces the lookup only: the guard still
//! checks whatever it answers. A name can be given a sequence of answers,
//! one per lookup, as a DNS record that changes between two lookups (DNS
//! rebinding) would give them.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, RwLock};

/// One name's answers: the next lookups take them in order, the last one
/// stays; and how many lookups asked.
#[derive(Debug, Default)]
struct Answers {
    queue: VecDeque<Vec<IpAddr>>,
    lookups: usize,
}

/// Fixed DNS answers by host name (see the module). Clones share one
/// table, so a test can change an answer while the gateway runs.
#[derive(Clone, Default)]
pub struct StaticHosts(Arc<RwLock<HashMap<String, Answers>>>);

impl StaticHosts {
    /// An empty table: every name still goes to the system's resolver.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `host` with `addrs` from now on (an empty list: the name
    /// does not resolve).
    pub fn set(&self, host: &str, addrs: impl IntoIterator<Item = IpAddr>) {
        self.set_sequence(host, [addrs.into_iter().collect()]);
    }

    /// Answers the next lookups of `host` with `answers` in order, the last
    /// one from then on: a record that changes after the first lookup.
    pub fn set_sequence(&self, host: &str, answers: impl IntoIterator<Item = Vec<IpAddr>>) {
        let mut table = self.0.write().unwrap_or_else(|p| p.into_inner());
        let entry = table.entry(host.to_ascii_lowercase()).or_default();
        entry.queue = answers.into_iter().collect();
    }

    /// How many lookups have asked for `host` so far.
    pub fn lookups(&self, host: &str) -> usize {
        self.0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&host.to_ascii_lowercase())
            .map_or(0, |a| a.lookups)
    }

    /// The answer for `host`, if the table names it (counted as a lookup).
    pub(crate) fn get(&self, host: &str) -> Option<Vec<IpAddr>> {
        let mut table = self.0.write().unwrap_or_else(|p| p.into_inner());
        let answers = table.get_mut(&host.to_ascii_lowercase())?;
        if answers.queue.is_empty() {
            return None;
        }
        answers.lookups += 1;
        if answers.queue.len() > 1 {
            answers.queue.pop_front()
        } else {
            answers.queue.front().cloned()
        }
    }
}

impl fmt::Debug for StaticHosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.0.read().unwrap_or_else(|p| p.into_inner());
        f.debug_tuple("StaticHosts").field(&*table).finish()
    }
}

/// Two handles are equal when they share one table.
impl PartialEq for StaticHosts {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StaticHosts {}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_sequence_is_answered_in_order_and_its_last_answer_stays() {
        let hosts = StaticHosts::new();
        hosts.set_sequence(
            "Rebind.Example.com",
            [vec![ip("1.1.1.1")], vec![ip("127.0.0.1")]],
        );
        assert_eq!(hosts.get("rebind.example.com"), Some(vec![ip("1.1.1.1")]));
        assert_eq!(hosts.get("rebind.example.com"), Some(vec![ip("127.0.0.1")]));
        assert_eq!(hosts.get("rebind.example.com"), Some(vec![ip("127.0.0.1")]));
        assert_eq!(hosts.lookups("rebind.example.com"), 3);
        assert_eq!(hosts.get("other.example.com"), None);
        assert_eq!(hosts.lookups("other.example.com"), 0);
    }
}
