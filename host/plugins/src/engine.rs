//! The wasmtime side: one [`Engine`] (component model, epoch interruption,
//! pooling allocator, on-disk code cache), checking and compiling uploads,
//! and [`Loaded`] — one compiled plugin with its `InstancePre` and one reused
//! instance behind a mutex.
//!
//! Calls are synchronous: every hook is a short CPU-bound call (the event bus
//! publishes synchronously), bounded by the epoch deadline, so a call blocks
//! its caller for at most the configured timeout.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Trap};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::config::PluginConfig;
use super::limits::Limits;
use crate::store::Store;

pub use super::bindings::{Plugin, PluginPre, exports, switchboard};

pub use exports::switchboard::plugin::meta::{Hooks, Info};
pub use switchboard::plugin::types;

/// The WIT package and version this host serves.
pub const WORLD: &str = "switchboard:plugin@0.1.0";

/// What every call's store carries: the sandbox's WASI (nothing granted),
/// the memory limits, and what the `host` imports need.
pub struct HostState {
    wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limits: Limits,
    /// The plugin id (key-value store owner).
    pub(super) plugin_id: String,
    /// The plugin name (log tag).
    pub(super) name: String,
    /// The configuration of the binding being served.
    pub(super) config: String,
    /// The gateway store (key-value store, contacts).
    pub(super) store: Store,
    /// Cap of the plugin's key-value store in bytes.
    pub(super) kv_cap: usize,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Why an upload was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not WebAssembly, or a core module.
    #[error("{0}")]
    NotAComponent(String),
    /// A component, but not for a world this host serves.
    #[error("{0}")]
    IncompatibleWorld(String),
    /// It failed to compile, instantiate or describe itself.
    #[error("{0}")]
    Invalid(String),
}

impl LoadError {
    /// The API error code.
    pub fn code(&self) -> &'static str {
        match self {
            LoadError::NotAComponent(_) => "not_a_component",
            LoadError::IncompatibleWorld(_) => "incompatible_world",
            LoadError::Invalid(_) => "invalid_component",
        }
    }
}

/// How a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// The epoch deadline passed.
    Timeout,
    /// A trap (including running out of memory) or a host panic.
    Trap(String),
    /// The plugin answered something the host cannot use.
    BadOutput(String),
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::Timeout => f.write_str("timed out"),
            CallFailure::Trap(m) => write!(f, "trapped: {m}"),
            CallFailure::BadOutput(m) => write!(f, "bad output: {m}"),
        }
    }
}

/// The engine and the linker, shared by every plugin.
pub struct PluginEngine {
    engine: Engine,
    linker: Linker<HostState>,
    cfg: PluginConfig,
    stop_ticker: Arc<AtomicBool>,
}

