//! The one seam to the outside world. A [`Network`] backend attaches sessions
//! and hands back a [`NetworkSession`] client per session; everything the
//! network tells a session arrives as a typed [`NetworkEvent`] on the channel
//! given at attach time, and the `sessions` module turns those into envelopes.
//!
//! Backends: [`sim`] (the simulated network, always built) and, behind the
//! `whatsapp` feature, the real network. Capabilities beyond messaging join
//! [`NetworkSession`] as supertraits, one file each ([`groups`], [`contacts`],
//! [`account`], [`media`], [`chats`]).

pub mod account;
pub mod chats;
pub mod contacts;
pub mod groups;
pub mod media;
pub mod profile;
pub mod receipt;
pub mod sim;
pub mod whatsapp;

use std::sync::Arc;

use switchboard_domain as domain;
use switchboard_media as media_store;
use switchboard_store as store;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::domain::event::EventName;
use crate::domain::jid::Jid;
use crate::domain::send::OutboundContent;
use crate::domain::session::Account;
pub use receipt::{NotStored, StoredAnswer, StoredReceipt};

/// A failure reported by a network backend.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NetworkError {
    /// The session has no live, authenticated connection.
    #[error("the session is not connected to the network")]
    NotConnected,
    /// The request does not fit the session's current state (for example a
    /// pair code for a session that is already paired).
    #[error("{0}")]
    InvalidState(String),
    /// Something the request names does not exist on the network.
    #[error("{0}")]
    NotFound(String),
    /// The network refused the request; retrying the same request will not help.
    #[error("{0}")]
    Rejected(String),
    /// WhatsApp refused a message because the account is under a reach-out
    /// timelock (its error 463): until the lock ends the account may not
    /// start conversations with people it has no chat with. Not the
    /// message's fault: the same send can go once the lock is over.
    #[error("{}", timelock_message(*.until))]
    ReachOutTimelock {
        /// Unix seconds when the lock ends, when the network stated it.
        until: Option<i64>,
    },
    /// The network failed; a later attempt can succeed.
    #[error("{0}")]
    Failed(String),
    /// This backend cannot do what was asked (the message says what and why).
    #[error("{0}")]
    NotSupported(String),
    /// The gateway could not keep what the network sent or asked for: its
    /// storage failed (the kind says how); nothing was acknowledged.
    #[error("{1}")]
    Storage(crate::domain::storage_fault::StorageFault, String),
}

/// What a reach-out refusal says, with its end when known.
fn timelock_message(until: Option<i64>) -> String {
    let end = match until {
        Some(t) => format!("until {}", crate::domain::time::iso8601(t)),
        None => "for a time WhatsApp did not state".to_owned(),
    };
    format!(
        "WhatsApp refused the message (error 463): the account is under a reach-out timelock {end} and may not message people it has no chat with meanwhile"
    )
}

/// Where a backend sends a session's events. Bounded: a backend awaits room, so
/// a slow intake slows the network side instead of growing memory.
pub type EventSink = mpsc::Sender<NetworkEvent>;

/// Capacity of each session's event channel.
pub const EVENT_CHANNEL_CAPACITY: usize = 1024;

/// What a backend needs to know to attach a session.
#[derive(Debug, Clone)]
pub struct AttachSpec {
    /// The session id.
    pub session_id: String,
    /// The linked account when the session was paired before (restored credentials).
    pub account: Option<Account>,
    /// Simulated network only: the phone number the account should get.
    pub phone_hint: Option<String>,
    /// The operator's label, used by the simulated network as the push name.
    pub name: Option<String>,
}

/// The result of a send accepted by the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendReceipt {
    /// The id the network gave the message.
    pub message_id: String,
    /// Unix seconds the network stamped on it.
    pub timestamp: i64,
}

/// An inbound message, as the network decoded it (before the gateway's own
/// enrichment such as the lid-to-phone lookup).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InboundMessage {
    /// The network's message id.
    pub message_id: String,
    /// The raw sender address (a user JID or an `@lid`).
    pub from: String,
    /// The sender's phone digits when the network supplied them alongside an `@lid`.
    pub from_phone: Option<String>,
    /// The chat JID.
    pub chat: String,
    /// The sender JID within the chat (equals `from` outside groups).
    pub participant: String,
    /// Whether this account sent it (from another linked device).
    pub is_from_me: bool,
    /// The sender's display name.
    pub push_name: String,
    /// `text`, `image`, `location`, `interactive_response`, …
    pub message_type: String,
    /// The text of a text message (or the chosen label of a reply).
    pub text: Option<String>,
    /// The caption of a media message.
    pub caption: Option<String>,
    /// The media MIME type.
    pub media_mimetype: Option<String>,
    /// What the network says of a media message's media (and how to
    /// download it).
    pub media: Option<crate::domain::media::NetworkMedia>,
    /// Location details.
    pub location: Option<serde_json::Value>,
    /// The quoted message id of a reply.
    pub quoted_message_id: Option<String>,
    /// The quoted message's sender.
    pub quoted_sender_jid: Option<String>,
    /// Whether the sender forwarded it from another chat.
    #[serde(default)]
    pub forwarded: bool,
    /// Button or row id of an interactive reply.
    pub selected_id: Option<String>,
    /// Label of an interactive reply.
    pub selected_text: Option<String>,
    /// Native-flow reply: `{name, params}` with params parsed.
    pub native_flow: Option<serde_json::Value>,
    /// Unix seconds the network stamped on it.
    pub timestamp: i64,
    /// Redelivered from the disconnect window rather than arriving live.
    pub offline: bool,
}

