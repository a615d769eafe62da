//! What arrives at a session from the rest of the simulated network: inbound
//! messages (queued while the session is offline; a blocked account's
//! dropped) and network-side events.

use super::{Link, World, emit};
use crate::domain::event::EventName;
use crate::{InboundMessage, NetworkError, NetworkEvent, StoredReceipt};

impl World {
    /// Hands a message to a session: now when online (answered once the
    /// gateway has stored it), queued for its next connect (and flagged
    /// offline) otherwise.
    pub(in crate::sim) async fn deliver(
        &self,
        id: &str,
        mut message: InboundMessage,
    ) -> Result<String, NetworkError> {
        let message_id = message.message_id.clone();
        // The network takes a blocked account's message and delivers it to
        // nobody, as WhatsApp's does: the sender is not told.
        if message.chat == message.from && self.blocks(id, &message.from)? {
            return Ok(message_id);
        }
        let live = self.with(id, |s| {
            if s.account.is_none() {
                return Err(NetworkError::InvalidState(format!(
                    "session `{id}` is not paired; nothing can reach it yet"
                )));
            }
            if s.link == Link::Online {
                Ok(Some(s.events.clone()))
            } else {
                message.offline = true;
                s.offline_queue.push_back(message.clone());
                Ok(None)
            }
        })??;
        if let Some(events) = live {
            // As a real server's delivery is acknowledged only once stored,
            // the injection is answered only once the gateway holds the
            // message (and every delivery it owes) durably.
            let (receipt, stored) = StoredReceipt::new();
            let batch = NetworkEvent::Durable {
                events: vec![NetworkEvent::Message(Box::new(message))],
                receipt,
            };
            emit(&events, batch).await;
            match stored.await {
                Ok(Ok(())) => {}
                Ok(Err(not)) => {
                    let why = format!("the gateway could not store the message: {not}");
                    return Err(match not.fault {
                        Some(fault) => NetworkError::Storage(fault, why),
                        None => NetworkError::Failed(why),
                    });
                }
                Err(_) => {
                    return Err(NetworkError::Failed(
                        "the session stopped before the message was stored".into(),
                    ));
                }
            }
        }
        Ok(message_id)
    }

    /// Delivers a network-side event to a session that is online.
    /// `disconnected` also drops the link, as a real drop would (credentials kept).
    pub(in crate::sim) async fn inject_event(
        &self,
        id: &str,
        event: EventName,
        data: serde_json::Value,
    ) -> Result<(), NetworkError> {
        let events = self.with(id, |s| {
            if s.link != Link::Online {
                return Err(NetworkError::NotConnected);
            }
            if event == EventName::Disconnected {
                s.link = Link::Offline;
            }
            Ok(s.events.clone())
        })??;
        let ev = if event == EventName::Disconnected {
            let reason = data.get("reason").and_then(serde_json::Value::as_str);
            NetworkEvent::Disconnected {
                reason: reason.unwrap_or("dropped by the network").to_owned(),
            }
        } else {
            NetworkEvent::Other { event, data }
        };
        emit(&events, ev).await;
        Ok(())
    }
}