impl Drop for PluginEngine {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

/// Epoch ticks per millisecond of deadline: the ticker advances every millisecond.
const TICK: Duration = Duration::from_millis(1);

impl PluginEngine {
    /// Builds the engine (pooling allocator, falling back to on-demand when
    /// the pool cannot be reserved), the linker and the epoch ticker thread.
    pub fn new(cfg: PluginConfig, cache_dir: Option<&Path>) -> wasmtime::Result<Self> {
        let engine = match Engine::new(&wasm_config(&cfg, true, cache_dir)?) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "plugin pooling allocator unavailable; using on-demand allocation");
                Engine::new(&wasm_config(&cfg, false, cache_dir)?)?
            }
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        super::wasi_io::shadow(&mut linker)?;
        Plugin::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        let stop_ticker = Arc::new(AtomicBool::new(false));
        let (weak, stop) = (engine.weak(), stop_ticker.clone());
        std::thread::Builder::new()
            .name("plugin-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    match weak.upgrade() {
                        Some(e) => e.increment_epoch(),
                        None => return,
                    }
                }
            })?;
        Ok(Self {
            engine,
            linker,
            cfg,
            stop_ticker,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &PluginConfig {
        &self.cfg
    }

    /// Checks and compiles an upload, instantiates it once and asks it to
    /// describe itself.
    pub fn load(
        &self,
        plugin_id: &str,
        bytes: &[u8],
        store: &Store,
    ) -> Result<(Arc<Loaded>, Info, Vec<String>), LoadError> {
        check_header(bytes)?;
        let component = Component::new(&self.engine, bytes)
            .map_err(|e| LoadError::Invalid(format!("the component failed to compile: {e:#}")))?;
        self.check_world(&component)?;
        let pre = self.linker.instantiate_pre(&component).map_err(|e| {
            LoadError::IncompatibleWorld(format!(
                "the component imports something this host does not offer: {e:#}"
            ))
        })?;
        let pre =
            PluginPre::new(pre).map_err(|e| LoadError::IncompatibleWorld(format!("{e:#}")))?;
        let loaded = Arc::new(Loaded {
            engine: self.engine.clone(),
            pre,
            plugin_id: plugin_id.to_owned(),
            name: Mutex::new(plugin_id.to_owned()),
            instance: Mutex::new(None),
            store: store.clone(),
            cfg: self.cfg.clone(),
        });
        let info = loaded
            .call("{}", |p, s| p.switchboard_plugin_meta().call_describe(s))
            .map_err(|e| LoadError::Invalid(format!("`describe` failed: {e}")))?;
        loaded.set_name(&info.name);
        let endpoints = if info.hooks.contains(Hooks::BLAST_ENDPOINT) {
            loaded
                .call("{}", |p, s| {
                    p.switchboard_plugin_blast_endpoint().call_endpoints(s)
                })
                .map_err(|e| LoadError::Invalid(format!("`endpoints` failed: {e}")))?
        } else {
            Vec::new()
        };
        Ok((loaded, info, endpoints))
    }

    fn check_world(&self, component: &Component) -> Result<(), LoadError> {
        let ty = component.component_type();
        let exports: Vec<String> = ty
            .exports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let needed = [
            "meta",
            "event-filter",
            "message-transform",
            "blast-endpoint",
        ];
        let missing: Vec<&str> = needed
            .iter()
            .copied()
            .filter(|i| !exports.contains(&format!("switchboard:plugin/{i}@0.1.0")))
            .collect();
        if !missing.is_empty() {
            let found = exports
                .iter()
                .find(|e| e.starts_with("switchboard:plugin/"))
                .cloned();
            let why = match found {
                Some(other) => format!(
                    "the component targets another world version (it exports `{other}`); this host serves `{WORLD}` world `plugin`"
                ),
                None => format!(
                    "the component does not export the `plugin` world of `{WORLD}` (missing: {}; it exports: {})",
                    missing.join(", "),
                    if exports.is_empty() {
                        "nothing".to_owned()
                    } else {
                        exports.join(", ")
                    }
                ),
            };
            return Err(LoadError::IncompatibleWorld(why));
        }
        Ok(())
    }
}

fn wasm_config(
    cfg: &PluginConfig,
    pooling: bool,
    cache_dir: Option<&Path>,
) -> wasmtime::Result<wasmtime::Config> {
    let mut c = wasmtime::Config::new();
    c.wasm_component_model(true);
    c.epoch_interruption(true);
    c.concurrency_support(false);
    // For `perf`: name the JIT-compiled plugin functions in /tmp/perf-<pid>.map
    // (docs/performance.md, "Profiling").
    if std::env::var_os("SWITCHBOARD_PLUGIN_PERFMAP").is_some() {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    c.max_wasm_stack(1 << 20);
    let mem = cfg.max_memory_bytes as u64;
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        let n = cfg.pool_instances;
        pool.total_component_instances(n)
            .total_core_instances(n * 8)
            .total_memories(n * 2)
            .total_tables(n * 8)
            .total_stacks(n)
            .max_core_instances_per_component(64)
            .max_memories_per_component(4)
            .max_tables_per_component(16)
            .max_memory_size(cfg.max_memory_bytes)
            .max_core_instance_size(1 << 20)
            .max_component_instance_size(1 << 20)
            .table_elements(20_000)
            .max_unused_warm_slots(n.min(8));
        c.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        c.memory_reservation(mem.next_power_of_two().max(1 << 24));
        c.memory_guard_size(1 << 16);
        c.memory_reservation_for_growth(0);
    }
    if let Some(dir) = cache_dir {
        let mut cc = wasmtime::CacheConfig::new();
        cc.with_directory(dir);
        c.cache(Some(wasmtime::Cache::new(cc)?));
    }
    Ok(c)
}

/// Refuses what is not a component before compiling anything.
fn check_header(bytes: &[u8]) -> Result<(), LoadError> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadError::NotAComponent(
            "the upload is not WebAssembly (no `\\0asm` header); upload a component built for the `plugin` world".into(),
        ));
    }
    if bytes[4..8] == [1, 0, 0, 0] {
        return Err(LoadError::NotAComponent(
            "the upload is a core WebAssembly module, not a component; build it as a component (for example `cargo build --target wasm32-wasip2`)".into(),
        ));
    }
    Ok(())
}

