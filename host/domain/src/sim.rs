//! The simulated network's stored shapes: outside users, what the network
//! received from each session (the outbox), each account's address book and
//! trust tokens, and its groups. Records only: the store keeps them, the sim
//! backend applies its rules to them.

use serde::{Deserialize, Serialize};

use crate::group::{GroupSettings, Role};

/// A user of the simulated network who is not a session of this gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimUser {
    /// Digits of the phone number.
    pub phone: String,
    /// The user JID.
    pub jid: String,
    /// The name the user shows to others.
    pub push_name: Option<String>,
    /// A verified business name, for business accounts.
    pub business_name: Option<String>,
    /// The user's alternate identifier JID (`<id>@lid`).
    pub lid: Option<String>,
    /// The user's about text.
    pub about: Option<String>,
    /// The user's profile picture URL.
    pub picture_url: Option<String>,
    /// Unix seconds of registration.
    pub registered_at: i64,
}

/// One message as the simulated network received it from a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OutboxEntry {
    /// The recipient JID.
    pub to: String,
    /// The send kind.
    pub kind: String,
    /// The body as delivered (without `to`).
    pub body: serde_json::Value,
    /// The message id the network assigned.
    pub message_id: String,
    /// Unix seconds of receipt.
    pub timestamp: i64,
}

/// One entry of a sim account's address book.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimAddressEntry {
    /// Phone digits of the contact.
    pub phone: String,
    /// The saved full name.
    pub full_name: Option<String>,
    /// The saved first name.
    pub first_name: Option<String>,
    /// The contact's `<id>@lid`, when given.
    pub lid: Option<String>,
    /// The app-state version that last changed the entry (grows per change).
    pub version: u64,
}

/// A trust contact token record in a sim session's device store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimTcToken {
    /// Unix milliseconds when the contact's token was received.
    pub token_ms: Option<i64>,
    /// Unix milliseconds when this account last issued its token to the contact.
    pub sender_ms: Option<i64>,
}

impl SimTcToken {
    /// The newest of the two times.
    pub fn newest_ms(&self) -> i64 {
        self.token_ms.max(self.sender_ms).unwrap_or(0)
    }
}

/// A group as the simulated network keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimGroup {
    /// The digits before `@g.us`.
    pub id: String,
    /// The group name.
    pub subject: String,
    /// The description, when there is one.
    pub topic: Option<SimTopic>,
    /// The creator's user JID (kept after the creator leaves).
    pub owner: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Members in the order they joined.
    pub participants: Vec<SimMember>,
    /// The three settings.
    pub settings: GroupSettings,
    /// The current invite code; earlier codes no longer work.
    pub invite_code: String,
    /// User JIDs that asked to join by link while approval was on.
    #[serde(default)]
    pub pending: Vec<String>,
}

/// A group description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimTopic {
    /// Its id: the `prev_id` a later change names.
    pub id: String,
    /// The text.
    pub text: String,
    /// Who set it (user JID).
    pub set_by: String,
    /// Unix seconds when it was set.
    pub set_at: i64,
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimMember {
    /// The member's user JID.
    pub jid: String,
    /// Its role.
    pub role: Role,
    /// Unix seconds when it joined.
    pub joined_at: i64,
}
