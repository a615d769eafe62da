//! Chats as the gateway knows them: one record per chat of a session, kept
//! from the messages it sent and received (the last message, the unread
//! count) and from what the account's devices say of the chat (archived,
//! pinned, muted, marked unread), with the pure rules that update it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{Direction, MessageRecord};

/// Longest preview of a last message's text, in characters.
pub const PREVIEW_CHARS: usize = 120;

/// A chat's most recent message, as its list entry shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LastMessage {
    /// The message id.
    pub message_id: String,
    /// The send kind or inbound `message_type`.
    pub kind: String,
    /// Whether this account sent it (through the gateway or another device).
    pub from_me: bool,
    /// Its sender, when known.
    pub sender: Option<String>,
    /// The start of its text or caption (at most 120 characters).
    pub preview: Option<String>,
    /// Unix seconds.
    pub timestamp: i64,
}

/// One chat of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatRecord {
    /// The chat JID (a user, a group, an `@lid`, a broadcast list).
    pub jid: String,
    /// Whether it is a group.
    pub is_group: bool,
    /// Its most recent message, when the gateway has seen one.
    pub last_message: Option<LastMessage>,
    /// Unix seconds of its most recent message or change.
    pub last_activity: i64,
    /// Messages received since this account last read or wrote in it.
    pub unread_count: u64,
    /// Marked unread by the account (shown unread whatever the count).
    pub marked_unread: bool,
    /// Archived.
    pub archived: bool,
    /// Pinned to the top of the list.
    pub pinned: bool,
    /// Muted.
    pub muted: bool,
    /// Unix seconds when the mute ends; `null` when muted for ever or not muted.
    pub muted_until: Option<i64>,
    /// Messages the gateway holds for it.
    pub message_count: u64,
}

/// The message types that are not a message of their own to read: they act
/// on another (reactions, revokes, edits, pins) and leave the unread count
/// as it is.
const NOT_UNREAD: &[&str] = &["reaction", "revoke", "edit", "pin", "unpin", "poll_vote"];

/// Whether a message of this kind (send kind or inbound `message_type`) is
/// one to read, rather than an act on another message.
pub fn counts_as_unread(kind: &str) -> bool {
    !NOT_UNREAD.contains(&kind)
}

impl ChatRecord {
    /// A chat the gateway has seen nothing of yet.
    pub fn new(jid: &str) -> Self {
        Self {
            jid: jid.to_owned(),
            is_group: jid.ends_with("@g.us"),
            last_message: None,
            last_activity: 0,
            unread_count: 0,
            marked_unread: false,
            archived: false,
            pinned: false,
            muted: false,
            muted_until: None,
            message_count: 0,
        }
    }

    /// Takes in a message of the chat: it becomes the last one (unless an
    /// older one arrives late); one received from someone else counts as
    /// unread, one this account wrote reads the chat (as the phone does).
    /// What it needs of the record's body is in `facts`
    /// ([`BodyFacts::of`] the body); the body itself is not looked at.
    pub fn on_message(&mut self, record: &MessageRecord, facts: &BodyFacts) {
        self.message_count += 1;
        let from_me = match record.direction {
            Direction::Outbound => true,
            Direction::Inbound => facts.is_from_me,
        };
        let counts = counts_as_unread(&record.kind);
        if from_me && counts {
            self.unread_count = 0;
            self.marked_unread = false;
        } else if counts {
            self.unread_count += 1;
        }
        if record.timestamp >= self.last_activity {
            self.last_activity = record.timestamp;
            self.last_message = Some(LastMessage {
                message_id: record.message_id.clone(),
                kind: record.kind.clone(),
                from_me,
                sender: record.sender.clone(),
                preview: facts.preview.clone(),
                timestamp: record.timestamp,
            });
        }
    }

    /// Read: no unread messages, not marked unread.
    pub fn mark_read(&mut self) {
        self.unread_count = 0;
        self.marked_unread = false;
    }

    /// Takes in what one of the account's devices said of the chat (an
    /// `archive_update`, `pin_update`, `mute_update` or `mark_chat_as_read`
    /// event's data); `false` when the event is none of those.
    pub fn on_app_state(&mut self, event: &str, data: &Value) -> bool {
        let flag = |k: &str| data.get(k).and_then(Value::as_bool).unwrap_or(false);
        match event {
            "archive_update" => self.archived = flag("archived"),
            "pin_update" => self.pinned = flag("pinned"),
            "mute_update" => {
                let end = data.get("mute_end_timestamp").and_then(Value::as_i64);
                // The network counts the end in milliseconds; `-1` is for ever.
                self.set_muted(flag("muted"), end.filter(|e| *e > 0).map(|e| e / 1000));
            }
            "mark_chat_as_read" => {
                if flag("read") {
                    self.mark_read();
                } else {
                    self.marked_unread = true;
                }
            }
            _ => return false,
        }
        if let Some(t) = data.get("timestamp").and_then(Value::as_i64) {
            self.last_activity = self.last_activity.max(t);
        }
        true
    }

