//! The plugin platform's host: WebAssembly components (the worlds of
//! `wit/0.2.0`, and world `plugin` of `wit/0.1.0`) loaded into a sandboxed
//! wasmtime engine, bound to hooks in the data paths, managed through the
//! admin API and persisted in the store.
//!
//! - [`engine`]: the engine, compiling and checking uploads (which world of
//!   which contract version), one reused instance per plugin version, the
//!   epoch deadline.
//! - `event_record`: the typed event record 0.2 filters receive.
//! - `integrations`: integration plugins: the calls the outbox dispatcher
//!   makes, their grants, the `gateway` import; `http_grant`: their
//!   outbound HTTP, held to the grant.
//! - [`host`]: the imports a plugin may call.
//! - `limits`: the memory cap of a store, and telling out-of-memory traps.
//! - [`model`]: plugins and bindings as stored.
//! - [`stats`]: per-plugin counters.
//! - `wasi_io`: the WASI I/O plugins reach, never blocking on the runtime
//!   around the caller.
//! - `registry` (this file): the live set of plugins and bindings, replace in
//!   place (an `ArcSwap` per plugin: calls in flight finish on the old
//!   version), quarantine, and the hooks the data paths call:
//!   [`Plugins::filter`] (inside `EventBus::publish`), [`Plugins::transform`]
//!   (inside the send core) and [`Plugins::expand`] (the blast worker).

mod binding_ops;
pub mod binding_text;
mod bindings;
pub mod config;
pub mod directory;
pub mod engine;
mod event_lowering;
mod event_record;
mod filters;
mod hooks;
pub mod host;
mod http_grant;
mod integrations;
mod limits;
pub mod manifest;
pub use crate::domain::plugin as model;
pub mod stats;
mod wasi_io;
mod worlds;

pub use binding_ops::BindingIn;

use switchboard_domain as domain;
use switchboard_store as store;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use arc_swap::ArcSwap;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::domain::time::unix_now;
use crate::store::{Store, StoreError};
use binding_text::BindingText;
use config::PluginConfig;
use engine::{CallFailure, LoadError, Loaded, PluginEngine};
use model::{Binding, FailurePolicy, Hook, PluginRecord, PluginStatus, Source};
use stats::{Stats, StatsView};

/// Why a plugin operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// No plugin with this id.
    #[error("no plugin with id `{0}`")]
    NotFound(String),
    /// No binding with this id.
    #[error("no plugin binding with id `{0}`")]
    BindingNotFound(String),
    /// The component was refused.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A binding field is invalid.
    #[error("`{field}` {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The plugin or binding is managed by the plugin directory.
    #[error("{0}")]
    Managed(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A plugin as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PluginView {
    /// The stored record.
    #[serde(flatten)]
    pub record: PluginRecord,
    /// Its counters since the gateway started.
    pub counters: StatsView,
}

/// One live plugin: its record, the current version, its counters.
struct Slot {
    record: Mutex<PluginRecord>,
    loaded: ArcSwap<Loaded>,
    stats: Stats,
    quarantined: AtomicBool,
}

/// A binding ready for the hot path, with its plugin's slot resolved.
struct Active {
    binding: Binding,
    config_text: BindingText,
    /// `None` when the plugin is not loaded (a stored plugin that failed to load).
    slot: Option<Arc<Slot>>,
}

/// The enabled bindings in chain order, rebuilt on every change.
#[derive(Default)]
struct Chains {
    /// By hook; event filters here are the unscoped ones (run before fan-out).
    /// Shared slices: a hook's chain is taken for every event or send, so
    /// taking it costs one reference count, not a copy.
    by_hook: HashMap<Hook, Arc<[Arc<Active>]>>,
    /// Event filters scoped to some webhooks (run per delivery).
    scoped_filters: Vec<Arc<Active>>,
}

struct Inner {
    engine: PluginEngine,
    store: Store,
    slots: RwLock<HashMap<String, Arc<Slot>>>,
    chains: ArcSwap<Chains>,
    /// Bindings declared by plugin-directory manifests, by plugin id (not stored).
    dir_bindings: RwLock<HashMap<String, Vec<Binding>>>,
    /// What the directory watcher knows of each manifest.
    directory: Mutex<directory::DirState>,
    /// Serializes admin changes.
    admin: Mutex<()>,
    /// How integration plugins send, while wired in (the send core holds
    /// the registry too: the link is cut at shutdown so both can drop).
    sender: RwLock<Option<Arc<dyn crate::domain::hooks::PluginSender>>>,
}

/// The plugin registry; cheap to clone.
#[derive(Clone)]
pub struct Plugins {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins").finish_non_exhaustive()
    }
}

