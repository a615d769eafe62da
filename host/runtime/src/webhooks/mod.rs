//! Webhooks: registration, fan-out of every envelope to the session's matching
//! webhooks through the durable outbox, signed delivery with retries, the
//! dead-letter queue, per-URL suspension and backlog, and their diagnostics.
//!
//! [`Webhooks`] is the event bus's [`Outbox`]: for each envelope it plans one
//! delivery per matching webhook (the bus stores them in the same write as
//! the event), and once they are durable it hands them to the dispatcher,
//! which never blocks the publisher. At start, it resumes whatever the
//! outbox still holds.

pub mod circuit;
pub mod client;
pub mod config;
pub mod dispatch;
pub use crate::domain::webhook as model;
pub mod signing;
pub mod target;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::domain::event::{Envelope, EventName};
use crate::domain::time::{unix_now, unix_now_ms};
use crate::events::{EventFilter, Outbox, OutboxLimits};
use crate::store::{NewDelivery, OutboxKey, OutboxRow, Store, StoreError, WebhookInsert};
use circuit::Health;
use config::WebhookConfig;
pub use dispatch::Backlog;
use dispatch::{Delivery, Dispatcher};
use model::{DlqEntry, PendingDelivery, SignatureScheme, Webhook};

/// Why a webhook operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// A request field is invalid.
    #[error("`{field}` {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// No such webhook on this session.
    #[error("no webhook with id `{0}` on this session")]
    NotFound(String),
    /// No such dead-letter entry on this session.
    #[error("no dead-letter entry with id `{0}` on this session")]
    DlqNotFound(String),
    /// The session was deleted while the webhook was being registered.
    #[error("session `{0}` was deleted")]
    SessionGone(String),
    /// The session has as many webhooks as it may.
    #[error(
        "session `{session}` has {held} webhooks, the most a session may have (MAX_WEBHOOKS_PER_SESSION = {limit}); delete one first"
    )]
    TooMany {
        /// The session.
        session: String,
        /// Webhooks it has.
        held: usize,
        /// The limit.
        limit: usize,
    },
    /// The entry's URL is suspended; replay would not be attempted.
    #[error(
        "deliveries to {0} are suspended; the entry stays queued (re-enable the webhook or wait for the probe)"
    )]
    CircuitOpen(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What registration asks for.
#[derive(Debug, Clone)]
pub struct NewWebhook {
    /// Destination URL.
    pub url: String,
    /// Event names; `None` means `all`.
    pub events: Option<Vec<String>>,
    /// Signing secret.
    pub secret: Option<String>,
    /// How deliveries are signed.
    pub signature_scheme: SignatureScheme,
}

struct Inner {
    store: Store,
    config: WebhookConfig,
    by_session: RwLock<HashMap<String, Arc<[Webhook]>>>,
    /// Held by every change of the registry from its store write until
    /// memory shows it (register, enable, delete, forgetting a session), so
    /// two changes never interleave: none is lost, and none written back
    /// over a delete.
    changes: std::sync::Mutex<()>,
    dispatcher: Dispatcher,
    /// Filters scoped to single webhooks (plugin bindings with `webhooks`).
    scoped: std::sync::OnceLock<Arc<dyn EventFilter>>,
    /// The other outbox destinations (the NATS broker): a dead-letter entry
    /// of theirs is replayed through them, not posted.
    others: RwLock<Vec<Arc<dyn Outbox>>>,
}

/// The webhook registry and delivery engine; cheap to clone.
#[derive(Clone)]
pub struct Webhooks {
    inner: Arc<Inner>,
}

impl Webhooks {
    /// Loads the registered webhooks and builds the HTTP client.
    pub fn start(
        store: Store,
        config: WebhookConfig,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> anyhow::Result<Self> {
        // rustls's `ring` backend as the process's provider (kept when one is
        // already installed): the delivery client's TLS configuration uses it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = client::DeliveryClient::new(&config)?;
        let mut by_session: HashMap<String, Vec<Webhook>> = HashMap::new();
        for hook in store.list_all_webhooks()? {
            by_session
                .entry(hook.session_id.clone())
                .or_default()
                .push(hook);
        }
        let by_session: HashMap<String, Arc<[Webhook]>> = by_session
            .into_iter()
            .map(|(k, v)| (k, Arc::from(v)))
            .collect();
        let dispatcher = Dispatcher::new(config.clone(), store.clone(), client, cancel, tasks);
        for record in store.list_sessions()? {
            dispatcher.session_live(&record.id, record.incarnation);
        }
        for hook in by_session.values().flat_map(|hooks| hooks.iter()) {
            dispatcher.webhook_live(&hook.id);
        }
        let this = Self {
            inner: Arc::new(Inner {
                store,
                config,
                by_session: RwLock::new(by_session),
                changes: std::sync::Mutex::new(()),
                dispatcher,
                scoped: std::sync::OnceLock::new(),
                others: RwLock::new(Vec::new()),
            }),
        };
        // An empty lane keeps its circuit while a webhook of the session
        // still has the URL (its suspension holds).
        let registry = Arc::downgrade(&this.inner);
        this.inner
            .dispatcher
            .set_registered(Arc::new(move |session: &str, url: &str| {
                registry.upgrade().is_some_and(|inner| {
                    Webhooks { inner }
                        .hooks(session)
                        .iter()
                        .any(|h| h.url == url)
                })
            }));
        // A pending delivery signs with its webhook's secret as registered.
        let registry = Arc::downgrade(&this.inner);
        this.inner
            .dispatcher
            .set_secrets(Arc::new(move |session: &str, webhook_id: &str| {
                let inner = registry.upgrade()?;
                Webhooks { inner }
                    .hooks(session)
                    .iter()
                    .find(|h| h.id == webhook_id)
                    .and_then(|h| h.secret.clone())
            }));
        // The outbox also holds the broker's and the integrations' rows;
        // those resume there.
        let (pending, others) = this.inner.store.outbox_of(is_webhook_url)?;
        if others > 0 {
            tracing::info!(
                events = others,
                "events owed to NATS or integration plugins are kept in the outbox: they resume with those"
            );
        }
        if !pending.is_empty() {
            tracing::info!(
                deliveries = pending.len(),
                "resuming the webhook deliveries pending at the last stop"
            );
            this.inner
                .dispatcher
                .counters()
                .resumed
                .inc_by(pending.len() as u64);
            let incarnation = |s: &str| this.inner.dispatcher.incarnation(s);
            this.inner.dispatcher.take(pending.into_iter().map(|row| {
                let i = incarnation(&row.key.session_id);
                delivery(row, i)
            }));
        }
        Ok(this)
    }

    /// Adds another outbox destination whose dead-letter entries share the
    /// sessions' queues (the NATS broker), so a replay goes back through it.
    pub fn add_destination(&self, other: Arc<dyn Outbox>) {
        self.inner
            .others
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(other);
    }

    /// The destination that owns the outbox rows of `url`, when not a webhook.
    fn other_for(&self, url: &str) -> Option<Arc<dyn Outbox>> {
        self.inner
            .others
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|o| o.claims(url))
            .cloned()
    }

    /// Sets the filters scoped to single webhooks, run per delivery (once).
    pub fn set_scoped_filter(&self, filter: Arc<dyn EventFilter>) {
        if self.inner.scoped.set(filter).is_err() {
            tracing::warn!("the webhook-scoped filter was already set");
        }
    }

    fn hooks(&self, session_id: &str) -> Arc<[Webhook]> {
        let map = self
            .inner
            .by_session
            .read()
            .unwrap_or_else(|p| p.into_inner());
        map.get(session_id)
            .cloned()
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    fn change(&self) -> std::sync::MutexGuard<'_, ()> {
        self.inner.changes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes a session's cached webhooks in place (call holding
    /// [`Self::change`]).
    fn edit_hooks(&self, session_id: &str, f: impl FnOnce(&mut Vec<Webhook>)) {
        let mut hooks = self.hooks(session_id).to_vec();
        f(&mut hooks);
        self.set_hooks(session_id, hooks);
    }

    fn set_hooks(&self, session_id: &str, hooks: Vec<Webhook>) {
        let mut map = self
            .inner
            .by_session
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if hooks.is_empty() {
            map.remove(session_id);
        } else {
            map.insert(session_id.to_owned(), Arc::from(hooks));
        }
    }

    /// Registers a webhook for the session `session_id` of `incarnation`
    /// (the caller read it from the session's record): refused when that
    /// session is deleted before the webhook is stored, or has
    /// `max_per_session` webhooks already.
    pub async fn register(
        &self,
        session_id: &str,
        incarnation: u64,
        new: NewWebhook,
    ) -> Result<Webhook, WebhookError> {
        let invalid = |field, message: String| WebhookError::Invalid { field, message };
        let url = target::parse_url(&new.url).map_err(|m| invalid("url", m))?;
        let config = &self.inner.config;
        target::check_destination(&url, config.allow_private, config.static_hosts.as_ref())
            .await
            .map_err(|m| invalid("url", m))?;
        let events = normalize_events(new.events).map_err(|m| invalid("events", m))?;
        let secret = match new.signature_scheme {
            SignatureScheme::Switchboard => {
                if new.secret.as_deref().is_some_and(str::is_empty) {
                    return Err(invalid(
                        "secret",
                        "must not be empty; leave it out for unsigned deliveries".into(),
                    ));
                }
                new.secret
            }
            // Standard Webhooks always signs: a missing secret is made.
            SignatureScheme::Standard => {
                Some(signing::standard_secret(new.secret).map_err(|m| invalid("secret", m))?)
            }
        };
        let hook = Webhook {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.to_owned(),
            url: url.to_string(),
            events,
            secret,
            enabled: true,
            created_at: unix_now(),
            signature_scheme: new.signature_scheme,
        };
        let limit = config.max_per_session;
        {
            // The store's check and the cache's change under one lock: a
            // delete of the session either came first (refused here) or
            // forgets the session after this (see `forget_session`).
            let _change = self.change();
            match self.inner.store.insert_webhook(&hook, incarnation, limit)? {
                WebhookInsert::Stored => {}
                WebhookInsert::SessionGone => {
                    return Err(WebhookError::SessionGone(session_id.to_owned()));
                }
                WebhookInsert::Full(held) => {
                    return Err(WebhookError::TooMany {
                        session: session_id.to_owned(),
                        held,
                        limit,
                    });
                }
            }
            self.inner.dispatcher.session_live(session_id, incarnation);
            self.inner.dispatcher.webhook_live(&hook.id);
            self.edit_hooks(session_id, |hooks| hooks.push(hook.clone()));
        }
        tracing::info!(session = %session_id, webhook = %hook.id, url = %hook.url, "webhook registered");
        Ok(hook)
    }

    /// A session's webhooks, in registration order.
    pub fn list(&self, session_id: &str) -> Vec<Webhook> {
        self.hooks(session_id).to_vec()
    }

    /// Deletes a webhook and the deliveries it still has pending (a DLQ
    /// replay under way stays: it goes to its stored URL).
    pub fn delete(&self, session_id: &str, id: &str) -> Result<(), WebhookError> {
        let _change = self.change();
        let hooks = self.hooks(session_id);
        let url = hooks.iter().find(|h| h.id == id).map(|h| h.url.clone());
        if !self.inner.store.delete_webhook(session_id, id)? {
            return Err(WebhookError::NotFound(id.to_owned()));
        }
        // The URL's circuit goes too unless another webhook of the session has it.
        let unused = url
            .as_deref()
            .filter(|u| !hooks.iter().any(|h| h.id != id && h.url == *u));
        self.inner.dispatcher.retire_webhook(session_id, id, unused);
        if let Some(url) = url {
            let dropped = self
                .inner
                .store
                .outbox_forget_webhook(session_id, &url, id)?;
            if dropped > 0 {
                tracing::info!(session = %session_id, webhook = %id, dropped, "pending deliveries of a deleted webhook dropped");
            }
        }
        self.edit_hooks(session_id, |hooks| hooks.retain(|h| h.id != id));
        Ok(())
    }

    /// Turns a webhook on and clears any suspension of its URL at once. The
    /// change is made on the registry as it is under the change lock (not
    /// on a copy read before), and written only while the webhook is
    /// stored, so a register or delete beside it keeps its effect.
    pub fn enable(&self, session_id: &str, id: &str) -> Result<Webhook, WebhookError> {
        let _change = self.change();
        let mut hook = self
            .hooks(session_id)
            .iter()
            .find(|h| h.id == id)
            .cloned()
            .ok_or_else(|| WebhookError::NotFound(id.to_owned()))?;
        hook.enabled = true;
        if !self.inner.store.update_webhook(&hook)? {
            return Err(WebhookError::NotFound(id.to_owned()));
        }
        self.edit_hooks(session_id, |hooks| {
            for h in hooks.iter_mut().filter(|h| h.id == hook.id) {
                h.enabled = true;
            }
        });
        self.inner.dispatcher.reset(session_id, &hook.url);
        Ok(hook)
    }

    /// A session's dead-letter entries, newest first.
    pub fn dlq(&self, session_id: &str) -> Result<Vec<DlqEntry>, WebhookError> {
        Ok(self.inner.store.list_dlq(session_id)?)
    }

    /// Removes an entry and re-delivers its payload through the same signing
    /// and retry path, as a new pending delivery with its original delivery
    /// id (taken from the DLQ and put in the outbox in one transaction);
    /// refused (and kept) while its URL is suspended.
    pub fn replay(&self, session_id: &str, entry_id: &str) -> Result<(), WebhookError> {
        let entry = self
            .inner
            .store
            .get_dlq(session_id, entry_id)?
            .ok_or_else(|| WebhookError::DlqNotFound(entry_id.to_owned()))?;
        let other = if is_webhook_url(&entry.webhook_url) {
            None
        } else {
            Some(self.other_for(&entry.webhook_url).ok_or_else(|| {
                WebhookError::Invalid {
                    field: "entry",
                    message: format!(
                        "was owed to {}, which this gateway is not configured to deliver to (NATS off?); it stays queued",
                        entry.webhook_url
                    ),
                }
            })?)
        };
        if other.is_none()
            && self
                .inner
                .dispatcher
                .is_open(session_id, &entry.webhook_url)
        {
            return Err(WebhookError::CircuitOpen(entry.webhook_url));
        }
        // Sequence 0: a replay goes ahead of the URL's other deliveries.
        let row = self
            .inner
            .store
            .replay_dlq_into_outbox(session_id, entry_id, 0, |e| PendingDelivery {
                delivery_id: e.delivery_id.clone(),
                session_id: e.session_id.clone(),
                webhook_id: e.webhook_id.clone(),
                url: e.webhook_url.clone(),
                secret: e.secret.clone(),
                signature_scheme: e.signature_scheme,
                event: e.event.clone(),
                attempts: 0,
                next_attempt_at: 0,
                last_error: None,
                created_at: unix_now_ms(),
                probe: false,
                replayed: true,
            })?
            .ok_or_else(|| WebhookError::DlqNotFound(entry_id.to_owned()))?;
        tracing::info!(session = %session_id, entry = %entry_id, url = %row.key.url, "webhook DLQ entry replayed");
        if let Some(other) = other {
            let seq = row.key.seq;
            other.release(
                seq,
                vec![NewDelivery {
                    delivery: row.delivery,
                    payload: row.payload,
                }],
                Vec::new(),
            );
            return Ok(());
        }
        let incarnation = self.inner.dispatcher.incarnation(session_id);
        self.inner.dispatcher.take([delivery(row, incarnation)]);
        Ok(())
    }

    /// Delivery health of each distinct URL of a session's webhooks: this
    /// session's deliveries to it only (another session's to the same URL
    /// are theirs).
    pub fn diagnostics(&self, session_id: &str) -> Vec<(String, Health)> {
        let mut urls: Vec<String> = self
            .hooks(session_id)
            .iter()
            .map(|h| h.url.clone())
            .collect();
        urls.dedup();
        urls.sort();
        urls.dedup();
        urls.into_iter()
            .map(|u| {
                let h = self.inner.dispatcher.health(session_id, &u);
                (u, h)
            })
            .collect()
    }

    /// What a session has pending for a URL (ready, waiting for a retry
    /// or in flight).
    pub fn backlog(&self, session_id: &str, url: &str) -> Backlog {
        self.inner.dispatcher.backlog(session_id, url)
    }

    /// How many delivery lanes and circuits the dispatcher holds.
    pub fn held(&self) -> (usize, usize) {
        self.inner.dispatcher.held()
    }

    /// What every URL with deliveries pending has.
    pub fn backlogs(&self) -> Vec<(String, Backlog)> {
        self.inner.dispatcher.backlogs()
    }

    /// How many (session, webhook URL) pairs are suspended or probing.
    pub fn suspended_urls(&self) -> usize {
        self.inner.dispatcher.suspended_urls()
    }

    /// Whether every delivery worker that was started is still running.
    pub fn workers_running(&self) -> bool {
        self.inner.dispatcher.stopped_workers() == 0
    }

    /// The delivery counters (registered by the metrics module).
    pub fn counters(&self) -> &crate::counters::WebhookCounters {
        self.inner.dispatcher.counters()
    }

    /// Forgets a deleted session: its cached webhooks (the store cascade removed
    /// the rows) and every delivery of it still queued or waiting for a retry.
    /// Called before the store's delete (so no delivery dead-letters into
    /// rows the cascade removes) and again after it (so a registration that
    /// stored its row before the cascade leaves no webhook in memory).
    pub fn forget_session(&self, session_id: &str) {
        let _change = self.change();
        let ids: Vec<String> = self
            .hooks(session_id)
            .iter()
            .map(|h| h.id.clone())
            .collect();
        self.inner.dispatcher.retire_session(session_id, &ids);
        self.set_hooks(session_id, Vec::new());
    }
}

/// `None` → `["all"]`; every name must be `all` or an event name; duplicates dropped.
fn normalize_events(events: Option<Vec<String>>) -> Result<Vec<String>, String> {
    let Some(events) = events else {
        return Ok(vec!["all".into()]);
    };
    if events.is_empty() {
        return Err("must name at least one event (or leave it out for all)".into());
    }
    let mut out: Vec<String> = Vec::new();
    for e in events {
        let e = e.trim().to_owned();
        if e != "all" && EventName::parse(&e).is_none() {
            return Err(format!("names an unknown event `{e}`"));
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    Ok(out)
}

/// Whether an outbox row's destination is a webhook's (the other rows are
/// the broker's).
fn is_webhook_url(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// A pending delivery read back from the outbox, for the dispatcher.
fn delivery(row: OutboxRow, incarnation: Option<u64>) -> Delivery {
    Delivery {
        key: row.key,
        d: row.delivery,
        payload: row.payload,
        incarnation,
    }
}

impl Outbox for Webhooks {
    fn claims(&self, url: &str) -> bool {
        is_webhook_url(url)
    }

    fn plan(&self, envelope: &Arc<Envelope>, json: &Bytes) -> Vec<NewDelivery> {
        let hooks = self.hooks(&envelope.session_id);
        let mut out = Vec::new();
        let now = unix_now_ms();
        for hook in hooks
            .iter()
            .filter(|h| h.enabled && h.wants(envelope.event))
        {
            // A filter scoped to this webhook may change or drop what it gets.
            let own = match self.inner.scoped.get() {
                Some(f) => match f.filter_for_webhook(&hook.id, envelope) {
                    None => continue,
                    Some(e) if Arc::ptr_eq(&e, envelope) => None,
                    Some(e) => Some(e),
                },
                None => None,
            };
            let payload = match own {
                Some(e) => match serde_json::to_vec(e.as_ref()) {
                    Ok(v) => Bytes::from(v),
                    Err(e) => {
                        tracing::error!(error = %e, "could not serialize an envelope");
                        continue;
                    }
                },
                None => json.clone(),
            };
            // A suspended URL is not owed the event (counted as skipped).
            let Some(probe) = self.inner.dispatcher.admit(&hook.session_id, &hook.url) else {
                continue;
            };
            out.push(NewDelivery {
                delivery: PendingDelivery {
                    delivery_id: uuid::Uuid::new_v4().to_string(),
                    session_id: envelope.session_id.clone(),
                    webhook_id: Some(hook.id.clone()),
                    url: hook.url.clone(),
                    // Not copied: the delivery signs with its webhook's
                    // secret (found by `webhook_id`), which leaves with it.
                    secret: None,
                    signature_scheme: hook.signature_scheme,
                    event: envelope.event.as_str().to_owned(),
                    attempts: 0,
                    next_attempt_at: 0,
                    last_error: None,
                    created_at: now,
                    probe,
                    replayed: false,
                },
                payload,
            });
        }
        out
    }

    fn limits(&self) -> OutboxLimits {
        OutboxLimits {
            backlog: self.inner.config.backlog_limit,
            dlq_capacity: self.inner.config.dlq_capacity,
        }
    }

    fn release(&self, seq: u64, deliveries: Vec<NewDelivery>, evicted: Vec<OutboxKey>) {
        if !evicted.is_empty() {
            tracing::warn!(
                deliveries = evicted.len(),
                url = %evicted[0].url,
                "webhook backlog full: the oldest pending deliveries were dead-lettered (backlog_full)"
            );
            self.inner.dispatcher.evicted(&evicted);
        }
        let incarnation = |sid: &str| self.inner.dispatcher.incarnation(sid);
        let taken: Vec<Delivery> = deliveries
            .into_iter()
            .map(|n| Delivery {
                key: OutboxKey {
                    session_id: n.delivery.session_id.clone(),
                    url: n.delivery.url.clone(),
                    seq,
                    delivery_id: n.delivery.delivery_id.clone(),
                },
                incarnation: incarnation(&n.delivery.session_id),
                d: n.delivery,
                payload: n.payload,
            })
            .collect();
        self.inner.dispatcher.take(taken);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_default_to_all_and_unknown_names_are_refused() {
        assert_eq!(normalize_events(None).unwrap(), ["all"]);
        assert_eq!(
            normalize_events(Some(vec!["message".into(), "message".into()])).unwrap(),
            ["message"]
        );
        assert!(normalize_events(Some(vec![])).is_err());
        assert!(
            normalize_events(Some(vec!["messages".into()]))
                .unwrap_err()
                .contains("messages")
        );
    }
}
