//! Managing bindings: where a plugin applies (hook, order, sessions, for
//! filters optionally webhooks, for integrations the events and the
//! capabilities granted, configuration, failure policy), validated against
//! what the plugin implements and what exists.

use serde::Deserialize;
use serde_json::Value;

use super::model::{Grants, Source};
use super::*;
use crate::domain::event::EventName;

/// A binding as created or updated through the API.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BindingIn {
    /// The plugin (it must exist and implement `hook`).
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub plugin_id: String,
    /// The hook.
    pub hook: Hook,
    /// Position in the chain (0).
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = -2147483648, maximum = 2147483647)
    )]
    pub order: Option<i32>,
    /// Sessions (all when absent or null).
    pub sessions: Option<Vec<String>>,
    /// Webhook ids, each a registered webhook (event filters only; all
    /// audiences when absent or null).
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub webhooks: Option<Vec<String>>,
    /// JSON configuration, an object (`{}`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub config: Option<Value>,
    /// `fail_open` (default) or `fail_closed`.
    pub failure_policy: Option<FailurePolicy>,
    /// Whether it applies (true).
    pub enabled: Option<bool>,
    /// Integrations only: the events handed to the plugin (`["message"]`).
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub events: Option<Vec<String>>,
    /// Integrations only: the capabilities granted (none).
    pub grants: Option<Grants>,
}

fn invalid(field: &'static str, message: impl Into<String>) -> PluginError {
    PluginError::Invalid {
        field,
        message: message.into(),
    }
}

impl Plugins {
    /// Creates a binding (or replaces one when `id` is given).
    pub fn put_binding(&self, id: Option<&str>, b: BindingIn) -> Result<Binding, PluginError> {
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = id {
            self.refuse_directory_binding(id)?;
        }
        let existing = self.inner.store.list_bindings()?;
        let created_at = match id {
            Some(id) => {
                existing
                    .iter()
                    .find(|x| x.id == id)
                    .ok_or_else(|| PluginError::BindingNotFound(id.to_owned()))?
                    .created_at
            }
            None => unix_now(),
        };
        let slot = self
            .slot(&b.plugin_id)
            .ok_or_else(|| invalid("plugin_id", format!("names no plugin (`{}`)", b.plugin_id)))?;
        let hooks = slot
            .record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .hooks
            .clone();
        let id = id
            .map(str::to_owned)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let binding = self.make_binding(id, b, &hooks, created_at, Source::Api)?;
        self.inner.store.put_binding(&binding)?;
        self.rebuild_chains()?;
        Ok(binding)
    }

