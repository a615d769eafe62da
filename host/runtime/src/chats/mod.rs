//! Chats: the list and each chat's history (from the records the store
//! indexes as messages are stored), read receipts, and the chat-level
//! actions, which go to the network first and into the chat record once it
//! took them. Actions on messages are in `actions.rs`, presence and typing
//! in `presence.rs`, the `@lid` lookups in `identity.rs`.

mod actions;
mod identity;
mod presence;

pub use actions::{ActionRequest, ActionTarget};
pub use identity::{LidAnswer, LidSource};

use std::collections::BTreeMap;

use crate::domain::chat::{ChatRecord, counts_as_unread};
use crate::domain::jid::Jid;
use crate::domain::message::Direction;
use crate::domain::time::unix_now;
use crate::messages::Pacer;
use crate::network::chats::ChatAction;
use crate::sessions::{SessionError, Sessions};
use crate::store::{ChatPage, Store};

/// Most messages a whole-chat read looks back over for the unread ones.
const READ_LOOKBACK: usize = 1000;

/// One page of a session's chats.
#[derive(Debug, Clone)]
pub struct ChatList {
    /// The chats of the page: pinned first, then by most recent activity.
    pub chats: Vec<ChatRecord>,
    /// Chats in all (after the filter).
    pub total: usize,
}

/// Which chats a list shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatFilter {
    /// Only archived chats (`Some(true)`), only the others (`Some(false)`), or all.
    pub archived: Option<bool>,
    /// Only chats with unread messages (or marked unread).
    pub unread_only: bool,
}

/// The chats service; cheap to clone.
#[derive(Clone)]
pub struct Chats {
    sessions: Sessions,
    store: Store,
    pacer: Pacer,
}

impl Chats {
    /// The service over the session registry and the store.
    pub fn new(sessions: Sessions, store: Store) -> Self {
        Self {
            sessions,
            store,
            pacer: Pacer::default(),
        }
    }

    /// The same service pacing the actions that go out as messages by
    /// `pacer`, the send core's ([`crate::messages::SendCore::pacer`]), so a
    /// session's sends and actions share one pace; none are paced by default.
    pub fn with_pacing(mut self, pacer: Pacer) -> Self {
        self.pacer = pacer;
        self
    }

    /// One page of a session's chats (local data: any connection state).
    pub fn list(
        &self,
        session_id: &str,
        filter: ChatFilter,
        limit: usize,
        offset: usize,
    ) -> Result<ChatList, SessionError> {
        self.sessions.client(session_id)?;
        let now = unix_now();
        let mut all: Vec<ChatRecord> = self
            .store
            .list_chats(session_id)?
            .into_iter()
            .map(|mut c| {
                c.refresh_mute(now);
                c
            })
            .filter(|c| filter.archived.is_none_or(|a| c.archived == a))
            .filter(|c| !filter.unread_only || c.unread_count > 0 || c.marked_unread)
            .collect();
        all.sort_by(|a, b| {
            b.pinned
                .cmp(&a.pinned)
                .then(b.last_activity.cmp(&a.last_activity))
                .then(a.jid.cmp(&b.jid))
        });
        let total = all.len();
        let chats = all.into_iter().skip(offset).take(limit).collect();
        Ok(ChatList { chats, total })
    }

    /// One chat; `NotFound` when the gateway knows nothing of it.
    pub fn get(&self, session_id: &str, chat: &Jid) -> Result<ChatRecord, SessionError> {
        self.sessions.client(session_id)?;
        let mut c = self
            .store
            .chat(
                session_id,
                &self.store.chat_key(session_id, &chat.to_string())?,
            )?
            .ok_or_else(|| no_chat(session_id, chat))?;
        c.refresh_mute(unix_now());
        Ok(c)
    }

    /// One page of a chat's messages, newest first (`before`: the previous
    /// page's cursor).
    pub fn history(
        &self,
        session_id: &str,
        chat: &Jid,
        before: Option<u64>,
        limit: usize,
    ) -> Result<ChatPage, SessionError> {
        self.sessions.client(session_id)?;
        Ok(self.store.chat_messages(
            session_id,
            &self.store.chat_key(session_id, &chat.to_string())?,
            before,
            limit,
        )?)
    }

