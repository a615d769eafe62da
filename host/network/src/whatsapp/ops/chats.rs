//! Chat operations of a whatsapp session: read receipts
//! (`Client::mark_as_read`), actions on earlier messages sent as messages
//! under the gateway's id (built in `actions.rs`; a forward and a caption
//! edit read the original from the session's kept history), stars and
//! chat-level actions as app-state mutations (`chat_actions()`), presence
//! (`presence()`), typing (`chatstate()`), and the LID-to-phone mapping (the
//! crate's, else a usync query).

use async_trait::async_trait;
use whatsapp_rust::wacore_binary::jid::JidExt;
use whatsapp_rust::{AppStateError, ChatStateType, Client, PresenceStatus, RevokeType};

use crate::chats::{ChatAction, ChatOps, ChatState, LidPair, MessageAction, MessageKey};
use crate::domain::jid::{Jid, JidKind};
use crate::domain::time::unix_now_ms;
use crate::whatsapp::map::contact_lookups::contact_error;
use crate::whatsapp::send::{send_built, wa_jid};
use crate::whatsapp::session::WaSession;
use crate::whatsapp::{actions, chat_timers, history};
use crate::{NetworkError, SendReceipt};

fn app_state_error(what: &str, e: &AppStateError) -> NetworkError {
    match e {
        AppStateError::InvalidRequest(m) => NetworkError::Rejected(format!("{what}: {m}")),
        other => NetworkError::Failed(format!("{what} failed: {other}")),
    }
}

/// The crate's typing state for ours.
pub fn chat_state(state: ChatState) -> ChatStateType {
    match state {
        ChatState::Composing => ChatStateType::Composing,
        ChatState::Recording => ChatStateType::Recording,
        ChatState::Paused => ChatStateType::Paused,
    }
}

impl WaSession {
    /// The kept message an action needs, or why it cannot be had.
    async fn kept_message(&self, message_id: &str) -> Result<history::Quoted, NetworkError> {
        history::kept(&self.inner.store, &self.inner.id, message_id)
            .await
            .ok_or_else(|| {
                NetworkError::NotFound(format!(
                    "message `{message_id}` is not in this session's kept history (the most recent messages sent and received are kept); it cannot be forwarded"
                ))
            })
    }

    async fn built_action(
        &self,
        client: &Client,
        action: &MessageAction,
    ) -> Result<whatsapp_rust::waproto::whatsapp::Message, NetworkError> {
        Ok(match action {
            MessageAction::Revoke { target } => actions::revoke(target),
            MessageAction::Edit { target, text } => {
                let chat = wa_jid(&target.chat)?;
                let own = history::own_participant(client, &chat).await?;
                let original = history::kept(&self.inner.store, &self.inner.id, &target.message_id)
                    .await
                    .map(|q| q.message);
                actions::edit(target, own, text, original.as_ref(), unix_now_ms())
            }
            MessageAction::Pin {
                target,
                duration_seconds,
            } => actions::pin(target, *duration_seconds, unix_now_ms()),
            MessageAction::Forward { original, .. } => {
                actions::forward(&self.kept_message(&original.message_id).await?.message)
            }
            MessageAction::ForwardText { text, .. } => actions::forward_text(text),
        })
    }
}

