//! Presence and typing on the simulated network: an account's availability
//! reaches the sessions subscribed to it as `presence` events (a subscriber
//! is told the current state at once, as a real server answers a
//! subscription), and typing in a chat reaches its other members as
//! `chat_presence` events, shaped as the real backend maps them.

use serde_json::json;

use super::{Link, World};
use crate::NetworkError;
use crate::chats::ChatState;
use crate::domain::event::EventName;
use crate::domain::jid::Jid;
use crate::domain::time::unix_now;

impl World {
    /// The `presence` data of the account of session `id`.
    fn presence_data(&self, id: &str, jid: &str) -> serde_json::Value {
        let (available, since) = self.accounts.presence(id);
        json!({
            "jid": jid,
            "available": available,
            "last_seen": if available { None } else { since },
        })
    }

    /// The online session whose account is `jid`, if any.
    fn session_of(&self, jid: &str) -> Option<String> {
        self.lock().iter().find_map(|(id, s)| {
            s.account
                .as_ref()
                .is_some_and(|a| a.jid == jid)
                .then(|| id.clone())
        })
    }

    pub(in crate::sim) async fn set_presence(
        &self,
        id: &str,
        available: bool,
    ) -> Result<(), NetworkError> {
        let me = self.online_account(id)?;
        self.accounts.set_presence(id, available, unix_now());
        let data = self.presence_data(id, &me.jid);
        for subscriber in self.accounts.subscribers(&me.jid) {
            if subscriber != id {
                // A subscriber that went offline since misses it, as on a real network.
                let _ = self
                    .inject_event(&subscriber, EventName::Presence, data.clone())
                    .await;
            }
        }
        Ok(())
    }

    pub(in crate::sim) async fn subscribe_presence(
        &self,
        id: &str,
        jid: &Jid,
    ) -> Result<(), NetworkError> {
        self.online_account(id)?;
        let jid = jid.to_string();
        self.accounts.subscribe(id, &jid);
        if let Some(theirs) = self.session_of(&jid) {
            let data = self.presence_data(&theirs, &jid);
            self.inject_event(id, EventName::Presence, data).await?;
        }
        Ok(())
    }

    pub(in crate::sim) async fn send_chat_state(
        &self,
        id: &str,
        chat: &Jid,
        state: ChatState,
    ) -> Result<(), NetworkError> {
        let me = self.online_account(id)?;
        let peers = self.reached_by(id, &me, chat)?;
        let seen_chat = if chat.is_group() {
            chat.to_string()
        } else {
            me.jid.clone()
        };
        let (state, media) = match state {
            ChatState::Composing => ("composing", "text"),
            ChatState::Recording => ("composing", "audio"),
            ChatState::Paused => ("paused", "text"),
        };
        let data = json!({
            "chat": seen_chat,
            "sender": me.jid,
            "state": state,
            "media": media,
        });
        for peer in peers {
            if self
                .with(&peer, |s| s.link == Link::Online)
                .unwrap_or(false)
            {
                let _ = self
                    .inject_event(&peer, EventName::ChatPresence, data.clone())
                    .await;
            }
        }
        Ok(())
    }
}
