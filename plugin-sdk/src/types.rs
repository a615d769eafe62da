//! The typed values a plugin sees and returns: envelopes, sends, recipients,
//! contacts and the decisions of each hook. JSON documents that travel as
//! text in the WIT contract are [`serde_json::Value`]s here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An event envelope as the gateway publishes it (the event filter's input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The session the event belongs to.
    pub session_id: String,
    /// The event name (`message`, `receipt`, …).
    pub event: String,
    /// Unix seconds when the gateway saw the event.
    pub timestamp: i64,
    /// The event data, a JSON object.
    pub data: Value,
    /// Message events only: redelivered from the disconnect window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
}

/// What an event filter decides about one envelope.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum FilterDecision {
    /// Let the envelope through unchanged.
    #[default]
    Keep,
    /// Stop it: no webhook, stream or later filter sees it.
    Drop,
    /// Let it through with this data instead (a JSON object).
    Replace(Value),
}

/// An outbound send before it reaches the network (the message transform's input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outbound {
    /// The sending session.
    pub session_id: String,
    /// The send kind (`text`, `image`, `cta-url`, …).
    pub kind: String,
    /// The request body, including `to`.
    pub body: Value,
}

/// What a message transform decides about one send.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TransformDecision {
    /// Send it as it is.
    #[default]
    Unchanged,
    /// Send this body instead (validated again by the host as the same kind).
    Replace(Value),
    /// Refuse the send; the reason reaches the API caller as a 422.
    Reject(String),
}

/// What a session's contacts directory knows about a JID.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Contact {
    /// The user JID.
    pub jid: String,
    /// Phone digits.
    #[serde(default)]
    pub phone: Option<String>,
    /// Saved address-book name.
    #[serde(default)]
    pub full_name: Option<String>,
    /// Saved first name.
    #[serde(default)]
    pub first_name: Option<String>,
    /// The name the contact set for itself.
    #[serde(default)]
    pub push_name: Option<String>,
    /// Verified business name.
    #[serde(default)]
    pub business_name: Option<String>,
}

impl Contact {
    /// The best name to address the contact by: first name, then full
    /// name, then push name, then business name (blank names are skipped).
    pub fn display_name(&self) -> Option<&str> {
        [
            &self.first_name,
            &self.full_name,
            &self.push_name,
            &self.business_name,
        ]
        .into_iter()
        .filter_map(|n| n.as_deref().map(str::trim))
        .find(|n| !n.is_empty())
    }
}

/// One blast recipient handed to a blast endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Recipient {
    /// The recipient JID.
    pub jid: String,
    /// Phone digits, when the JID is a user JID.
    #[serde(default)]
    pub phone: Option<String>,
    /// What the sending session's contacts directory knows of it.
    #[serde(default)]
    pub contact: Option<Contact>,
}

/// A concrete send of a built-in kind that a blast endpoint expands into.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Send {
    /// A built-in send kind (`text`, `image`, …).
    pub kind: String,
    /// Its body; the host sets `to` to the recipient.
    pub body: Value,
}

impl Send {
    /// A `text` send with this text.
    pub fn text(text: impl Into<String>) -> Send {
        Send {
            kind: "text".into(),
            body: serde_json::json!({ "text": text.into() }),
        }
    }
}

/// Which hooks a plugin implements; the host calls only these. Combine with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hooks {
    /// It filters events ([`Plugin::filter`](crate::Plugin::filter)).
    pub event_filter: bool,
    /// It transforms sends ([`Plugin::transform`](crate::Plugin::transform)).
    pub message_transform: bool,
    /// It serves blast endpoints ([`Plugin::endpoints`](crate::Plugin::endpoints), [`Plugin::expand`](crate::Plugin::expand)).
    pub blast_endpoint: bool,
}

impl Hooks {
    /// No hook (a plugin that only exists, e.g. for tests).
    pub const NONE: Hooks = Hooks {
        event_filter: false,
        message_transform: false,
        blast_endpoint: false,
    };
    /// The event filter hook.
    pub const EVENT_FILTER: Hooks = Hooks {
        event_filter: true,
        ..Hooks::NONE
    };
    /// The message transform hook.
    pub const MESSAGE_TRANSFORM: Hooks = Hooks {
        message_transform: true,
        ..Hooks::NONE
    };
    /// The blast endpoint hook.
    pub const BLAST_ENDPOINT: Hooks = Hooks {
        blast_endpoint: true,
        ..Hooks::NONE
    };
    /// Every hook.
    pub const ALL: Hooks = Hooks {
        event_filter: true,
        message_transform: true,
        blast_endpoint: true,
    };
}

impl std::ops::BitOr for Hooks {
    type Output = Hooks;

    fn bitor(self, rhs: Hooks) -> Hooks {
        Hooks {
            event_filter: self.event_filter || rhs.event_filter,
            message_transform: self.message_transform || rhs.message_transform,
            blast_endpoint: self.blast_endpoint || rhs.blast_endpoint,
        }
    }
}

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Very detailed.
    Trace,
    /// Detailed.
    Debug,
    /// Worth knowing.
    Info,
    /// Something looks wrong.
    Warn,
    /// Something failed.
    Error,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_name_prefers_first_then_full_then_push_name() {
        let mut c = Contact {
            push_name: Some("Pushy".into()),
            ..Contact::default()
        };
        assert_eq!(c.display_name(), Some("Pushy"));
        c.full_name = Some("Greta Garbo".into());
        assert_eq!(c.display_name(), Some("Greta Garbo"));
        c.first_name = Some("  ".into());
        assert_eq!(c.display_name(), Some("Greta Garbo"));
        c.first_name = Some("Greta".into());
        assert_eq!(c.display_name(), Some("Greta"));
    }

    #[test]
    fn hooks_combine_with_or() {
        let h = Hooks::EVENT_FILTER | Hooks::BLAST_ENDPOINT;
        assert!(h.event_filter && h.blast_endpoint && !h.message_transform);
        assert_eq!(
            Hooks::EVENT_FILTER | Hooks::MESSAGE_TRANSFORM | Hooks::BLAST_ENDPOINT,
            Hooks::ALL
        );
    }
}
