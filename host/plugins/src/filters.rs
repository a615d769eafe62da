//! Event filters: the unscoped chain runs once per envelope inside
//! `EventBus::publish`, before any audience sees it ([`Plugins::filter`]);
//! filters scoped to webhooks run per delivery, on what the unscoped chain
//! let through ([`Plugins::filter_for_webhook`]). A chain may mix 0.1
//! filters (the data as JSON text) and 0.2 ones (a typed record, the data
//! on request).

use std::sync::Arc;

use serde_json::Value;

use super::engine::types::{self, FilterDecision};
use super::engine::{Bound, CallFailure, not_served, v2};
use super::event_record::event_record;
use super::hooks::Outcome;
use super::model::Hook;
use super::{Active, Plugins};
use crate::domain::event::Envelope;
use crate::domain::hooks::EventFilter;

/// One envelope on its way through a chain. The data is shared (a 0.2
/// filter's `event-data` reads it without a copy); its JSON text (0.1) and
/// typed record (0.2) are made once and reused by every filter until one
/// replaces the data.
struct InChain {
    /// The envelope, its data moved into `data` for the chain's length.
    env: Envelope,
    data: Arc<Value>,
    wit: Option<types::Envelope>,
    record: Option<v2::types::Event>,
}

impl InChain {
    fn new(mut env: Envelope) -> Self {
        let data = Arc::new(std::mem::take(&mut env.data));
        Self {
            env,
            data,
            wit: None,
            record: None,
        }
    }

    fn wit(&mut self) -> &types::Envelope {
        let (env, data) = (&self.env, &self.data);
        self.wit.get_or_insert_with(|| types::Envelope {
            session_id: env.session_id.clone(),
            event: env.event.as_str().to_owned(),
            timestamp: env.timestamp,
            // serde_json's writer, not `Display` (which goes through the
            // formatter and costs twice as much for a 1 KB event).
            data: serde_json::to_string(data.as_ref()).unwrap_or_else(|_| "{}".into()),
            offline: env.offline,
        })
    }

    fn record(&mut self) -> &v2::types::Event {
        let (env, data) = (&self.env, &self.data);
        self.record.get_or_insert_with(|| event_record(env, data))
    }

    /// The envelope with its (possibly replaced) data back in place.
    fn finish(self) -> Envelope {
        let mut env = self.env;
        env.data = Arc::try_unwrap(self.data).unwrap_or_else(|shared| (*shared).clone());
        env
    }
}

/// What a filter of either version decided.
enum Decision {
    Keep,
    Drop,
    Replace(String),
}

impl From<FilterDecision> for Decision {
    fn from(d: FilterDecision) -> Self {
        match d {
            FilterDecision::Keep => Decision::Keep,
            FilterDecision::Drop => Decision::Drop,
            FilterDecision::Replace(data) => Decision::Replace(data),
        }
    }
}

impl From<v2::types::FilterDecision> for Decision {
    fn from(d: v2::types::FilterDecision) -> Self {
        match d {
            v2::types::FilterDecision::Keep => Decision::Keep,
            v2::types::FilterDecision::Drop => Decision::Drop,
            v2::types::FilterDecision::Replace(data) => Decision::Replace(data),
        }
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
        let mut cur = InChain::new(env);
        for active in chain.filter(|a| a.binding.covers(&session)) {
            let (slot, out) = self.run(active, |p, s| match p {
                Bound::V1(p) => p
                    .switchboard_plugin_event_filter()
                    .call_filter(s, cur.wit())
                    .map(Decision::from),
                Bound::Filter(p) => {
                    s.data_mut().event_data = Some(cur.data.clone());
                    let out = p
                        .switchboard_plugin_event_filter()
                        .call_filter(&mut *s, cur.record());
                    s.data_mut().event_data = None;
                    out.map(Decision::from)
                }
                _ => Err(not_served("event-filter")),
            });
            let failed = match out {
                Outcome::Done(Decision::Keep) => false,
                Outcome::Done(Decision::Drop) => {
                    if let Some(slot) = slot {
                        slot.stats.drop_one();
                    }
                    return None;
                }
                Outcome::Done(Decision::Replace(data)) => {
                    match serde_json::from_str::<Value>(&data) {
                        Ok(v @ Value::Object(_)) => {
                            cur.data = Arc::new(v);
                            if let Some(w) = &mut cur.wit {
                                w.data = data;
                            }
                            cur.record = None;
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
        Some(cur.finish())
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