#[async_trait]
impl ChatOps for WaSession {
    async fn mark_read(
        &self,
        chat: &Jid,
        sender: Option<&Jid>,
        message_ids: &[String],
    ) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        let chat = wa_jid(chat)?;
        let sender = sender.map(wa_jid).transpose()?;
        let ids: Vec<&str> = message_ids.iter().map(String::as_str).collect();
        client
            .mark_as_read(&chat, sender.as_ref(), &ids)
            .await
            .map_err(|e| NetworkError::Failed(format!("the read receipt was not sent: {e}")))
    }

    async fn act(
        &self,
        message_id: &str,
        action: &MessageAction,
    ) -> Result<SendReceipt, NetworkError> {
        let client = self.logged_in().await?;
        let to = wa_jid(action.chat())?;
        if let MessageAction::Revoke { target } = action
            && !target.from_me
            && let Some(author) = &target.sender
        {
            // An admin revoke needs the group's sender keys sent along
            // (WhatsApp Web's shape), which only the crate's own revoke
            // does; its stanza id is the crate's, so the gateway's id names
            // the action in the gateway's records only.
            client
                .revoke_message(
                    to,
                    target.message_id.clone(),
                    RevokeType::Admin {
                        original_sender: wa_jid(author)?,
                    },
                )
                .await
                .map_err(|e| NetworkError::Failed(format!("the revoke was not sent: {e}")))?;
            return Ok(SendReceipt {
                message_id: message_id.to_owned(),
                timestamp: crate::domain::time::unix_now(),
            });
        }
        let message = self.built_action(&client, action).await?;
        // A forward is a message of the chat, with its timer; a revoke, an
        // edit or a pin acts on one and carries none.
        let timer = match action {
            MessageAction::Forward { .. } | MessageAction::ForwardText { .. } => {
                chat_timers::of_chat(&client, &self.inner.store, &self.inner.id, &to).await
            }
            _ => None,
        };
        send_built(
            &client,
            &self.inner.store,
            &self.inner.id,
            message_id,
            &to,
            message,
            timer,
            self.inner.config.send_ack_wait,
        )
        .await
    }

    async fn star(&self, target: &MessageKey, starred: bool) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        let chat = wa_jid(&target.chat)?;
        let participant = match (&target.sender, target.from_me, chat.is_group()) {
            (Some(s), false, true) => Some(wa_jid(s)?),
            _ => None,
        };
        let actions = client.chat_actions();
        let done = if starred {
            actions
                .star_message(
                    &chat,
                    participant.as_ref(),
                    &target.message_id,
                    target.from_me,
                )
                .await
        } else {
            actions
                .unstar_message(
                    &chat,
                    participant.as_ref(),
                    &target.message_id,
                    target.from_me,
                )
                .await
        };
        done.map_err(|e| app_state_error("the star", &e))
    }

    async fn set_presence(&self, available: bool) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        let status = if available {
            PresenceStatus::Available
        } else {
            PresenceStatus::Unavailable
        };
        client
            .presence()
            .set(status)
            .await
            .map_err(|e| NetworkError::Failed(format!("the presence was not sent: {e}")))
    }

    async fn subscribe_presence(&self, jid: &Jid) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        client
            .presence()
            .subscribe(wa_jid(jid)?)
            .await
            .map_err(|e| NetworkError::Failed(format!("the presence subscription failed: {e}")))
    }

    async fn send_chat_state(&self, chat: &Jid, state: ChatState) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        client
            .chatstate()
            .send(&wa_jid(chat)?, chat_state(state))
            .await
            .map_err(|e| NetworkError::Failed(format!("the typing state was not sent: {e}")))
    }

    async fn chat_action(&self, chat: &Jid, action: ChatAction) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        let jid = wa_jid(chat)?;
        let a = client.chat_actions();
        let done = match action {
            ChatAction::Archive(true) => a.archive_chat(&jid, None).await,
            ChatAction::Archive(false) => a.unarchive_chat(&jid, None).await,
            ChatAction::Pin(true) => a.pin_chat(&jid).await,
            ChatAction::Pin(false) => a.unpin_chat(&jid).await,
            ChatAction::Mute(None) => a.mute_chat(&jid).await,
            ChatAction::Mute(Some(until)) => {
                a.mute_chat_until(&jid, until.saturating_mul(1000)).await
            }
            ChatAction::Unmute => a.unmute_chat(&jid).await,
            ChatAction::MarkUnread(unread) => a.mark_chat_as_read(&jid, !unread, None).await,
            ChatAction::Delete => a.delete_chat(&jid, false, None).await,
        };
        done.map_err(|e| app_state_error("the chat action", &e))
    }

    async fn look_up_lid(&self, address: &Jid) -> Result<Option<LidPair>, NetworkError> {
        if let Some(pair) = self.known_lid(address).await {
            return Ok(Some(pair));
        }
        let client = self.logged_in().await?;
        let asked = wa_jid(address)?;
        let results = client
            .contacts()
            .is_on_whatsapp(std::slice::from_ref(&asked))
            .await
            .map_err(|e| contact_error("the LID lookup", &e))?;
        let pair = results.iter().find_map(|r| {
            let (lid, pn) = match (address.kind(), &r.lid, &r.pn_jid) {
                (JidKind::Lid, _, Some(pn)) => (asked.clone(), pn.clone()),
                (JidKind::User, Some(lid), _) => (lid.clone(), asked.clone()),
                _ => return None,
            };
            Some(LidPair {
                lid_user: lid.user.to_string(),
                phone: pn.user.to_string(),
            })
        });
        Ok(pair)
    }

    async fn known_lid(&self, address: &Jid) -> Option<LidPair> {
        let client = self.client().await.ok()?;
        let jid = wa_jid(address).ok()?;
        let entry = client.get_lid_pn_entry(&jid).await.ok()??;
        Some(LidPair {
            lid_user: entry.lid.to_string(),
            phone: entry.phone_number.to_string(),
        })
    }
}