    /// Validates a binding of a plugin implementing `hooks`.
    pub(super) fn make_binding(
        &self,
        id: String,
        b: BindingIn,
        hooks: &[Hook],
        created_at: i64,
        source: Source,
    ) -> Result<Binding, PluginError> {
        if !hooks.contains(&b.hook) {
            return Err(invalid(
                "hook",
                format!(
                    "`{}` is not implemented by the plugin (it implements: {})",
                    b.hook.as_str(),
                    hooks
                        .iter()
                        .map(|h| h.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let webhooks = match b.webhooks {
            None => None,
            Some(_) if b.hook != Hook::EventFilter => {
                return Err(invalid(
                    "webhooks",
                    "applies to event filters only: transforms and blast endpoints have no webhook audience",
                ));
            }
            Some(w) => Some(self.check_webhooks(w)?),
        };
        if b.hook != Hook::Integration {
            if b.events.is_some() {
                return Err(invalid(
                    "events",
                    "applies to integrations only: other hooks see every event they are called for",
                ));
            }
            if b.grants.is_some() {
                return Err(invalid(
                    "grants",
                    "applies to integrations only: filters, transforms and blast endpoints cannot call out",
                ));
            }
        }
        let events = b.events.map(check_events).transpose()?;
        if let Some(http) = b.grants.as_ref().and_then(|g| g.http.as_ref()) {
            check_hosts(&http.hosts)?;
            if http.timeout_ms.is_some_and(|t| !(1..=300_000).contains(&t)) {
                return Err(invalid(
                    "grants",
                    "`http.timeout_ms` must be between 1 and 300000",
                ));
            }
        }
        let config = b
            .config
            .unwrap_or_else(|| Value::Object(Default::default()));
        if !config.is_object() {
            return Err(invalid("config", "must be a JSON object"));
        }
        Ok(Binding {
            id,
            plugin_id: b.plugin_id,
            hook: b.hook,
            order: b.order.unwrap_or(0),
            sessions: b.sessions,
            webhooks,
            config,
            failure_policy: b.failure_policy.unwrap_or_default(),
            enabled: b.enabled.unwrap_or(true),
            created_at,
            source,
            events,
            grants: b.grants,
        })
    }

    /// Every id must name a registered webhook; duplicates are dropped.
    fn check_webhooks(&self, ids: Vec<String>) -> Result<Vec<String>, PluginError> {
        if ids.is_empty() {
            return Err(invalid(
                "webhooks",
                "must name at least one webhook id (or leave it out for every audience)",
            ));
        }
        let known = self.inner.store.list_all_webhooks()?;
        let mut out: Vec<String> = Vec::new();
        for id in ids {
            if !known.iter().any(|w| w.id == id) {
                return Err(invalid(
                    "webhooks",
                    format!("names no registered webhook (`{id}`)"),
                ));
            }
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Every binding: the stored ones and those of plugin-directory manifests.
    pub fn bindings(&self) -> Result<Vec<Binding>, PluginError> {
        let mut all = self.all_bindings()?;
        all.sort_by(|a, b| {
            (a.hook.as_str(), a.order, a.created_at).cmp(&(b.hook.as_str(), b.order, b.created_at))
        });
        Ok(all)
    }

    /// Deletes a binding.
    pub fn delete_binding(&self, id: &str) -> Result<(), PluginError> {
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        self.refuse_directory_binding(id)?;
        if !self.inner.store.delete_binding(id)? {
            return Err(PluginError::BindingNotFound(id.to_owned()));
        }
        self.rebuild_chains()?;
        Ok(())
    }

    fn refuse_directory_binding(&self, id: &str) -> Result<(), PluginError> {
        let dir = self
            .inner
            .dir_bindings
            .read()
            .unwrap_or_else(|p| p.into_inner());
        match dir.values().flatten().find(|b| b.id == id) {
            Some(b) => Err(PluginError::Managed(format!(
                "binding `{id}` comes from the plugin directory (plugin `{}`); change its manifest instead",
                b.plugin_id
            ))),
            None => Ok(()),
        }
    }
}

/// Every name must be an event the gateway publishes; duplicates are dropped.
fn check_events(events: Vec<String>) -> Result<Vec<String>, PluginError> {
    if events.is_empty() {
        return Err(invalid(
            "events",
            "must name at least one event (or leave it out for `message`)",
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for e in events {
        if EventName::parse(&e).is_none() {
            return Err(invalid("events", format!("names no event (`{e}`)")));
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    Ok(out)
}

/// Each host is a name or address with an optional port, nothing more.
fn check_hosts(hosts: &[String]) -> Result<(), PluginError> {
    if hosts.is_empty() {
        return Err(invalid(
            "grants",
            "`http.hosts` must list at least one host (or leave `http` out)",
        ));
    }
    for h in hosts {
        let ok = !h.is_empty()
            && h.len() <= 253
            && h.parse::<http::uri::Authority>()
                .is_ok_and(|a| a.as_str() == h && !h.contains('@'));
        if !ok {
            return Err(invalid(
                "grants",
                format!("`http.hosts` holds `{h}`, which is not a host or host:port"),
            ));
        }
    }
    Ok(())
}
