//! Webhooks: registration, fan-out of every envelope to the session's matching
//! webhooks, signed delivery with retries, the dead-letter queue, per-URL
//! suspension and its diagnostics.
//!
//! [`Webhooks`] subscribes to the event bus: for each envelope it serializes
//! the body once and hands one [`dispatch::Delivery`] per matching webhook to
//! the dispatcher, which never blocks the publisher.

pub mod circuit;
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
use crate::domain::time::unix_now;
use crate::events::{EventFilter, Subscriber};
use crate::store::{Store, StoreError};
use circuit::Health;
use config::WebhookConfig;
use dispatch::{Delivery, Dispatcher};
use model::{DlqEntry, Webhook};

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
}

struct Inner {
    store: Store,
    config: WebhookConfig,
    by_session: RwLock<HashMap<String, Arc<[Webhook]>>>,
    dispatcher: Dispatcher,
    /// Filters scoped to single webhooks (plugin bindings with `webhooks`).
    scoped: std::sync::OnceLock<Arc<dyn EventFilter>>,
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
        // already installed): reqwest is built without a provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .pool_max_idle_per_host(config.concurrency_per_url)
            .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION")));
        if !config.allow_private {
            builder = builder.dns_resolver(Arc::new(target::PublicOnlyResolver));
        }
        let client = builder.build()?;
        let mut by_session: HashMap<String, Vec<Webhook>> = HashMap::new();
        for hook in store.list_all_webhooks()? {
            by_session
                .entry(hook.session_id.clone())
                .or_default()
                .push(hook);
        }
        let by_session = by_session
            .into_iter()
            .map(|(k, v)| (k, Arc::from(v)))
            .collect();
        let dispatcher = Dispatcher::new(config.clone(), store.clone(), client, cancel, tasks);
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                config,
                by_session: RwLock::new(by_session),
                dispatcher,
                scoped: std::sync::OnceLock::new(),
            }),
        })
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

    /// Registers a webhook for a session (the caller checked the session exists).
    pub async fn register(
        &self,
        session_id: &str,
        new: NewWebhook,
    ) -> Result<Webhook, WebhookError> {
        let invalid = |field, message: String| WebhookError::Invalid { field, message };
        let url = target::parse_url(&new.url).map_err(|m| invalid("url", m))?;
        target::check_destination(&url, self.inner.config.allow_private)
            .await
            .map_err(|m| invalid("url", m))?;
        let events = normalize_events(new.events).map_err(|m| invalid("events", m))?;
        if new.secret.as_deref().is_some_and(|s| s.is_empty()) {
            return Err(invalid(
                "secret",
                "must not be empty; leave it out for unsigned deliveries".into(),
            ));
        }
        let hook = Webhook {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.to_owned(),
            url: url.to_string(),
            events,
            secret: new.secret,
            enabled: true,
            created_at: unix_now(),
        };
        self.inner.store.put_webhook(&hook)?;
        let mut hooks = self.hooks(session_id).to_vec();
        hooks.push(hook.clone());
        self.set_hooks(session_id, hooks);
        tracing::info!(session = %session_id, webhook = %hook.id, url = %hook.url, "webhook registered");
        Ok(hook)
    }

    /// A session's webhooks, in registration order.
    pub fn list(&self, session_id: &str) -> Vec<Webhook> {
        self.hooks(session_id).to_vec()
    }

    /// Deletes a webhook.
    pub fn delete(&self, session_id: &str, id: &str) -> Result<(), WebhookError> {
        if !self.inner.store.delete_webhook(session_id, id)? {
            return Err(WebhookError::NotFound(id.to_owned()));
        }
        let hooks = self
            .hooks(session_id)
            .iter()
            .filter(|h| h.id != id)
            .cloned()
            .collect();
        self.set_hooks(session_id, hooks);
        Ok(())
    }

    /// Turns a webhook on and clears any suspension of its URL at once.
    pub fn enable(&self, session_id: &str, id: &str) -> Result<Webhook, WebhookError> {
        let mut hooks = self.hooks(session_id).to_vec();
        let hook = hooks
            .iter_mut()
            .find(|h| h.id == id)
            .ok_or_else(|| WebhookError::NotFound(id.to_owned()))?;
        hook.enabled = true;
        let hook = hook.clone();
        self.inner.store.put_webhook(&hook)?;
        self.set_hooks(session_id, hooks);
        self.inner.dispatcher.reset(&hook.url);
        Ok(hook)
    }

    /// A session's dead-letter entries, newest first.
    pub fn dlq(&self, session_id: &str) -> Result<Vec<DlqEntry>, WebhookError> {
        Ok(self.inner.store.list_dlq(session_id)?)
    }

    /// Removes an entry and re-delivers its payload through the same signing
    /// and retry path; refused (and kept) while its URL is suspended.
    pub fn replay(&self, session_id: &str, entry_id: &str) -> Result<(), WebhookError> {
        let entry = self
            .inner
            .store
            .get_dlq(session_id, entry_id)?
            .ok_or_else(|| WebhookError::DlqNotFound(entry_id.to_owned()))?;
        if self.inner.dispatcher.is_open(&entry.webhook_url) {
            return Err(WebhookError::CircuitOpen(entry.webhook_url));
        }
        let Some(entry) = self.inner.store.take_dlq(session_id, entry_id)? else {
            return Err(WebhookError::DlqNotFound(entry_id.to_owned()));
        };
        tracing::info!(session = %session_id, entry = %entry_id, url = %entry.webhook_url, "webhook DLQ entry replayed");
        self.inner.dispatcher.enqueue(Delivery {
            delivery_id: entry.delivery_id,
            session_id: entry.session_id,
            webhook_id: entry.webhook_id,
            url: entry.webhook_url,
            secret: entry.secret,
            event: entry.event,
            payload: Bytes::from(entry.payload),
            attempts: 0,
            probe: false,
            generation: self.inner.dispatcher.generation(session_id),
            replayed: true,
        });
        Ok(())
    }

    /// Delivery health of each distinct URL of a session's webhooks.
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
                let h = self.inner.dispatcher.health(&u);
                (u, h)
            })
            .collect()
    }

    /// How many webhook URLs are suspended or probing.
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
    pub fn forget_session(&self, session_id: &str) {
        self.inner.dispatcher.retire_session(session_id);
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

impl Subscriber for Webhooks {
    fn accept(&self, envelope: &Arc<Envelope>) {
        let hooks = self.hooks(&envelope.session_id);
        let mut payload: Option<Bytes> = None;
        let generation = self.inner.dispatcher.generation(&envelope.session_id);
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
            let body = match (&own, &payload) {
                (Some(e), _) => match serde_json::to_vec(e.as_ref()) {
                    Ok(v) => Bytes::from(v),
                    Err(e) => {
                        tracing::error!(error = %e, "could not serialize an envelope");
                        continue;
                    }
                },
                (None, Some(p)) => p.clone(),
                (None, None) => match serde_json::to_vec(envelope.as_ref()) {
                    Ok(v) => payload.insert(Bytes::from(v)).clone(),
                    Err(e) => {
                        tracing::error!(error = %e, "could not serialize an envelope");
                        return;
                    }
                },
            };
            self.inner.dispatcher.submit(Delivery {
                delivery_id: uuid::Uuid::new_v4().to_string(),
                session_id: envelope.session_id.clone(),
                webhook_id: Some(hook.id.clone()),
                url: hook.url.clone(),
                secret: hook.secret.clone(),
                event: envelope.event.as_str().to_owned(),
                payload: body,
                attempts: 0,
                probe: false,
                generation,
                replayed: false,
            });
        }
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
