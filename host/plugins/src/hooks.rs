//! The hooks the data paths call: message transforms (inside the send core)
//! and blast endpoints; the shared call path. Event filters are in `filters`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::Value;

use super::engine::types::{self, TransformDecision};
use super::engine::{HostState, v2};
use super::model::Hook;
use super::worlds::{Bound, not_served};
use super::{Active, Plugins, Slot};
use crate::domain::hooks::{BlastEndpoints, MessageTransform, PluginRejection};
use crate::domain::send::{SendKind, SendRequest};

/// What one bound call came to.
pub(super) enum Outcome<R> {
    Done(R),
    /// Failed or quarantined; the binding's policy decides.
    Failed,
}

impl Plugins {
    pub(super) fn chain(&self, hook: Hook) -> Option<Arc<[Arc<Active>]>> {
        let chains = self.inner.chains.load();
        chains.by_hook.get(&hook).filter(|c| !c.is_empty()).cloned()
    }

    /// Calls one bound plugin, timing and counting it.
    pub(super) fn run<'a, R>(
        &self,
        active: &'a Active,
        f: impl FnOnce(&Bound, &mut wasmtime::Store<HostState>) -> wasmtime::Result<R>,
    ) -> (Option<&'a Arc<Slot>>, Outcome<R>) {
        let Some(slot) = &active.slot else {
            return (None, Outcome::Failed);
        };
        if slot.quarantined.load(Ordering::Acquire) {
            return (Some(slot), Outcome::Failed);
        }
        let loaded = slot.loaded.load();
        let start = Instant::now();
        let r = loaded.call(&active.config_text, f);
        slot.stats.record(start.elapsed());
        match r {
            Ok(r) => {
                slot.stats.succeed();
                (Some(slot), Outcome::Done(r))
            }
            Err(e) => {
                self.failed(slot, active, &e);
                (Some(slot), Outcome::Failed)
            }
        }
    }

    /// Runs the message transforms bound to the session, in order, on a
    /// validated request; a reject (or a fail-closed failure) refuses the send.
    pub fn transform(
        &self,
        session_id: &str,
        mut request: SendRequest,
    ) -> Result<SendRequest, PluginRejection> {
        let Some(chain) = self.chain(Hook::MessageTransform) else {
            return Ok(request);
        };
        for active in chain.iter().filter(|a| a.binding.covers(session_id)) {
            let kind = request.kind();
            let mut body = serde_json::to_value(&request.content).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut body {
                m.insert("to".into(), Value::String(request.to.to_string()));
            }
            let body = body.to_string();
            let (slot, out) = self.run(active, |p, s| match p {
                Bound::V1(p) => {
                    let wit = types::Outbound {
                        session_id: session_id.to_owned(),
                        kind: kind.as_str().to_owned(),
                        body,
                    };
                    p.switchboard_plugin_message_transform()
                        .call_transform(s, &wit)
                }
                Bound::Transform(p) => {
                    let wit = v2::types::Outbound {
                        session_id: session_id.to_owned(),
                        kind: kind.as_str().to_owned(),
                        body,
                    };
                    let out = p
                        .switchboard_plugin_message_transform()
                        .call_transform(s, &wit)?;
                    Ok(match out {
                        v2::types::TransformDecision::Unchanged => TransformDecision::Unchanged,
                        v2::types::TransformDecision::Replace(b) => TransformDecision::Replace(b),
                        v2::types::TransformDecision::Reject(r) => TransformDecision::Reject(r),
                    })
                }
                _ => Err(not_served("message-transform")),
            });
            let name = slot
                .as_ref()
                .map(|s| {
                    s.record
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .name
                        .clone()
                })
                .unwrap_or_else(|| active.binding.plugin_id.clone());
            let reject = |why: String| {
                if let Some(slot) = &slot {
                    slot.stats.reject_one();
                }
                PluginRejection(format!("plugin `{name}`: {why}"))
            };
            match out {
                Outcome::Done(TransformDecision::Unchanged) => {}
                Outcome::Done(TransformDecision::Reject(reason)) => return Err(reject(reason)),
                Outcome::Done(TransformDecision::Replace(new_body)) => {
                    let parsed = serde_json::from_str::<Value>(&new_body)
                        .map_err(|e| e.to_string())
                        .and_then(|v| SendRequest::from_json(kind, v).map_err(|e| e.to_string()));
                    match parsed {
                        Ok(r) => request = r,
                        Err(e) => {
                            return Err(reject(format!(
                                "it replaced the body with one that is not a valid `{}` request: {e}",
                                kind.as_str()
                            )));
                        }
                    }
                }
                Outcome::Failed => {
                    if active.fails_closed() {
                        return Err(reject(
                            "the plugin failed and its binding fails closed".into(),
                        ));
                    }
                }
            }
        }
        Ok(request)
    }

    /// Whether a plugin bound as a blast endpoint for the session serves `key`.
    pub fn has_endpoint(&self, session_id: &str, key: &str) -> bool {
        self.endpoint_binding(session_id, key).is_some()
    }

    fn endpoint_binding(&self, session_id: &str, key: &str) -> Option<Arc<Active>> {
        let chain = self.chain(Hook::BlastEndpoint)?;
        chain
            .iter()
            .find(|a| {
                a.binding.covers(session_id)
                    && a.slot.as_ref().is_some_and(|s| {
                        s.record
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .endpoints
                            .iter()
                            .any(|e| e == key)
                    })
            })
            .cloned()
    }

    /// Expands one blast recipient through the plugin serving `key` into
    /// concrete sends of built-in kinds (`to` set to the recipient).
    pub fn expand(
        &self,
        session_id: &str,
        key: &str,
        to: &str,
        body: &Value,
    ) -> Result<Vec<SendRequest>, String> {
        let active = self.endpoint_binding(session_id, key).ok_or_else(|| {
            format!("no loaded plugin serves the blast endpoint `{key}` any more")
        })?;
        let contact = self.inner.store.get_contact(session_id, to).ok().flatten();
        let recipient = types::Recipient {
            jid: to.to_owned(),
            phone: to
                .strip_suffix("@s.whatsapp.net")
                .map(|p| p.split(':').next().unwrap_or(p).to_owned()),
            contact: contact.map(super::host::to_wit),
        };
        let body_text = body.to_string();
        let (_, out) = self.run(&active, |p, s| match p {
            Bound::V1(p) => p
                .switchboard_plugin_blast_endpoint()
                .call_expand(s, key, &recipient, &body_text)
                .map(|r| r.map(|sends| sends.into_iter().map(|c| (c.kind, c.body)).collect())),
            Bound::Blast(p) => {
                let recipient = v2::types::Recipient {
                    jid: recipient.jid.clone(),
                    phone: recipient.phone.clone(),
                    contact: recipient.contact.clone().map(super::host::contact_v2),
                };
                p.switchboard_plugin_blast_endpoint()
                    .call_expand(s, key, &recipient, &body_text)
                    .map(|r| r.map(|sends| sends.into_iter().map(|c| (c.kind, c.body)).collect()))
            }
            _ => Err(not_served("blast-endpoint")),
        });
        let sends: Vec<(String, String)> = match out {
            Outcome::Done(Ok(sends)) => sends,
            Outcome::Done(Err(reason)) => return Err(format!("the endpoint refused: {reason}")),
            Outcome::Failed => return Err("the plugin serving the endpoint failed".into()),
        };
        sends
            .into_iter()
            .map(|(send_kind, send_body)| {
                let kind = SendKind::parse(&send_kind).ok_or_else(|| {
                    format!("the plugin asked for an unknown send kind `{send_kind}`")
                })?;
                let mut v: Value = serde_json::from_str(&send_body)
                    .map_err(|e| format!("the plugin's `{send_kind}` body is not JSON: {e}"))?;
                if let Value::Object(m) = &mut v {
                    m.insert("to".into(), Value::String(to.to_owned()));
                }
                SendRequest::from_json(kind, v)
                    .map_err(|e| format!("the plugin's `{send_kind}` body is invalid: {e}"))
            })
            .collect()
    }
}

impl MessageTransform for Plugins {
    fn transform(
        &self,
        session_id: &str,
        request: SendRequest,
    ) -> Result<SendRequest, PluginRejection> {
        Plugins::transform(self, session_id, request)
    }
}

impl BlastEndpoints for Plugins {
    fn has_endpoint(&self, session_id: &str, key: &str) -> bool {
        Plugins::has_endpoint(self, session_id, key)
    }

    fn expand(
        &self,
        session_id: &str,
        key: &str,
        to: &str,
        body: &Value,
    ) -> Result<Vec<SendRequest>, String> {
        Plugins::expand(self, session_id, key, to, body)
    }
}
