//! The two addresses of an account: an `@lid` and a phone number, each
//! looked up from the other. The mapping the session learned (from
//! messages, contacts and earlier lookups) answers first; then the network;
//! what the network tells is learned for next time.

use serde::Serialize;

use super::Chats;
use crate::domain::jid::{Jid, JidKind};
use crate::network::NetworkError;
use crate::network::chats::LidPair;
use crate::sessions::SessionError;

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LidSource {
    /// The mapping this session had learned.
    Learned,
    /// The network, asked now (and learned from now on).
    Network,
}

/// Both addresses of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LidAnswer {
    /// The `@lid` JID.
    pub lid: String,
    /// The phone digits.
    pub phone: String,
    /// The user JID of the phone.
    pub jid: String,
    /// Where the answer came from.
    pub source: LidSource,
}

impl LidAnswer {
    fn new(pair: LidPair, source: LidSource) -> Option<Self> {
        Some(Self {
            lid: Jid::parse(&format!("{}@lid", pair.lid_user))
                .ok()?
                .to_string(),
            jid: Jid::user(&pair.phone).ok()?.to_string(),
            phone: pair.phone,
            source,
        })
    }
}

impl Chats {
    /// The pair the session learned for `address` (an `@lid` or a user JID).
    fn learned(&self, session_id: &str, address: &Jid) -> Result<Option<LidPair>, SessionError> {
        let user = address.user_part().to_owned();
        Ok(match address.kind() {
            JidKind::Lid => self
                .store
                .lid_phone(session_id, &user)?
                .map(|phone| LidPair {
                    lid_user: user,
                    phone,
                }),
            JidKind::User => self
                .store
                .lid_of_phone(session_id, &user)?
                .map(|lid_user| LidPair {
                    lid_user,
                    phone: user,
                }),
            _ => None,
        })
    }

    /// The other address of `address` (an `@lid`, a user JID or a phone
    /// number): learned, else asked of the network (which needs the session
    /// logged in) and learned. `NotFound` when neither knows it.
    pub async fn look_up_lid(
        &self,
        session_id: &str,
        address: &Jid,
    ) -> Result<LidAnswer, SessionError> {
        if !matches!(address.kind(), JidKind::Lid | JidKind::User) {
            return Err(SessionError::Invalid {
                field: "jid",
                message: format!("`{address}` is neither an `@lid` nor a phone number"),
            });
        }
        if let Some(pair) = self.learned(session_id, address)? {
            return LidAnswer::new(pair, LidSource::Learned).ok_or_else(|| unknown(address));
        }
        let (client, _) = self.sessions.sender(session_id)?;
        let pair = client
            .look_up_lid(address)
            .await?
            .ok_or_else(|| unknown(address))?;
        self.store
            .learn_lid(session_id, &pair.lid_user, &pair.phone, None)?;
        LidAnswer::new(pair, LidSource::Network).ok_or_else(|| unknown(address))
    }

    /// The `@lid` of a send's recipient when the session knows it (learned,
    /// or known to its client without asking the network); learned from the
    /// client for next time. `None` for anything but a user JID.
    pub async fn recipient_lid(&self, session_id: &str, to: &Jid) -> Option<String> {
        if to.kind() != JidKind::User {
            return None;
        }
        let pair = match self.learned(session_id, to).ok().flatten() {
            Some(pair) => pair,
            None => {
                let pair = self.sessions.client(session_id).ok()?.known_lid(to).await?;
                if let Err(e) = self
                    .store
                    .learn_lid(session_id, &pair.lid_user, &pair.phone, None)
                {
                    tracing::warn!(session = %session_id, error = %e, "could not keep a recipient's lid");
                }
                pair
            }
        };
        Jid::parse(&format!("{}@lid", pair.lid_user))
            .ok()
            .map(|j| j.to_string())
    }
}

fn unknown(address: &Jid) -> SessionError {
    SessionError::Network(NetworkError::NotFound(format!(
        "the other address of {address} is not known to this session or the network"
    )))
}