/// Everything a network tells a session.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkEvent {
    /// The socket is being opened.
    Connecting,
    /// A QR code to scan; a newer one replaces it.
    Qr {
        /// The code to render.
        code: String,
        /// Unix seconds after which the code is no longer accepted.
        expires_at: i64,
    },
    /// A pair code to type on the phone.
    PairCode {
        /// The code, `XXXX-XXXX`.
        code: String,
    },
    /// Pairing succeeded; the gateway stores the account.
    Paired(Account),
    /// Socket open and authenticated: the session can send and receive.
    LoggedIn,
    /// The socket closed.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// Another client took over this device's connection (the server closed
    /// the stream as replaced). The connection is over until the operator
    /// connects again: reconnecting on its own would take the connection
    /// back from the other client, which would take it back in turn.
    Replaced {
        /// What the network said.
        reason: String,
    },
    /// The network refused the login with a reason retrying cannot change
    /// (the client is outdated, the request is invalid…): like
    /// [`NetworkEvent::Replaced`], the connection is over until the operator
    /// connects again; the credentials stay.
    Refused {
        /// What the network said.
        reason: String,
    },
    /// The account was unlinked; credentials are gone.
    LoggedOut {
        /// Why.
        reason: String,
    },
    /// A message arrived.
    Message(Box<InboundMessage>),
    /// Any other network-side event, already in its API `data` shape.
    Other {
        /// The event name.
        event: EventName,
        /// The event data.
        data: serde_json::Value,
    },
    /// Address-book contacts from app-state sync (full or incremental).
    Contacts(contacts::ContactSync),
    /// What the network says of the account's reach-out timelock (asked at
    /// login): `active` with its end when stated, or lifted.
    ReachOutTimelock {
        /// Whether the lock holds now.
        active: bool,
        /// Unix seconds when it ends, when stated.
        until: Option<i64>,
    },
    /// The network locked (or temporarily banned) the account and closed
    /// the socket (credentials kept).
    AccountLocked {
        /// The lock reason the network gave (with its own wording, when it
        /// sent any).
        reason: String,
        /// Unix seconds when the network says the lock ends (a temporary
        /// ban's expiry); the gateway's cooldown is at least that long.
        until: Option<i64>,
        /// Where the network says the account holder can appeal, if it did.
        url: Option<String>,
    },
    /// Events the network has not acknowledged to its server yet: the intake
    /// handles them in order like any others, then answers `receipt` once
    /// every one is stored and published, and the backend acknowledges only
    /// then (a failure or a crash in between leaves them unacknowledged, so
    /// the server delivers them again).
    Durable {
        /// The batch, in the network's order.
        events: Vec<NetworkEvent>,
        /// Answered by the intake.
        receipt: StoredReceipt,
    },
}

/// A network backend: attaches sessions and forgets them.
#[async_trait]
pub trait Network: Send + Sync + 'static {
    /// The backend name used in session records (`sim`, `whatsapp`).
    fn name(&self) -> &'static str;

    /// Builds the client of one session without connecting it. Events for the
    /// session go to `events` from now on.
    async fn attach(
        &self,
        spec: AttachSpec,
        events: EventSink,
    ) -> Result<Arc<dyn NetworkSession>, NetworkError>;

    /// Forgets everything the backend keeps for a deleted session.
    async fn forget(&self, session_id: &str);
}

/// The client of one attached session.
#[async_trait]
pub trait NetworkSession:
    groups::GroupOps
    + contacts::ContactOps
    + account::AccountOps
    + media::MediaOps
    + chats::ChatOps
    + profile::ProfileOps
    + Send
    + Sync
    + 'static
{
    /// Opens the connection. Returns once the attempt has started; progress
    /// (QR codes, login, failure) arrives as events. Idempotent.
    async fn connect(&self) -> Result<(), NetworkError>;

    /// Closes the connection and keeps the credentials. Idempotent.
    async fn disconnect(&self) -> Result<(), NetworkError>;

    /// Unlinks the account and drops the credentials. Idempotent.
    async fn logout(&self) -> Result<(), NetworkError>;

    /// Asks for a pair code for `phone` (digits); the session must be connecting
    /// and unpaired.
    async fn request_pair_code(&self, phone: &str) -> Result<String, NetworkError>;

    /// Sends one message under `message_id`, which the sender chose (as
    /// linked-device clients do), so a retry after a crash can be recognised.
    async fn send(
        &self,
        message_id: &str,
        to: &Jid,
        content: &OutboundContent,
    ) -> Result<SendReceipt, NetworkError>;

    /// Whether the network already accepted a message with this id from this
    /// session: `Some(answer)` when the backend can tell, `None` when it cannot
    /// (a real network keeps no such record for the client).
    async fn has_sent(&self, message_id: &str) -> Result<Option<bool>, NetworkError>;
}
