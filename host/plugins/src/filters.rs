//! Event filters: the unscoped chain runs once per envelope inside
//! `EventBus::publish`, before any audience sees it ([`Plugins::filter`]);
//! filters scoped to webhooks run per delivery, on what the unscoped chain
//! let through ([`Plugins::filter_for_webhook`]). A chain may mix 0.1
//! filters (the data as JSON text) and 0.2 ones (a typed record, the data
//! on request).

use std::iter::Peekable;
use std::sync::Arc;

use serde_json::Value;

use super::engine::types::{self, FilterDecision};
use super::engine::{CallFailure, v2};
use super::event_lowering::EventArg;
use super::event_record::{EventRef, event_record};
use super::hooks::Outcome;
use super::model::Hook;
use super::worlds::{Bound, not_served};
use super::{Active, Plugins};
use crate::domain::event::Envelope;
use crate::domain::hooks::EventFilter;

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
        mut env: Envelope,
    ) -> Option<Envelope> {
        let mut data = Arc::new(std::mem::take(&mut env.data));
        let mut chain = chain
            .filter(|a| a.binding.covers(&env.session_id))
            .peekable();
        while chain.peek().is_some() {
            match self.run_stretch(&mut chain, &env, &data) {
                Stretch::Done => break,
                Stretch::Dropped => return None,
                Stretch::Replaced(value) => data = Arc::new(value),
            }
        }
        env.data = Arc::try_unwrap(data).unwrap_or_else(|shared| (*shared).clone());
        Some(env)
    }

    /// Runs filters from `chain` on `env` with `data` until the chain ends,
    /// one drops the event, or one replaces its data. The 0.1 envelope (the
    /// data as JSON text) and the 0.2 record (borrowing from `env` and
    /// `data`) are each made once for the stretch, when a filter of that
    /// version first needs them. A replacement's text is written again from
    /// the parsed data rather than passed on as the filter wrote it, so a
    /// later 0.1 filter sees the very document the deliveries carry (no
    /// duplicate keys, no number beyond what the data holds).
    fn run_stretch<'a>(
        &self,
        chain: &mut Peekable<impl Iterator<Item = &'a Arc<Active>>>,
        env: &Envelope,
        data: &Arc<Value>,
    ) -> Stretch {
        let mut wit: Option<types::Envelope> = None;
        let mut record: Option<EventRef<'_>> = None;
        for active in chain {
            let (slot, out) = self.run(active, |p, s| match p {
                Bound::V1(p) => {
                    let wit = wit.get_or_insert_with(|| types::Envelope {
                        session_id: env.session_id.clone(),
                        event: env.event.as_str().to_owned(),
                        timestamp: env.timestamp,
                        // serde_json's writer, not `Display` (which goes
                        // through the formatter and costs twice as much for
                        // a 1 KB event).
                        data: serde_json::to_string(data.as_ref()).unwrap_or_else(|_| "{}".into()),
                        offline: env.offline,
                    });
                    p.switchboard_plugin_event_filter()
                        .call_filter(s, wit)
                        .map(Decision::from)
                }
                Bound::Filter(p) => {
                    let record = *record.get_or_insert_with(|| event_record(env, data));
                    s.data_mut().event_data = Some(data.clone());
                    let out = p.filter.call(&mut *s, (EventArg(record),)).map(|(d,)| d);
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
                    return Stretch::Dropped;
                }
                Outcome::Done(Decision::Replace(json)) => {
                    match serde_json::from_str::<Value>(&json) {
                        Ok(v @ Value::Object(_)) => return Stretch::Replaced(v),
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
                return Stretch::Dropped;
            }
        }
        Stretch::Done
    }
}

/// How a stretch of a chain ended.
enum Stretch {
    /// The chain ran to its end.
    Done,
    /// A filter dropped the event.
    Dropped,
    /// A filter replaced the data with this.
    Replaced(Value),
}

impl EventFilter for Plugins {
    fn filter(&self, envelope: Envelope) -> Option<Envelope> {
        Plugins::filter(self, envelope)
    }

    fn may_change(&self, session_id: &str) -> bool {
        self.chain(Hook::EventFilter)
            .is_some_and(|chain| chain.iter().any(|a| a.binding.covers(session_id)))
    }

    fn filter_for_webhook(
        &self,
        webhook_id: &str,
        envelope: &Arc<Envelope>,
    ) -> Option<Arc<Envelope>> {
        Plugins::filter_for_webhook(self, webhook_id, envelope)
    }
}
