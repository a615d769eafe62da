//! Actions on earlier messages: revoke, edit, pin, forward and star. The
//! target's key (who sent it, in which chat) is read from the gateway's
//! record of the message when it has one, and from the request otherwise
//! (a message sent from the phone before the gateway saw it); an action that
//! goes out as a message is recorded like any sent message, under its kind.

use serde_json::{Value, json};

use super::Chats;
use crate::domain::jid::Jid;
use crate::domain::message::{Direction, MessageRecord};
use crate::messages::new_message_id;
use crate::network::NetworkError;
use crate::network::chats::{MessageAction, MessageKey};
use crate::sessions::SessionError;

/// The message an action names, as the request gives it.
#[derive(Debug, Clone)]
pub struct ActionTarget {
    /// Its chat.
    pub chat: Jid,
    /// Its id.
    pub message_id: String,
    /// Whether this account sent it; read from the gateway's record when
    /// not given (and taken as `true` when there is none).
    pub from_me: Option<bool>,
    /// Its author, for a group message of someone else; read from the
    /// gateway's record when not given.
    pub sender: Option<Jid>,
}

/// An action that goes out as a message of its own.
#[derive(Debug, Clone)]
pub enum ActionRequest {
    /// Delete for everyone.
    Revoke(ActionTarget),
    /// Replace the text or caption.
    Edit(ActionTarget, String),
    /// Pin for this many seconds (`0`: unpin).
    Pin(ActionTarget, u32),
    /// Send a copy of the message with this id (the gateway holds its
    /// record) to `to`, marked forwarded.
    Forward {
        /// Where it goes.
        to: Jid,
        /// The message to forward.
        message_id: String,
    },
    /// Send a text marked forwarded.
    ForwardText {
        /// Where it goes.
        to: Jid,
        /// The text.
        text: String,
    },
}

/// Whether a recorded message is this account's own.
fn own(record: &MessageRecord) -> bool {
    record.direction == Direction::Outbound
        || record.body.get("is_from_me") == Some(&Value::Bool(true))
}

/// The author of a recorded group message of someone else.
fn author(record: &MessageRecord) -> Option<Jid> {
    if own(record) {
        return None;
    }
    let participant = record.body.get("participant").and_then(Value::as_str);
    participant
        .or(record.sender.as_deref())
        .and_then(|p| Jid::parse(p).ok())
}

impl Chats {
    /// The network's key of `target`.
    fn key(&self, session_id: &str, target: &ActionTarget) -> Result<MessageKey, SessionError> {
        let record = self.store.message_by_id(session_id, &target.message_id)?;
        let from_me = target.from_me.or(record.as_ref().map(own)).unwrap_or(true);
        let sender = match (&target.sender, from_me) {
            (_, true) => None,
            (Some(s), false) => Some(s.clone()),
            (None, false) => record.as_ref().and_then(author),
        };
        Ok(MessageKey {
            chat: target.chat.clone(),
            message_id: target.message_id.clone(),
            from_me,
            sender,
        })
    }

    /// Sends an action on an earlier message and records it (kind
    /// `revoke`, `edit`, `pin`, `unpin` or `forward`). Paced as the
    /// session's ordinary sends are.
    pub async fn act(
        &self,
        session_id: &str,
        request: ActionRequest,
    ) -> Result<MessageRecord, SessionError> {
        let (client, account) = self.sessions.sender(session_id)?;
        let (action, body) = match request {
            ActionRequest::Revoke(t) => {
                let target = self.key(session_id, &t)?;
                if !target.from_me && !target.chat.is_group() {
                    // Someone else's message is deleted for everyone only
                    // in a group, by an admin (the network has no such
                    // revoke in a one-to-one chat).
                    return Err(SessionError::Network(NetworkError::NotFound(format!(
                        "no message `{}` of someone else that this account could delete in {}: only a group admin deletes others' messages",
                        t.message_id, t.chat
                    ))));
                }
                let body = json!({ "message_id": t.message_id });
                (MessageAction::Revoke { target }, body)
            }
            ActionRequest::Edit(t, text) => {
                let target = self.key(session_id, &t)?;
                if !target.from_me {
                    return Err(SessionError::Conflict {
                        code: "message_not_editable",
                        message: format!(
                            "message `{}` is someone else's; only this account's own messages can be edited",
                            t.message_id
                        ),
                    });
                }
                let body = json!({ "message_id": t.message_id, "text": text });
                (MessageAction::Edit { target, text }, body)
            }
            ActionRequest::Pin(t, duration_seconds) => {
                let target = self.key(session_id, &t)?;
                let body = json!({
                    "message_id": t.message_id,
                    "duration_seconds": duration_seconds,
                });
                let action = MessageAction::Pin {
                    target,
                    duration_seconds,
                };
                (action, body)
            }
            ActionRequest::Forward { to, message_id } => {
                let original = self
                    .store
                    .message_by_id(session_id, &message_id)?
                    .ok_or_else(|| {
                        SessionError::Network(NetworkError::NotFound(format!(
                            "session `{session_id}` holds no message `{message_id}`"
                        )))
                    })?;
                let text = ["text", "caption"]
                    .iter()
                    .find_map(|k| original.body.get(*k).cloned());
                let body = json!({
                    "message_id": message_id,
                    "kind": original.kind,
                    "text": text,
                });
                let action = MessageAction::Forward {
                    to,
                    original: Box::new(original),
                };
                (action, body)
            }
            ActionRequest::ForwardText { to, text } => {
                let body = json!({ "text": text });
                (MessageAction::ForwardText { to, text }, body)
            }
        };
        // Paced like an ordinary send, once nothing else can refuse it.
        let (client, account) = self
            .pacer
            .pace(&self.sessions, session_id, (client, account))
            .await?;
        let receipt = client.act(&new_message_id(), &action).await?;
        let record = MessageRecord {
            message_id: receipt.message_id,
            session_id: session_id.to_owned(),
            direction: Direction::Outbound,
            chat: action.chat().to_string(),
            sender: account.map(|a| a.jid),
            kind: action.kind().to_owned(),
            body,
            timestamp: receipt.timestamp,
        };
        // The network has it: a failure to record it must not turn into a
        // retry that acts twice, so it is logged, not returned.
        if let Err(e) = self.store.append_message_async(&record).await {
            tracing::error!(session = %session_id, message_id = %record.message_id, error = %e, "message action could not be recorded");
        }
        tracing::info!(session = %session_id, kind = %record.kind, message_id = %record.message_id, "message action sent");
        Ok(record)
    }

    /// Stars or unstars a message for this account.
    pub async fn star(
        &self,
        session_id: &str,
        target: ActionTarget,
        starred: bool,
    ) -> Result<(), SessionError> {
        let (client, _) = self.sessions.sender(session_id)?;
        let key = self.key(session_id, &target)?;
        client.star(&key, starred).await?;
        Ok(())
    }
}
