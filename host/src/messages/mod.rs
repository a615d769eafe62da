//! The send core: the one path every outbound message takes — from the API,
//! and later from blasts and the scheduler. It checks the session can send,
//! hands the validated request to the network, and stores the message record.
//! Nothing else calls [`crate::network::NetworkSession::send`].

use crate::domain::message::{Direction, MessageRecord};
use crate::domain::send::SendRequest;
use crate::sessions::{SessionError, Sessions};
use crate::store::Store;

/// The send core; cheap to clone.
#[derive(Clone)]
pub struct SendCore {
    sessions: Sessions,
    store: Store,
}

impl SendCore {
    /// A send core over the session registry and the store.
    pub fn new(sessions: Sessions, store: Store) -> Self {
        Self { sessions, store }
    }

    /// Sends one validated request on a session and records it.
    ///
    /// Refused without touching the network when the session is unknown,
    /// paused or not logged in.
    pub async fn send(
        &self,
        session_id: &str,
        request: SendRequest,
    ) -> Result<MessageRecord, SessionError> {
        let (client, account) = self.sessions.sender(session_id)?;
        let receipt = client.send(&request.to, &request.content).await?;
        let record = MessageRecord {
            message_id: receipt.message_id,
            session_id: session_id.to_owned(),
            direction: Direction::Outbound,
            chat: request.to.to_string(),
            sender: account.map(|a| a.jid),
            kind: request.content.kind().as_str().to_owned(),
            body: serde_json::to_value(&request.content).map_err(crate::store::StoreError::from)?,
            timestamp: receipt.timestamp,
        };
        // The network has the message: a failure to record it must not turn
        // into a retry that sends it twice, so it is logged, not returned.
        if let Err(e) = self.store.append_message(&record) {
            tracing::error!(session = %session_id, message_id = %record.message_id, error = %e, "sent message could not be recorded");
        }
        tracing::info!(session = %session_id, kind = %record.kind, message_id = %record.message_id, "message sent");
        Ok(record)
    }
}
