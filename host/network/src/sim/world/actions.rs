//! Actions on earlier messages on the simulated network: revoke, edit and
//! pin go out as messages of their own (kinds `revoke`, `edit`, `pin`,
//! `unpin` in the outbox) and reach the chat's other members as `message`
//! events of those types naming the target in `quoted_message_id`; a
//! forward is the original's content sent again, marked forwarded; read
//! receipts reach the sessions that sent the messages read; stars stay with
//! the account.

use serde_json::json;

use super::{Link, Outgoing, World, internal};
use crate::chats::{MessageAction, MessageKey};
use crate::domain::event::EventName;
use crate::domain::jid::Jid;
use crate::domain::send::{OutboundContent, TextBody};
use crate::domain::sim::OutboxEntry;
use crate::domain::time::unix_now;
use crate::sim::convert::Sender;
use crate::sim::forward::content_of;
use crate::{InboundMessage, NetworkError, SendReceipt};

impl World {
    /// This session's own sent message `target` names, or why it is not one.
    fn own_sent(&self, id: &str, target: &MessageKey) -> Result<OutboxEntry, NetworkError> {
        let entry = self
            .store
            .find_outbox(id, &target.message_id)
            .map_err(internal)?
            .filter(|e| e.to == target.chat.to_string());
        entry.ok_or_else(|| {
            NetworkError::NotFound(format!(
                "message `{}` was not sent by this session in {}",
                target.message_id, target.chat
            ))
        })
    }

    pub(in crate::sim) async fn act(
        &self,
        id: &str,
        message_id: &str,
        action: &MessageAction,
    ) -> Result<SendReceipt, NetworkError> {
        let (target, body, mut template) = match action {
            MessageAction::Forward { to, original } => {
                let content = content_of(original)?;
                return self.send_content(id, message_id, to, &content, true).await;
            }
            MessageAction::ForwardText { to, text } => {
                let content = OutboundContent::Text(TextBody {
                    text: text.clone(),
                    quoted_message_id: None,
                    mentions: Vec::new(),
                });
                return self.send_content(id, message_id, to, &content, true).await;
            }
            MessageAction::Revoke { target } => {
                if target.from_me {
                    self.own_sent(id, target)?;
                } else if !target.chat.is_group() {
                    // Someone else's message is deleted for everyone only in
                    // a group, by an admin: in a one-to-one chat there is
                    // no such message this account could delete.
                    return Err(NetworkError::NotFound(format!(
                        "no message `{}` of someone else that this account could delete in {}: only a group admin deletes others' messages",
                        target.message_id, target.chat
                    )));
                }
                let template = InboundMessage {
                    message_type: "revoke".into(),
                    ..InboundMessage::default()
                };
                (target, json!({ "message_id": target.message_id }), template)
            }
            MessageAction::Edit { target, text } => {
                let original = self.own_sent(id, target)?;
                let mut template = InboundMessage {
                    message_type: "edit".into(),
                    ..InboundMessage::default()
                };
                match original.kind.as_str() {
                    "text" => template.text = Some(text.clone()),
                    "image" | "video" | "document" => template.caption = Some(text.clone()),
                    other => {
                        return Err(NetworkError::Rejected(format!(
                            "a `{other}` message cannot be edited: only texts and the captions of pictures, videos and documents can"
                        )));
                    }
                }
                let body = json!({ "message_id": target.message_id, "text": text });
                (target, body, template)
            }
            MessageAction::Pin {
                target,
                duration_seconds,
            } => {
                if target.from_me {
                    self.own_sent(id, target)?;
                }
                let template = InboundMessage {
                    message_type: action.kind().into(),
                    ..InboundMessage::default()
                };
                let body = json!({
                    "message_id": target.message_id,
                    "duration_seconds": duration_seconds,
                });
                (target, body, template)
            }
        };
        template.quoted_message_id = Some(target.message_id.clone());
        template.quoted_sender_jid = (!target.from_me)
            .then(|| target.sender.as_ref().map(ToString::to_string))
            .flatten();
        let build = |sender: &Sender<'_>, chat: &str, mid: &str, ts: i64, _: Option<&_>| {
            let mut m = template.clone();
            m.message_id = mid.to_owned();
            m.from = sender.jid.to_owned();
            m.participant = sender.jid.to_owned();
            m.push_name = sender.push_name.to_owned();
            m.chat = chat.to_owned();
            m.timestamp = ts;
            m
        };
        let outgoing = Outgoing {
            kind: action.kind(),
            body,
            content: None,
            build: &build,
        };
        self.send_outgoing(id, message_id, &target.chat, outgoing)
            .await
    }

    /// Read receipts: every other session that sent one of `message_ids`
    /// in `chat` gets a `receipt` event of type `read` for the ones it sent.
    pub(in crate::sim) async fn mark_read(
        &self,
        id: &str,
        chat: &Jid,
        message_ids: &[String],
    ) -> Result<(), NetworkError> {
        let me = self.online_account(id)?;
        let peers = self.reached_by(id, &me, chat)?;
        let receipt_chat = if chat.is_group() {
            chat.to_string()
        } else {
            me.jid.clone()
        };
        for peer in peers {
            let mut theirs = Vec::new();
            for m in message_ids {
                if self
                    .store
                    .find_outbox(&peer, m)
                    .map_err(internal)?
                    .is_some()
                {
                    theirs.push(m.clone());
                }
            }
            let online = self
                .with(&peer, |s| s.link == Link::Online)
                .unwrap_or(false);
            if theirs.is_empty() || !online {
                continue;
            }
            let data = json!({
                "message_ids": theirs,
                "chat": receipt_chat,
                "sender": me.jid,
                "type": "read",
                "timestamp": unix_now(),
            });
            // The peer may have gone offline since; a receipt is not queued.
            let _ = self.inject_event(&peer, EventName::Receipt, data).await;
        }
        Ok(())
    }

    /// The messages session `id`'s account starred.
    pub(in crate::sim) fn accounts_starred(
        &self,
        id: &str,
    ) -> Result<Vec<crate::sim::StarredMessage>, NetworkError> {
        self.with(id, |_| ())?;
        Ok(self.accounts.starred(id))
    }

    /// Stars or unstars a message for this account (kept with the account
    /// until the network restarts, as its other app state).
    pub(in crate::sim) fn star(
        &self,
        id: &str,
        target: &MessageKey,
        starred: bool,
    ) -> Result<(), NetworkError> {
        self.online_account(id)?;
        self.accounts
            .set_starred(id, &target.chat.to_string(), &target.message_id, starred);
        Ok(())
    }
}
