//! The plugin hooks as traits, defined below both sides: the runtime (the
//! event bus, the send core, the blast worker) holds trait objects and calls
//! them; the plugin host implements them. Neither side names the other, so
//! the runtime builds and runs without a plugin engine, and the plugin host
//! knows nothing of sessions or HTTP.

use std::sync::Arc;

use serde_json::Value;

use crate::event::Envelope;
use crate::send::SendRequest;

/// Sees each envelope before any subscriber or stream (plugin event
/// filters): returns it (possibly changed) or `None` to drop it.
pub trait EventFilter: Send + Sync + 'static {
    /// Decides about one envelope.
    fn filter(&self, envelope: Envelope) -> Option<Envelope>;

    /// Whether [`Self::filter`] could change or drop an envelope of session
    /// `session_id` (a filter bound that covers it). When it could not, the
    /// event bus does not call it, and an inbound message's record shares
    /// the envelope's data instead of keeping a copy of it as received. By
    /// default, it could.
    fn may_change(&self, _session_id: &str) -> bool {
        true
    }

    /// Filters scoped to one webhook: the envelope as deliveries to
    /// `webhook_id` should see it (the same `Arc` when unchanged), or `None`
    /// to skip that webhook. Called by webhook fan-out, after [`Self::filter`];
    /// other audiences never see its effect. By default, no scoped filter.
    fn filter_for_webhook(
        &self,
        _webhook_id: &str,
        envelope: &Arc<Envelope>,
    ) -> Option<Arc<Envelope>> {
        Some(envelope.clone())
    }
}

/// A plugin refused a send: the reason, naming the plugin. The send core
/// answers it as `422 rejected_by_plugin`; blasts and scheduled sends fail
/// the send for good (another attempt would be refused again).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PluginRejection(pub String);

/// Message-transform plugins: see every validated send last, just before
/// the network, and may change it or refuse it.
pub trait MessageTransform: Send + Sync + 'static {
    /// The send as it should go out, or why it must not.
    fn transform(
        &self,
        session_id: &str,
        request: SendRequest,
    ) -> Result<SendRequest, PluginRejection>;
}

/// Blast-endpoint plugins: endpoint keys beyond the built-in send kinds,
/// each expanding one recipient into concrete sends.
pub trait BlastEndpoints: Send + Sync + 'static {
    /// Whether a plugin serves the endpoint `key` for this session.
    fn has_endpoint(&self, session_id: &str, key: &str) -> bool;

    /// The sends one recipient becomes at endpoint `key`, or why none can
    /// be made.
    fn expand(
        &self,
        session_id: &str,
        key: &str,
        to: &str,
        body: &Value,
    ) -> Result<Vec<SendRequest>, String>;
}

/// Integration plugins: handed the events their bindings take, off the hot
/// path, from the durable outbox (the runtime's dispatcher records one
/// delivery per binding and calls [`Integrations::handle`] until it
/// succeeds or its attempts run out).
pub trait Integrations: Send + Sync + 'static {
    /// The enabled integration bindings that take `event` of `session_id`.
    fn takers(&self, session_id: &str, event: &str) -> Vec<String>;

    /// Hands one event, recorded as delivery `delivery_id`, to the
    /// binding's plugin. Blocking: the plugin may call out over HTTP, so
    /// callers run it off the async workers. `Err` says why it failed
    /// (retried later).
    fn handle(
        &self,
        binding_id: &str,
        delivery_id: &str,
        envelope: &Envelope,
    ) -> Result<(), String>;
}

/// Sends a message on behalf of a plugin, through the send core (message
/// transforms apply). Blocking: called from a plugin's host call.
pub trait PluginSender: Send + Sync + 'static {
    /// Sends `request` from `session_id` under `message_id` (chosen by the
    /// caller so that an event handled again does not send again: a send
    /// already made under it answers the same id); answers the message id,
    /// or why the send was refused.
    fn send(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: &str,
    ) -> Result<String, String>;
}
