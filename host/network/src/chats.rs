//! Chat operations a network serves for a session: actions on messages
//! already sent (revoke, edit, pin, forward, star, read receipts), the
//! account's presence and its typing state in a chat, the chat-level
//! app-state actions (archive, pin, mute, mark unread, delete), and the
//! identity lookups between an `@lid` and a phone number.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::{NetworkError, SendReceipt};
use crate::domain::jid::Jid;
use crate::domain::message::MessageRecord;

/// The key of an earlier message: what the network needs to name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageKey {
    /// The chat it is in.
    pub chat: Jid,
    /// Its id.
    pub message_id: String,
    /// Whether this account sent it.
    pub from_me: bool,
    /// Who sent it, for a group message of someone else (`None` otherwise).
    pub sender: Option<Jid>,
}

/// An action on an earlier message that goes out as a message of its own
/// (the network gives it an id and delivers it to the chat).
#[derive(Debug, Clone, PartialEq)]
pub enum MessageAction {
    /// Deletes the message for everyone: this account's own message, or, as
    /// a group admin, someone else's (`target.from_me` false, `target.sender` set).
    Revoke {
        /// The message to delete.
        target: MessageKey,
    },
    /// Replaces the text (or the caption) of this account's own message.
    Edit {
        /// The message to edit.
        target: MessageKey,
        /// The new text.
        text: String,
    },
    /// Pins the message in its chat for everyone, or unpins it.
    Pin {
        /// The message to pin.
        target: MessageKey,
        /// How long it stays pinned, in seconds; `0` unpins it.
        duration_seconds: u32,
    },
    /// Sends a copy of a stored message to another chat, marked forwarded.
    Forward {
        /// The chat it goes to.
        to: Jid,
        /// The gateway's record of the message.
        original: Box<MessageRecord>,
    },
    /// Sends a text marked as forwarded (the shape waxum's clients use).
    ForwardText {
        /// The chat it goes to.
        to: Jid,
        /// The text.
        text: String,
    },
}

impl MessageAction {
    /// The chat the action message goes to.
    pub fn chat(&self) -> &Jid {
        match self {
            Self::Revoke { target } | Self::Edit { target, .. } | Self::Pin { target, .. } => {
                &target.chat
            }
            Self::Forward { to, .. } | Self::ForwardText { to, .. } => to,
        }
    }

    /// The name the action is recorded and delivered under (`revoke`, `edit`,
    /// `pin`, `unpin`, `forward`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Revoke { .. } => "revoke",
            Self::Edit { .. } => "edit",
            Self::Pin {
                duration_seconds: 0,
                ..
            } => "unpin",
            Self::Pin { .. } => "pin",
            Self::Forward { .. } | Self::ForwardText { .. } => "forward",
        }
    }
}

/// The typing state shown in a chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChatState {
    /// Typing.
    Composing,
    /// Recording a voice note.
    Recording,
    /// Stopped typing or recording.
    Paused,
}

/// A chat-level action, kept in the account's app state (every linked
/// device sees it; the other party does not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatAction {
    /// Archives (`true`) or unarchives the chat.
    Archive(bool),
    /// Pins (`true`) the chat to the top of the list, or unpins it.
    Pin(bool),
    /// Mutes the chat until these Unix seconds (`None`: for ever).
    Mute(Option<i64>),
    /// Unmutes the chat.
    Unmute,
    /// Marks the chat unread (`true`) or read.
    MarkUnread(bool),
    /// Deletes the chat from this account's chat list.
    Delete,
}

/// The two addresses of one account, as far as they are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LidPair {
    /// The part before `@lid`.
    pub lid_user: String,
    /// The phone digits.
    pub phone: String,
}

/// Chat operations (see the module documentation).
#[async_trait]
pub trait ChatOps {
    /// Sends read receipts for these messages of `chat`; `sender` names
    /// their author in a group.
    async fn mark_read(
        &self,
        chat: &Jid,
        sender: Option<&Jid>,
        message_ids: &[String],
    ) -> Result<(), NetworkError>;

    /// Sends `action` under `message_id` (chosen by the gateway, as for
    /// every send).
    async fn act(
        &self,
        message_id: &str,
        action: &MessageAction,
    ) -> Result<SendReceipt, NetworkError>;

    /// Stars (`true`) or unstars a message for this account.
    async fn star(&self, target: &MessageKey, starred: bool) -> Result<(), NetworkError>;

    /// Shows the account as available (online) or unavailable to the
    /// contacts subscribed to its presence.
    async fn set_presence(&self, available: bool) -> Result<(), NetworkError>;

    /// Asks to be told when `jid` comes online or goes offline (`presence`
    /// events).
    async fn subscribe_presence(&self, jid: &Jid) -> Result<(), NetworkError>;

    /// Shows typing, recording or neither in `chat`.
    async fn send_chat_state(&self, chat: &Jid, state: ChatState) -> Result<(), NetworkError>;

    /// Applies a chat-level action.
    async fn chat_action(&self, chat: &Jid, action: ChatAction) -> Result<(), NetworkError>;

    /// What the network says of an `@lid` (`lid_user`, the part before
    /// `@lid`) or a phone number: the pair when it knows both, `None` when
    /// it does not.
    async fn look_up_lid(&self, address: &Jid) -> Result<Option<LidPair>, NetworkError>;

    /// What this session's client already knows of an address's other half,
    /// without asking the network (a send's answer carries it).
    async fn known_lid(&self, address: &Jid) -> Option<LidPair>;
}