    /// Muted until `until` (Unix seconds; `None` for ever), or unmuted.
    pub fn set_muted(&mut self, muted: bool, until: Option<i64>) {
        self.muted = muted;
        self.muted_until = if muted { until } else { None };
    }

    /// Whether the mute is over at `now` (a mute with an end that has passed
    /// shows as not muted).
    pub fn refresh_mute(&mut self, now: i64) {
        if self.muted_until.is_some_and(|end| end <= now) {
            self.set_muted(false, None);
        }
    }
}

/// What a chat and its index take from a message record's body, read out
/// once: an inbound message's body can then go on as the event's data
/// instead of being copied for the record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyFacts {
    /// The body's `is_from_me` (for inbound messages).
    pub is_from_me: bool,
    /// The start of its text or caption.
    pub preview: Option<String>,
    /// Its `chat_phone`: the phone of a one-to-one `@lid` chat, when known.
    pub chat_phone: Option<String>,
}

impl BodyFacts {
    /// The facts of `body`.
    pub fn of(body: &Value) -> Self {
        BodyFacts {
            is_from_me: body.get("is_from_me") == Some(&Value::Bool(true)),
            preview: preview(body),
            chat_phone: body
                .get("chat_phone")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// The start of a message's text or caption.
fn preview(body: &Value) -> Option<String> {
    let text = ["text", "caption"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())?;
    Some(text.chars().take(PREVIEW_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(direction: Direction, kind: &str, body: Value, ts: i64) -> MessageRecord {
        MessageRecord {
            message_id: format!("M{ts}"),
            session_id: "s".into(),
            direction,
            chat: "15550001111@s.whatsapp.net".into(),
            sender: None,
            kind: kind.into(),
            body,
            timestamp: ts,
        }
    }

    /// `record` taken into chat `c`, with its body's facts as the store reads them.
    fn take(c: &mut ChatRecord, record: MessageRecord) {
        c.on_message(&record, &BodyFacts::of(&record.body));
    }

    #[test]
    fn received_messages_count_as_unread_until_the_account_writes() {
        let mut c = ChatRecord::new("15550001111@s.whatsapp.net");
        take(
            &mut c,
            message(Direction::Inbound, "text", json!({"text": "a"}), 1),
        );
        take(&mut c, message(Direction::Inbound, "image", json!({}), 2));
        take(
            &mut c,
            message(Direction::Inbound, "reaction", json!({}), 3),
        );
        assert_eq!(c.unread_count, 2, "a reaction is not a message to read");
        assert_eq!(c.message_count, 3);
        take(
            &mut c,
            message(Direction::Outbound, "text", json!({"text": "b"}), 4),
        );
        assert_eq!(c.unread_count, 0);
        let last = c.last_message.unwrap();
        assert_eq!((last.message_id.as_str(), last.from_me), ("M4", true));
        assert_eq!(last.preview.as_deref(), Some("b"));
    }

    #[test]
    fn a_message_from_another_device_of_the_account_reads_the_chat() {
        let mut c = ChatRecord::new("x@s.whatsapp.net");
        take(&mut c, message(Direction::Inbound, "text", json!({}), 1));
        take(
            &mut c,
            message(Direction::Inbound, "text", json!({"is_from_me": true}), 2),
        );
        assert_eq!(c.unread_count, 0);
    }

    #[test]
    fn a_late_older_message_does_not_replace_the_last_one() {
        let mut c = ChatRecord::new("x@s.whatsapp.net");
        take(&mut c, message(Direction::Inbound, "text", json!({}), 5));
        take(&mut c, message(Direction::Inbound, "text", json!({}), 3));
        assert_eq!(c.last_message.unwrap().message_id, "M5");
        assert_eq!(c.last_activity, 5);
    }

    #[test]
    fn app_state_events_set_the_flags_and_a_past_mute_ends() {
        let mut c = ChatRecord::new("1@g.us");
        assert!(c.is_group);
        assert!(c.on_app_state("archive_update", &json!({"archived": true})));
        assert!(c.on_app_state("pin_update", &json!({"pinned": true})));
        assert!(c.on_app_state(
            "mute_update",
            &json!({"muted": true, "mute_end_timestamp": 2_000_000_000_000i64})
        ));
        assert_eq!(
            (c.archived, c.pinned, c.muted, c.muted_until),
            (true, true, true, Some(2_000_000_000))
        );
        assert!(c.on_app_state(
            "mute_update",
            &json!({"muted": true, "mute_end_timestamp": -1})
        ));
        assert_eq!(c.muted_until, None, "-1 is for ever");
        c.set_muted(true, Some(10));
        c.refresh_mute(11);
        assert!(!c.muted);
        assert!(c.on_app_state("mark_chat_as_read", &json!({"read": false})));
        assert!(c.marked_unread);
        c.unread_count = 4;
        assert!(c.on_app_state("mark_chat_as_read", &json!({"read": true})));
        assert_eq!((c.unread_count, c.marked_unread), (0, false));
        assert!(!c.on_app_state("star_update", &json!({})));
    }
}
