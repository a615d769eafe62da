//! Integration plugins: the calls the runtime's outbox dispatcher makes
//! ([`Plugins::handle`], off the async workers), the grants each call runs
//! under, and the `gateway` import (sends through the send core, under a
//! message id made from the delivery, so an event handled again does not
//! send again).

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::engine::{HostState, v2};
use super::event_record::event_record;
use super::hooks::Outcome;
use super::model::{Grants, Hook};
use super::worlds::{Bound, not_served};
use super::{Active, Plugins};
use crate::domain::event::Envelope;
use crate::domain::hooks::{Integrations, PluginSender};
use crate::domain::send::{SendKind, SendRequest};

/// What the integration call in progress may do.
pub(crate) struct CallGrants {
    /// The binding's grants.
    pub grants: Grants,
    /// The sessions the binding covers (`None`: all).
    pub sessions: Option<Vec<String>>,
    /// The delivery being handled: the seed of the ids of its sends.
    pub delivery_id: String,
    /// Sends made so far in this call.
    pub sends: u32,
    /// How sends reach the send core.
    pub sender: Option<Arc<dyn PluginSender>>,
}

impl Plugins {
    /// Sets how integration plugins send (the send core, wired in after
    /// both exist).
    pub fn set_sender(&self, sender: Arc<dyn PluginSender>) {
        *self.inner.sender.write().unwrap_or_else(|p| p.into_inner()) = Some(sender);
    }

    /// Cuts the link to the send core (at shutdown: the send core holds
    /// this registry, so the link would keep both, and the store, alive).
    pub fn clear_sender(&self) {
        *self.inner.sender.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn integration(&self, binding_id: &str) -> Option<Arc<Active>> {
        self.chain(Hook::Integration)?
            .iter()
            .find(|a| a.binding.id == binding_id)
            .cloned()
    }

    /// Hands `envelope` (recorded as delivery `delivery_id`) to the plugin
    /// of integration binding `binding_id`. Blocking.
    pub fn handle_delivery(
        &self,
        binding_id: &str,
        delivery_id: &str,
        envelope: &Envelope,
    ) -> Result<(), String> {
        let active = self.integration(binding_id).ok_or_else(|| {
            format!("no enabled integration binding `{binding_id}` (deleted or disabled)")
        })?;
        let record = event_record(envelope, &envelope.data).into_owned();
        let data = Arc::new(envelope.data.clone());
        let call = CallGrants {
            grants: active.binding.grants.clone().unwrap_or_default(),
            sessions: active.binding.sessions.clone(),
            delivery_id: delivery_id.to_owned(),
            sends: 0,
            sender: self
                .inner
                .sender
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        };
        let http = call.grants.http.clone();
        let (_, out) = self.run(&active, |p, s| match p {
            Bound::Integration(p) => {
                let state = s.data_mut();
                state.event_data = Some(data);
                state.call = Some(call);
                state.http_hooks.grant = http;
                let out = p
                    .switchboard_plugin_integration()
                    .call_handle(&mut *s, &record);
                let state = s.data_mut();
                state.event_data = None;
                state.call = None;
                state.http_hooks.grant = None;
                out
            }
            _ => Err(not_served("integration")),
        });
        match out {
            Outcome::Done(Ok(())) => Ok(()),
            Outcome::Done(Err(why)) => Err(format!("the plugin failed the event: {why}")),
            Outcome::Failed => {
                Err("the plugin trapped, timed out or is quarantined (see its counters)".into())
            }
        }
    }
}

impl Integrations for Plugins {
    fn takers(&self, session_id: &str, event: &str) -> Vec<String> {
        self.chain(Hook::Integration)
            .map(|chain| {
                chain
                    .iter()
                    .filter(|a| a.binding.takes(session_id, event))
                    .map(|a| a.binding.id.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn handle(
        &self,
        binding_id: &str,
        delivery_id: &str,
        envelope: &Envelope,
    ) -> Result<(), String> {
        self.handle_delivery(binding_id, delivery_id, envelope)
    }
}

/// The id of the `n`th send of a delivery: the same on every attempt.
fn send_id(delivery_id: &str, n: u32) -> String {
    let digest = Sha256::digest(format!("{delivery_id}:{n}").as_bytes());
    format!("3EB0{}", hex::encode_upper(&digest[..8]))
}

impl v2::gateway::Host for HostState {
    fn send(&mut self, session_id: String, kind: String, body: String) -> Result<String, String> {
        let Some(call) = self.call.as_mut() else {
            return Err("`send` is only available while handling an event".into());
        };
        if !call.grants.send {
            return Err("the binding does not grant `send` (`grants.send` is false)".into());
        }
        if call
            .sessions
            .as_ref()
            .is_some_and(|s| !s.contains(&session_id))
        {
            return Err(format!(
                "the binding does not cover session `{session_id}`, so the plugin cannot send from it"
            ));
        }
        let kind = SendKind::parse(&kind).ok_or_else(|| format!("`{kind}` is not a send kind"))?;
        let value: serde_json::Value =
            serde_json::from_str(&body).map_err(|e| format!("the body is not JSON: {e}"))?;
        let request = SendRequest::from_json(kind, value)
            .map_err(|e| format!("the `{}` body is invalid: {e}", kind.as_str()))?;
        let sender = call
            .sender
            .clone()
            .ok_or_else(|| "sending is not available in this gateway".to_owned())?;
        let id = send_id(&call.delivery_id, call.sends);
        call.sends += 1;
        sender.send(&session_id, request, &id)
    }
}
