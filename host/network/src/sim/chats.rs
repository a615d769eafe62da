//! Chat operations of the simulated network: the [`ChatOps`] of a sim
//! session's client (the rules are the world's, in `world/actions.rs` and
//! `world/presence.rs`), and the control surface that shows what an account
//! starred.

use async_trait::async_trait;

use super::SimNetwork;
use super::client::SimClient;
use super::world::account_memory::StarredMessage;
use crate::chats::{ChatAction, ChatOps, ChatState, LidPair, MessageAction, MessageKey};
use crate::domain::jid::{Jid, JidKind};
use crate::{NetworkError, SendReceipt};

#[async_trait]
impl ChatOps for SimClient {
    async fn mark_read(
        &self,
        chat: &Jid,
        _sender: Option<&Jid>,
        message_ids: &[String],
    ) -> Result<(), NetworkError> {
        self.world.mark_read(&self.id, chat, message_ids).await
    }

    async fn act(
        &self,
        message_id: &str,
        action: &MessageAction,
    ) -> Result<SendReceipt, NetworkError> {
        self.world.act(&self.id, message_id, action).await
    }

    async fn star(&self, target: &MessageKey, starred: bool) -> Result<(), NetworkError> {
        self.world.star(&self.id, target, starred)
    }

    async fn set_presence(&self, available: bool) -> Result<(), NetworkError> {
        self.world.set_presence(&self.id, available).await
    }

    async fn subscribe_presence(&self, jid: &Jid) -> Result<(), NetworkError> {
        self.world.subscribe_presence(&self.id, jid).await
    }

    async fn send_chat_state(&self, chat: &Jid, state: ChatState) -> Result<(), NetworkError> {
        self.world.send_chat_state(&self.id, chat, state).await
    }

    async fn chat_action(&self, _chat: &Jid, _action: ChatAction) -> Result<(), NetworkError> {
        // A chat action is app state of this account alone; the sim's
        // accounts have one device, so there is no other device to tell and
        // nothing to keep beyond the gateway's own chat list.
        self.world.require_online(&self.id)
    }

    async fn look_up_lid(&self, address: &Jid) -> Result<Option<LidPair>, NetworkError> {
        self.world.require_online(&self.id)?;
        Ok(self.known_lid(address).await)
    }

    async fn known_lid(&self, address: &Jid) -> Option<LidPair> {
        let user = match address.kind() {
            JidKind::Lid => self.world.user_by_lid(&address.to_string()).ok()??,
            JidKind::User => self.world.user(address.user_part()).ok()??,
            _ => return None,
        };
        let lid = Jid::parse(user.lid.as_deref()?).ok()?;
        Some(LidPair {
            lid_user: lid.user_part().to_owned(),
            phone: user.phone,
        })
    }
}

impl SimNetwork {
    /// The messages a session's account starred, by chat and id.
    pub fn starred(&self, session_id: &str) -> Result<Vec<StarredMessage>, NetworkError> {
        self.world.accounts_starred(session_id)
    }
}
