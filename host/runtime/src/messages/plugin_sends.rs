//! Sends made by integration plugins, through the one send core (message
//! transforms and pacing apply). A plugin's host call is synchronous and
//! runs on the blocking pool, so the send is driven to its end there.

use tokio::runtime::Handle;

use super::SendCore;
use crate::domain::hooks::PluginSender;
use crate::domain::send::SendRequest;

/// The send core as integration plugins reach it.
#[derive(Clone)]
pub struct PluginSends {
    send: SendCore,
    runtime: Handle,
}

impl PluginSends {
    /// Sends through `send`, on the runtime of `runtime`.
    pub fn new(send: SendCore, runtime: Handle) -> Self {
        Self { send, runtime }
    }
}

impl PluginSender for PluginSends {
    fn send(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: &str,
    ) -> Result<String, String> {
        self.runtime.block_on(async {
            // The same event handled again (a retry, a restart) asks for the
            // same id: what already went out is not sent twice.
            if self
                .send
                .has_sent(session_id, message_id)
                .await
                .map_err(|e| e.to_string())?
                == Some(true)
            {
                return Ok(message_id.to_owned());
            }
            self.send
                .send(session_id, request, Some(message_id))
                .await
                .map(|r| r.message_id)
                .map_err(|e| e.to_string())
        })
    }
}
