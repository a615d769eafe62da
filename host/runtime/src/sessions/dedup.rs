//! Per-session message dedup: a bounded first-in-first-out set of the keys of
//! the last [`DEDUP_CAPACITY`] messages. Memory only; a restart forgets it.
//! It grows with the messages a session sees (an idle session holds none)
//! and keeps a 128-bit fingerprint of each key, not the key.

use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasher, Hash, RandomState};

use serde_json::Value;

use crate::network::InboundMessage;

/// How many recent messages a session remembers (the spec's dedup window).
pub const DEDUP_CAPACITY: usize = 4096;

/// A set that remembers the last `capacity` keys inserted; inserting one more
/// forgets the oldest.
#[derive(Debug)]
pub struct RecentSet<K> {
    order: VecDeque<K>,
    seen: HashSet<K>,
    capacity: usize,
}

impl<K: Eq + Hash + Clone> RecentSet<K> {
    /// An empty set that remembers at most `capacity` keys (at least one).
    /// Nothing is reserved up front: the set grows as keys arrive.
    pub fn new(capacity: usize) -> Self {
        Self {
            order: VecDeque::new(),
            seen: HashSet::new(),
            capacity: capacity.max(1),
        }
    }

    /// Remembers `key`; returns `false` when it was already remembered (a
    /// duplicate, which does not refresh its place in the window).
    pub fn insert(&mut self, key: K) -> bool {
        if self.seen.contains(&key) {
            return false;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.seen.remove(&oldest);
        }
        self.order.push_back(key.clone());
        self.seen.insert(key);
        true
    }

    /// Whether `key` is remembered.
    pub fn contains(&self, key: &K) -> bool {
        self.seen.contains(key)
    }

    /// Forgets `key` (a message whose record could not be stored must not
    /// be taken for a duplicate when the network delivers it again).
    pub fn forget(&mut self, key: &K) {
        if self.seen.remove(key) {
            self.order.retain(|k| k != key);
        }
    }

    /// How many keys are remembered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// What makes a message the same message: its chat and id, and for a live
/// location update also its sequence number (a live location streams as
/// several messages with one id, and every update must get through).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageKey {
    chat: String,
    message_id: String,
    live_sequence: Option<String>,
}

impl MessageKey {
    /// The key of an inbound message.
    pub fn of(m: &InboundMessage) -> Self {
        let live_sequence = m
            .location
            .as_ref()
            .filter(|l| l.get("is_live").and_then(Value::as_bool) == Some(true))
            .map(|l| {
                l.get("sequence_number")
                    .map_or_else(String::new, Value::to_string)
            });
        Self {
            chat: m.chat.clone(),
            message_id: m.message_id.clone(),
            live_sequence,
        }
    }
}

/// The dedup window of one session. It remembers a 128-bit fingerprint of
/// each key (two independently seeded SipHashes) rather than the key: 16
/// bytes a message instead of two copies of its chat and id, so a busy
/// session's full window is about 150 KB, not a megabyte. Two different
/// keys share a fingerprint with odds of about 2^-105 in a full window.
#[derive(Debug)]
pub struct MessageDedup {
    recent: RecentSet<u128>,
    hashers: (RandomState, RandomState),
}

impl MessageDedup {
    /// An empty window of `capacity` messages.
    pub fn new(capacity: usize) -> Self {
        Self {
            recent: RecentSet::new(capacity),
            hashers: (RandomState::new(), RandomState::new()),
        }
    }

    fn fingerprint(&self, key: &MessageKey) -> u128 {
        let (a, b) = &self.hashers;
        (u128::from(a.hash_one(key)) << 64) | u128::from(b.hash_one(key))
    }

    /// Remembers `key`; `false` when it is a duplicate of a remembered one.
    pub fn insert(&mut self, key: &MessageKey) -> bool {
        let f = self.fingerprint(key);
        self.recent.insert(f)
    }

