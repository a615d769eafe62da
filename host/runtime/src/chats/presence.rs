//! Presence and typing: the account shown available or unavailable, a
//! subscription to a contact's presence, and typing, recording or neither
//! in a chat. They go to the network only; what the network says back
//! arrives as `presence` and `chat_presence` events.

use super::Chats;
use crate::domain::jid::Jid;
use crate::network::chats::ChatState;
use crate::sessions::SessionError;

impl Chats {
    /// Shows the account available or unavailable.
    pub async fn set_presence(
        &self,
        session_id: &str,
        available: bool,
    ) -> Result<(), SessionError> {
        let (client, _) = self.sessions.sender(session_id)?;
        Ok(client.set_presence(available).await?)
    }

    /// Subscribes to `jid`'s presence.
    pub async fn subscribe_presence(
        &self,
        session_id: &str,
        jid: &Jid,
    ) -> Result<(), SessionError> {
        let (client, _) = self.sessions.sender(session_id)?;
        Ok(client.subscribe_presence(jid).await?)
    }

    /// Shows `state` in `chat`.
    pub async fn send_chat_state(
        &self,
        session_id: &str,
        chat: &Jid,
        state: ChatState,
    ) -> Result<(), SessionError> {
        let (client, _) = self.sessions.sender(session_id)?;
        Ok(client.send_chat_state(chat, state).await?)
    }
}