impl Plugins {
    /// Builds the engine and loads every stored plugin and binding. A stored
    /// plugin that no longer loads is logged and left out.
    pub fn start(store: Store, cfg: PluginConfig, data_dir: &Path) -> anyhow::Result<Plugins> {
        let cache = data_dir.join("plugin-cache");
        let engine = PluginEngine::new(cfg, Some(&cache))
            .map_err(|e| anyhow::anyhow!("could not build the plugin engine: {e:#}"))?;
        let plugins = Plugins {
            inner: Arc::new(Inner {
                engine,
                store: store.clone(),
                slots: RwLock::new(HashMap::new()),
                chains: ArcSwap::from_pointee(Chains::default()),
                dir_bindings: RwLock::new(HashMap::new()),
                directory: Mutex::new(directory::DirState::default()),
                admin: Mutex::new(()),
                sender: RwLock::new(None),
            }),
        };
        let mut loaded = 0;
        for (record, bytes) in store.list_plugins_with_bytes()? {
            match plugins.inner.engine.load(&record.id, &bytes, &store) {
                Ok((l, _)) => {
                    plugins.insert_slot(record, l);
                    loaded += 1;
                }
                Err(e) => {
                    tracing::error!(plugin = %record.name, id = %record.id, error = %e, "stored plugin could not be loaded; it stays stored but is not called");
                }
            }
        }
        plugins.rebuild_chains()?;
        if loaded > 0 {
            tracing::info!(plugins = loaded, "plugins restored");
        }
        Ok(plugins)
    }

    fn insert_slot(&self, record: PluginRecord, loaded: Arc<Loaded>) {
        let quarantined = record.status == PluginStatus::Quarantined;
        let slot = Arc::new(Slot {
            record: Mutex::new(record.clone()),
            loaded: ArcSwap::new(loaded),
            stats: Stats::default(),
            quarantined: AtomicBool::new(quarantined),
        });
        self.write_slots().insert(record.id, slot);
    }

