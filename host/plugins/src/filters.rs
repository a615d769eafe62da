//! Event filters: the unscoped chain runs once per envelope inside
//! `EventBus::publish`, before any audience sees it ([`Plugins::filter`]);
//! filters scoped to webhooks run per delivery, on what the unscoped chain
//! let through ([`Plugins::filter_for_webhook`]).

use std::sync::Arc;

use serde_json::Value;

use super::engine::CallFailure;
use super::engine::types::{self, FilterDecision};
use super::hooks::Outcome;
use super::model::Hook;
use super::{Active, Plugins};
use crate::domain::event::Envelope;
use crate::domain::hooks::EventFilter;

/// One envelope on its way through a chain: the data's JSON text is made
/// once and reused by every filter until one replaces the data.
struct InChain {
    env: Envelope,
    wit: Option<types::Envelope>,
}

impl InChain {
    fn wit(&mut self) -> &types::Envelope {
        let env = &self.env;
        self.wit.get_or_insert_with(|| types::Envelope {
            session_id: env.session_id.clone(),
            event: env.event.as_str().to_owned(),
            timestamp: env.timestamp,
            // serde_json's writer, not `Display` (which goes through the
            // formatter and costs twice as much for a 1 KB event).
            data: serde_json::to_string(&env.data).unwrap_or_else(|_| "{}".into()),
            offline: env.offline,
        })
    }
}

impl Plugins {
    /// Runs the unscoped event filters bound to the envelope's session, in
    /// order; `None` when one dropped it. This is the hot path the event bus
    /// calls for every event (and the entry point the benchmark measures):
    /// with no filter bound it returns at once.
    pub fn filter(&self, env: Envelope) -> Option<Envelope> {
        let Some(chain) = self.chain(Hook::EventFilter) else {
            return Some(env);
        };
        self.run_filters(chain.iter(), env)
    }

    /// The envelope as deliveries to webhook `webhook_id` should see it: the
    /// filters scoped to that webhook (and covering the session) run in
    /// order on it. `Some(envelope)` unchanged (the same `Arc`) when none
    /// applies; `None` when one dropped it for this webhook.
    pub fn filter_for_webhook(
        &self,
        webhook_id: &str,
        envelope: &Arc<Envelope>,
    ) -> Option<Arc<Envelope>> {
        let chains = self.inner.chains.load();
        let mut scoped = chains
            .scoped_filters
            .iter()
            .filter(|a| {
                a.binding.covers_webhook(webhook_id) && a.binding.covers(&envelope.session_id)
            })
            .peekable();
        if scoped.peek().is_none() {
            return Some(envelope.clone());
        }
        self.run_filters(scoped, envelope.as_ref().clone())
            .map(Arc::new)
    }

    fn run_filters<'a>(
        &self,
        chain: impl Iterator<Item = &'a Arc<Active>>,
        env: Envelope,
    ) -> Option<Envelope> {
        let session = env.session_id.clone();
        let mut cur = InChain { env, wit: None };
        for active in chain.filter(|a| a.binding.covers(&session)) {
            let wit = cur.wit();
            let (slot, out) = self.run(active, |p, s| {
                p.switchboard_plugin_event_filter().call_filter(s, wit)
            });
            let failed = match out {
                Outcome::Done(FilterDecision::Keep) => false,
                Outcome::Done(FilterDecision::Drop) => {
                    if let Some(slot) = slot {
                        slot.stats.drop_one();
                    }
                    return None;
                }
                Outcome::Done(FilterDecision::Replace(data)) => {
                    match serde_json::from_str::<Value>(&data) {
                        Ok(v @ Value::Object(_)) => {
                            cur.env.data = v;
                            if let Some(w) = &mut cur.wit {
                                w.data = data;
                            }
                            false
                        }
                        _ => {
                            if let Some(slot) = slot {
                                self.failed(
                                    slot,
                                    active,
                                    &CallFailure::BadOutput(
                                        "`replace` data is not a JSON object".into(),
                                    ),
                                );
                            }
                            true
                        }
                    }
                }
                Outcome::Failed => true,
            };
            if failed && active.fails_closed() {
                if let Some(slot) = slot {
                    slot.stats.drop_one();
                }
                return None;
            }
        }
        Some(cur.env)
    }
}

impl EventFilter for Plugins {
    fn filter(&self, envelope: Envelope) -> Option<Envelope> {
        Plugins::filter(self, envelope)
    }

    fn filter_for_webhook(
        &self,
        webhook_id: &str,
        envelope: &Arc<Envelope>,
    ) -> Option<Arc<Envelope>> {
        Plugins::filter_for_webhook(self, webhook_id, envelope)
    }
}
