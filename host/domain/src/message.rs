//! Stored message records: what a session sent and received.

use serde::{Deserialize, Serialize};

/// Whether a message left or reached the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Sent by the session through the API (or a blast, or the scheduler).
    Outbound,
    /// Received by the session from the network.
    Inbound,
}

/// One stored message, sent or received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageRecord {
    /// The network's message id.
    pub message_id: String,
    /// The session that sent or received it.
    pub session_id: String,
    /// Outbound or inbound.
    pub direction: Direction,
    /// The chat JID (the recipient of an outbound message; the chat of an inbound one).
    pub chat: String,
    /// The sender JID (the session's own account for outbound messages when known).
    pub sender: Option<String>,
    /// The send kind (`text`, `image`, …) or the inbound `message_type`.
    pub kind: String,
    /// The content: the body as delivered for outbound messages, the `message`
    /// event data for inbound ones.
    pub body: serde_json::Value,
    /// Unix seconds as reported by the network.
    pub timestamp: i64,
}