    fn write_slots(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Arc<Slot>>> {
        self.inner.slots.write().unwrap_or_else(|p| p.into_inner())
    }

    fn slot(&self, id: &str) -> Option<Arc<Slot>> {
        self.inner
            .slots
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// The stored bindings and those of directory manifests.
    fn all_bindings(&self) -> Result<Vec<Binding>, StoreError> {
        let mut all = self.inner.store.list_bindings()?;
        let dir = self
            .inner
            .dir_bindings
            .read()
            .unwrap_or_else(|p| p.into_inner());
        all.extend(dir.values().flatten().cloned());
        Ok(all)
    }

    fn rebuild_chains(&self) -> Result<(), StoreError> {
        let mut all = self.all_bindings()?;
        all.retain(|b| b.enabled);
        all.sort_by(|a, b| (a.order, a.created_at, &a.id).cmp(&(b.order, b.created_at, &b.id)));
        let mut chains = Chains::default();
        let mut by_hook: HashMap<Hook, Vec<Arc<Active>>> = HashMap::new();
        for b in all {
            let active = Arc::new(Active {
                config_text: BindingText::new(b.config.to_string()),
                slot: self.slot(&b.plugin_id),
                binding: b,
            });
            if active.binding.is_webhook_scoped() {
                chains.scoped_filters.push(active);
            } else {
                by_hook.entry(active.binding.hook).or_default().push(active);
            }
        }
        chains.by_hook = by_hook.into_iter().map(|(h, c)| (h, c.into())).collect();
        self.inner.chains.store(Arc::new(chains));
        Ok(())
    }

    fn view(&self, slot: &Slot) -> PluginView {
        PluginView {
            record: slot
                .record
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            counters: slot.stats.view(),
        }
    }

    /// Refuses API changes to a plugin the directory manages.
    fn refuse_directory_plugin(
        &self,
        slot: &Slot,
        id: &str,
        what: &str,
    ) -> Result<(), PluginError> {
        let r = slot.record.lock().unwrap_or_else(|p| p.into_inner());
        match (r.source, &r.manifest) {
            (Source::Directory, manifest) => Err(PluginError::Managed(format!(
                "plugin `{id}` is loaded from the plugin directory (manifest `{}`); {what} the file instead",
                manifest.as_deref().unwrap_or("?")
            ))),
            (Source::Api, _) => Ok(()),
        }
    }

    /// Checks, compiles and stores a new plugin. Blocking (compiles).
    pub fn upload(&self, bytes: &[u8], name: Option<String>) -> Result<PluginView, PluginError> {
        let id = uuid::Uuid::new_v4().to_string();
        let (loaded, info) = self.inner.engine.load(&id, bytes, &self.inner.store)?;
        let now = unix_now();
        let record = PluginRecord {
            id: id.clone(),
            name: name.filter(|n| !n.trim().is_empty()).unwrap_or(info.name),
            version: info.version,
            sha256: hex::encode(Sha256::digest(bytes)),
            size: bytes.len() as u64,
            hooks: info.hooks,
            endpoints: info.endpoints,
            world: info.world,
            created_at: now,
            updated_at: now,
            status: PluginStatus::Active,
            quarantined_reason: None,
            source: Source::Api,
            manifest: None,
        };
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        self.inner.store.put_plugin(&record, Some(bytes))?;
        tracing::info!(plugin = %record.name, id = %record.id, version = %record.version, hooks = ?record.hooks, "plugin loaded");
        self.insert_slot(record, loaded);
        let slot = self.slot(&id).ok_or(PluginError::NotFound(id))?;
        Ok(self.view(&slot))
    }

    /// Replaces a plugin's component in place: calls in flight finish on the
    /// old version, every call after the swap uses the new one. Blocking.
    pub fn replace(&self, id: &str, bytes: &[u8]) -> Result<PluginView, PluginError> {
        let slot = self
            .slot(id)
            .ok_or_else(|| PluginError::NotFound(id.to_owned()))?;
        self.refuse_directory_plugin(&slot, id, "replace")?;
        let (loaded, info) = self.inner.engine.load(id, bytes, &self.inner.store)?;
        let hooks = info.hooks;
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        let orphaned: Vec<&'static str> = self
            .inner
            .store
            .list_bindings()?
            .iter()
            .filter(|b| b.plugin_id == id && !hooks.contains(&b.hook))
            .map(|b| b.hook.as_str())
            .collect();
        if !orphaned.is_empty() {
            return Err(LoadError::IncompatibleWorld(format!(
                "the new version does not implement hooks the plugin is bound to ({}); delete those bindings first",
                orphaned.join(", ")
            ))
            .into());
        }
        let record = {
            let mut r = slot.record.lock().unwrap_or_else(|p| p.into_inner());
            r.version = info.version;
            r.sha256 = hex::encode(Sha256::digest(bytes));
            r.size = bytes.len() as u64;
            r.hooks = hooks;
            r.endpoints = info.endpoints;
            r.world = info.world;
            r.updated_at = unix_now();
            r.clone()
        };
        self.inner.store.put_plugin(&record, Some(bytes))?;
        slot.loaded.store(loaded);
        tracing::info!(plugin = %record.name, id, version = %record.version, "plugin replaced in place");
        Ok(self.view(&slot))
    }

    /// Deletes a plugin and its bindings.
    pub fn delete(&self, id: &str) -> Result<(), PluginError> {
        if let Some(slot) = self.slot(id) {
            self.refuse_directory_plugin(&slot, id, "remove")?;
        }
        let _g = self.inner.admin.lock().unwrap_or_else(|p| p.into_inner());
        let existed = self.inner.store.delete_plugin(id)?;
        let had = self.write_slots().remove(id).is_some();
        if !existed && !had {
            return Err(PluginError::NotFound(id.to_owned()));
        }
        self.rebuild_chains()?;
        tracing::info!(id, "plugin deleted");
        Ok(())
    }

    /// Lifts a quarantine.
    pub fn enable(&self, id: &str) -> Result<PluginView, PluginError> {
        let slot = self
            .slot(id)
            .ok_or_else(|| PluginError::NotFound(id.to_owned()))?;
        let record = {
            let mut r = slot.record.lock().unwrap_or_else(|p| p.into_inner());
            r.status = PluginStatus::Active;
            r.quarantined_reason = None;
            r.clone()
        };
        if record.source == Source::Api {
            self.inner.store.put_plugin(&record, None)?;
        }
        slot.stats.succeed();
        slot.quarantined.store(false, Ordering::Release);
        tracing::info!(plugin = %record.name, id, "plugin re-enabled");
        Ok(self.view(&slot))
    }

    /// Every loaded plugin, by name.
    pub fn list(&self) -> Vec<PluginView> {
        let slots: Vec<Arc<Slot>> = self
            .inner
            .slots
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut out: Vec<PluginView> = slots.iter().map(|s| self.view(s)).collect();
        out.sort_by(|a, b| (&a.record.name, &a.record.id).cmp(&(&b.record.name, &b.record.id)));
        out
    }

    /// One plugin.
    pub fn get(&self, id: &str) -> Result<PluginView, PluginError> {
        self.slot(id)
            .map(|s| self.view(&s))
            .ok_or_else(|| PluginError::NotFound(id.to_owned()))
    }

    /// The plugin-side limits and timings.
    pub fn config(&self) -> &PluginConfig {
        self.inner.engine.config()
    }

    /// Counts a failed call, logs it, and quarantines the plugin after too
    /// many in a row.
    fn failed(&self, slot: &Slot, active: &Active, failure: &CallFailure) {
        let n = slot.stats.fail(*failure == CallFailure::Timeout);
        let name = slot
            .record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .name
            .clone();
        tracing::warn!(plugin = %name, binding = %active.binding.id, hook = active.binding.hook.as_str(), error = %failure, in_a_row = n, "plugin call failed");
        if n >= u64::from(self.config().quarantine_after)
            && !slot.quarantined.swap(true, Ordering::AcqRel)
        {
            let calls = if n == 1 { "call" } else { "calls" };
            let reason = format!("{n} failed {calls} in a row; the last {failure}");
            let record = {
                let mut r = slot.record.lock().unwrap_or_else(|p| p.into_inner());
                r.status = PluginStatus::Quarantined;
                r.quarantined_reason = Some(reason.clone());
                r.clone()
            };
            if record.source == Source::Api
                && let Err(e) = self.inner.store.put_plugin(&record, None)
            {
                tracing::error!(plugin = %name, error = %e, "could not store the quarantine");
            }
            tracing::error!(plugin = %name, id = %record.id, %reason, "plugin quarantined; POST /api/v1/plugins/{{id}}/enable lifts it");
        }
    }
}

impl Active {
    fn fails_closed(&self) -> bool {
        self.binding.failure_policy == FailurePolicy::FailClosed
    }
}
