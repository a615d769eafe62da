//! Managing bindings: where a plugin applies (hook, order, sessions,
//! configuration, failure policy), validated against what the plugin implements.

use serde::Deserialize;
use serde_json::Value;

use super::*;

/// A binding as created or updated through the API.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindingIn {
    /// The plugin.
    pub plugin_id: String,
    /// The hook.
    pub hook: Hook,
    /// Position in the chain (0).
    pub order: Option<i32>,
    /// Sessions (all when absent or null).
    pub sessions: Option<Vec<String>>,
    /// Webhooks (filters only; all when absent or null).
    pub webhooks: Option<Vec<String>>,
    /// JSON configuration (`{}`).
    pub config: Option<Value>,
    /// `fail_open` (default) or `fail_closed`.
    pub failure_policy: Option<FailurePolicy>,
    /// Whether it applies (true).
    pub enabled: Option<bool>,
}

impl Plugins {
    /// Creates a binding (or replaces one when `id` is given).
    pub fn put_binding(&self, id: Option<&str>, b: BindingIn) -> Result<Binding, PluginError> {
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
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
            .ok_or_else(|| PluginError::Invalid {
                field: "plugin_id",
                message: format!("names no plugin (`{}`)", b.plugin_id),
            })?;
        let hooks = slot
            .record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .hooks
            .clone();
        if !hooks.contains(&b.hook) {
            return Err(PluginError::Invalid {
                field: "hook",
                message: format!(
                    "`{}` is not implemented by the plugin (it implements: {})",
                    b.hook.as_str(),
                    hooks
                        .iter()
                        .map(|h| h.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        if b.webhooks.is_some() {
            return Err(PluginError::Invalid {
                field: "webhooks",
                message: "is not supported yet: a filter applies to every audience of its sessions"
                    .into(),
            });
        }
        let config = b
            .config
            .unwrap_or_else(|| Value::Object(Default::default()));
        if !config.is_object() {
            return Err(PluginError::Invalid {
                field: "config",
                message: "must be a JSON object".into(),
            });
        }
        let binding = Binding {
            id: id
                .map(str::to_owned)
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            plugin_id: b.plugin_id,
            hook: b.hook,
            order: b.order.unwrap_or(0),
            sessions: b.sessions,
            webhooks: None,
            config,
            failure_policy: b.failure_policy.unwrap_or_default(),
            enabled: b.enabled.unwrap_or(true),
            created_at,
        };
        self.inner.store.put_binding(&binding)?;
        self.rebuild_chains()?;
        Ok(binding)
    }

    /// Every binding.
    pub fn bindings(&self) -> Result<Vec<Binding>, PluginError> {
        let mut all = self.inner.store.list_bindings()?;
        all.sort_by(|a, b| {
            (a.hook.as_str(), a.order, a.created_at).cmp(&(b.hook.as_str(), b.order, b.created_at))
        });
        Ok(all)
    }

    /// Deletes a binding.
    pub fn delete_binding(&self, id: &str) -> Result<(), PluginError> {
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        if !self.inner.store.delete_binding(id)? {
            return Err(PluginError::BindingNotFound(id.to_owned()));
        }
        self.rebuild_chains()?;
        Ok(())
    }
}