    /// Whether `key` is remembered.
    pub fn contains(&self, key: &MessageKey) -> bool {
        self.recent.contains(&self.fingerprint(key))
    }

    /// Forgets `key`, so the next message with it is not a duplicate.
    pub fn forget(&mut self, key: &MessageKey) {
        let f = self.fingerprint(key);
        self.recent.forget(&f);
    }

    /// How many messages are remembered.
    pub fn len(&self) -> usize {
        self.recent.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }
}

impl Default for MessageDedup {
    fn default() -> Self {
        Self::new(DEDUP_CAPACITY)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_key_is_new_once_and_a_duplicate_afterwards() {
        let mut set = RecentSet::new(3);
        assert!(set.insert("a"));
        assert!(!set.insert("a"));
        assert!(set.insert("b"));
        assert_eq!(set.len(), 2);
    }

    #[test]
    fn beyond_capacity_the_oldest_key_is_forgotten_first() {
        let mut set = RecentSet::new(3);
        for k in ["a", "b", "c", "d"] {
            assert!(set.insert(k));
        }
        assert_eq!(set.len(), 3);
        assert!(!set.contains(&"a"), "the oldest went");
        assert!(set.contains(&"b") && set.contains(&"c") && set.contains(&"d"));
        assert!(set.insert("a"), "a forgotten key is new again");
        assert!(!set.contains(&"b"));
    }

    #[test]
    fn a_duplicate_does_not_refresh_its_place_in_the_window() {
        let mut set = RecentSet::new(2);
        set.insert("a");
        set.insert("b");
        assert!(!set.insert("a"));
        set.insert("c");
        assert!(!set.contains(&"a"));
    }

    #[test]
    fn a_forgotten_key_is_new_again_and_the_others_stay_remembered() {
        let mut set = RecentSet::new(3);
        assert!(set.insert("a"));
        assert!(set.insert("b"));
        set.forget(&"a");
        assert!(!set.contains(&"a"));
        assert!(set.contains(&"b"));
        assert_eq!(set.len(), 1);
        assert!(set.insert("a"), "new again");
        assert!(!set.insert("b"), "still a duplicate");
    }

    #[test]
    fn the_session_window_holds_exactly_4096_messages() {
        let mut set = MessageDedup::default();
        assert!(set.is_empty(), "nothing is held before the first message");
        let msg = |i: usize| InboundMessage {
            chat: "1@s.whatsapp.net".into(),
            message_id: format!("M{i}"),
            ..InboundMessage::default()
        };
        for i in 0..=DEDUP_CAPACITY {
            assert!(set.insert(&MessageKey::of(&msg(i))));
        }
        assert!(!set.insert(&MessageKey::of(&msg(7))), "a duplicate");
        assert_eq!(set.len(), DEDUP_CAPACITY);
        assert!(!set.contains(&MessageKey::of(&msg(0))));
        assert!(set.contains(&MessageKey::of(&msg(1))));
    }

    fn located(chat: &str, id: &str, location: Option<Value>) -> MessageKey {
        MessageKey::of(&InboundMessage {
            chat: chat.into(),
            message_id: id.into(),
            location,
            ..InboundMessage::default()
        })
    }

    #[test]
    fn the_key_is_the_chat_and_the_message_id() {
        assert_eq!(located("a", "M", None), located("a", "M", None));
        assert_ne!(located("a", "M", None), located("b", "M", None));
        assert_ne!(located("a", "M", None), located("a", "N", None));
    }

    #[test]
    fn live_location_updates_differ_by_sequence_number_and_static_locations_do_not() {
        let live = |seq: i64| Some(json!({ "is_live": true, "sequence_number": seq }));
        assert_ne!(located("a", "L", live(1)), located("a", "L", live(2)));
        assert_eq!(located("a", "L", live(2)), located("a", "L", live(2)));
        let fixed = |lat: f64| Some(json!({ "latitude": lat, "is_live": false }));
        assert_eq!(located("a", "L", fixed(1.0)), located("a", "L", fixed(2.0)));
    }
}