    /// Sends read receipts for `message_ids` of `chat` (`sender`: their
    /// author in a group), or, without ids, for the chat's unread received
    /// messages; the chat reads as read. Returns the ids read.
    pub async fn mark_read(
        &self,
        session_id: &str,
        chat: &Jid,
        sender: Option<&Jid>,
        message_ids: Option<Vec<String>>,
    ) -> Result<Vec<String>, SessionError> {
        let (client, _) = self.sessions.sender(session_id)?;
        let read = match message_ids {
            Some(ids) if sender.is_some() || !chat.is_group() => {
                client.mark_read(chat, sender, &ids).await?;
                ids
            }
            ids => {
                let groups = match ids {
                    Some(ids) => self.authors(session_id, &ids)?,
                    None => self.unread(session_id, chat)?,
                };
                let mut all = Vec::new();
                for (author, ids) in groups {
                    let author = author.as_deref().and_then(|a| Jid::parse(a).ok());
                    let author = author.as_ref().filter(|_| chat.is_group());
                    client.mark_read(chat, author, &ids).await?;
                    all.extend(ids);
                }
                all
            }
        };
        // Receipts for a chat the gateway holds nothing of make no record.
        // The chat as the gateway lists it (an `@lid` by its phone when known).
        let jid = self.store.chat_key(session_id, &chat.to_string())?;
        if self.store.chat(session_id, &jid)?.is_some() {
            self.store
                .update_chat(session_id, &jid, ChatRecord::mark_read)?;
        }
        Ok(read)
    }

    /// The authors of messages `ids` of a group chat, from the gateway's
    /// records (a read receipt in a group names each message's author);
    /// ids it holds no record of go without one.
    fn authors(
        &self,
        session_id: &str,
        ids: &[String],
    ) -> Result<BTreeMap<Option<String>, Vec<String>>, SessionError> {
        let mut by_author: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        for id in ids {
            let author = self
                .store
                .message_by_id(session_id, id)?
                .and_then(|m| author_of(&m));
            by_author.entry(author).or_default().push(id.clone());
        }
        Ok(by_author)
    }

    /// The chat's unread received messages, grouped by author (read
    /// receipts in a group name the author).
    fn unread(
        &self,
        session_id: &str,
        chat: &Jid,
    ) -> Result<BTreeMap<Option<String>, Vec<String>>, SessionError> {
        // The chat as the gateway lists it (an `@lid` by its phone when known).
        let jid = self.store.chat_key(session_id, &chat.to_string())?;
        let unread = self
            .store
            .chat(session_id, &jid)?
            .map(|c| c.unread_count as usize)
            .unwrap_or(0);
        let mut by_author: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        if unread == 0 {
            return Ok(by_author);
        }
        // Newest first, past what does not count as unread (reactions,
        // edits, this account's own), until the count is met.
        let (mut found, mut seen, mut cursor) = (0, 0, None);
        while found < unread && seen < READ_LOOKBACK {
            let page = self.store.chat_messages(session_id, &jid, cursor, 100)?;
            for m in &page.messages {
                seen += 1;
                let from_me = m.body.get("is_from_me") == Some(&serde_json::Value::Bool(true));
                if m.direction == Direction::Inbound && !from_me && counts_as_unread(&m.kind) {
                    by_author
                        .entry(author_of(m))
                        .or_default()
                        .push(m.message_id.clone());
                    found += 1;
                    if found == unread {
                        break;
                    }
                }
            }
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        Ok(by_author)
    }

    /// Applies a chat-level action on the network, then to the chat record
    /// (deleting a chat deletes its history from the gateway too).
    pub async fn chat_action(
        &self,
        session_id: &str,
        chat: &Jid,
        action: ChatAction,
    ) -> Result<Option<ChatRecord>, SessionError> {
        let (client, _) = self.sessions.sender(session_id)?;
        client.chat_action(chat, action).await?;
        // The chat as the gateway lists it (an `@lid` by its phone when known).
        let jid = self.store.chat_key(session_id, &chat.to_string())?;
        if action == ChatAction::Delete {
            self.store.delete_chat(session_id, &jid)?;
            return Ok(None);
        }
        let c = self.store.update_chat(session_id, &jid, |c| match action {
            ChatAction::Archive(a) => c.archived = a,
            ChatAction::Pin(p) => c.pinned = p,
            ChatAction::Mute(until) => c.set_muted(true, until),
            ChatAction::Unmute => c.set_muted(false, None),
            ChatAction::MarkUnread(true) => c.marked_unread = true,
            ChatAction::MarkUnread(false) => c.mark_read(),
            ChatAction::Delete => {}
        })?;
        Ok(Some(c))
    }
}

/// The author of a received message (its `participant`, the sender within
/// the chat).
fn author_of(m: &crate::domain::message::MessageRecord) -> Option<String> {
    m.body
        .get("participant")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

fn no_chat(session_id: &str, chat: &Jid) -> SessionError {
    SessionError::Network(crate::network::NetworkError::NotFound(format!(
        "session `{session_id}` has no chat with {chat}"
    )))
}