/// One compiled plugin version: its `InstancePre` and one reused instance.
pub struct Loaded {
    engine: Engine,
    pre: PluginPre<HostState>,
    plugin_id: String,
    name: Mutex<String>,
    instance: Mutex<Option<(wasmtime::Store<HostState>, Plugin)>>,
    store: Store,
    cfg: PluginConfig,
}

impl Loaded {
    fn set_name(&self, name: &str) {
        *self.name.lock().unwrap_or_else(|p| p.into_inner()) = name.to_owned();
    }

    fn instantiate(&self, name: String) -> wasmtime::Result<(wasmtime::Store<HostState>, Plugin)> {
        let limits = Limits::new(&self.cfg);
        let state = HostState {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            limits,
            plugin_id: self.plugin_id.clone(),
            name,
            config: "{}".into(),
            store: self.store.clone(),
            kv_cap: self.cfg.kv_cap_bytes,
        };
        let mut store = wasmtime::Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(self.deadline_ticks());
        let plugin = self.pre.instantiate(&mut store)?;
        Ok((store, plugin))
    }

    fn deadline_ticks(&self) -> u64 {
        (self.cfg.call_timeout.as_millis() as u64).max(1) + 1
    }

    /// Runs one export on the reused instance, with `config` visible to the
    /// plugin and the epoch deadline armed. A failed call drops the instance
    /// (a trap may leave it inconsistent); the next call instantiates afresh.
    pub fn call<R>(
        &self,
        config: &str,
        f: impl FnOnce(&Plugin, &mut wasmtime::Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, CallFailure> {
        let mut slot = self.instance.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let name = self.name.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let inst = std::panic::catch_unwind(AssertUnwindSafe(|| self.instantiate(name)))
                .map_err(|_| CallFailure::Trap("the host panicked while instantiating".into()))?
                .map_err(classify)?;
            *slot = Some(inst);
        }
        let Some((store, plugin)) = slot.as_mut() else {
            return Err(CallFailure::Trap("no instance".into()));
        };
        store.data_mut().config.clear();
        store.data_mut().config.push_str(config);
        store.data_mut().limits.begin_call();
        store.set_epoch_deadline(self.deadline_ticks());
        let out = std::panic::catch_unwind(AssertUnwindSafe(|| f(plugin, store)));
        match out {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => {
                let failure = match classify(e) {
                    CallFailure::Trap(why) if store.data().limits.memory_refused() => {
                        CallFailure::Trap(format!(
                            "out of memory: the instance reached its cap of {} MiB ({why})",
                            self.cfg.max_memory_bytes >> 20
                        ))
                    }
                    other => other,
                };
                *slot = None;
                Err(failure)
            }
            Err(payload) => {
                *slot = None;
                let why = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(CallFailure::Trap(format!(
                    "the call panicked in the host: {why}"
                )))
            }
        }
    }
}

fn classify(e: wasmtime::Error) -> CallFailure {
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => CallFailure::Timeout,
        Some(t) => CallFailure::Trap(t.to_string()),
        None => CallFailure::Trap(format!("{e:#}")),
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
