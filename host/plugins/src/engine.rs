//! The wasmtime side: one [`Engine`] (component model, epoch interruption,
//! pooling allocator, on-disk code cache), checking and compiling uploads,
//! the state every call's store carries, and [`Loaded`] — one compiled
//! plugin with its `InstancePre` and one reused instance behind a mutex.
//!
//! Both contract versions are served side by side; which world a component
//! targets, and how an instance of each is bound, is in `worlds`.
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
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::binding_text::BindingText;
use super::config::PluginConfig;
use super::http_grant::GrantedHttp;
use super::limits::Limits;
use super::model::Hook;
use super::worlds::{Bound, Pre, World, hooks_of, not_served, world_of};
use crate::store::Store;

pub use super::bindings::{v1, v2};

pub use v1::exports::switchboard::plugin::meta::Hooks;
pub use v1::switchboard::plugin::types;

/// What a plugin says of itself once loaded, and what its world tells.
#[derive(Debug, Clone)]
pub struct Described {
    /// Its name.
    pub name: String,
    /// Its own version.
    pub version: String,
    /// The hooks it serves.
    pub hooks: Vec<Hook>,
    /// The blast endpoint keys it serves.
    pub endpoints: Vec<String>,
    /// The world it targets, with the contract version.
    pub world: String,
}

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
    pub(super) config: BindingText,
    /// The gateway store (key-value store, contacts).
    pub(super) store: Store,
    /// The data of the event a 0.2 filter is deciding on, for its
    /// `event-data` call: shared, not copied, and serialised only when asked.
    pub(super) event_data: Option<Arc<serde_json::Value>>,
    /// During an integration call: what its binding grants.
    pub(super) call: Option<super::integrations::CallGrants>,
    /// An integration plugin's instance: its capabilities are closed
    /// outside a call's grants (in `describe` too). Other plugins' host
    /// calls are not restricted.
    pub(super) integration: bool,
    /// `wasi:http` for integration plugins.
    http: WasiHttpCtx,
    /// Their outbound HTTP, held to the current call's grant.
    pub(super) http_hooks: GrantedHttp,
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

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_hooks,
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
    /// Integration plugins may wait on I/O (their HTTP calls): their
    /// linker keeps wasmtime-wasi's blocking `wasi:io` and adds
    /// `wasi:http` and `gateway`. Their calls run off the async workers.
    integration_linker: Linker<HostState>,
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

/// The least time instantiating a plugin, and describing it while it is
/// loaded, may take: a machine under load can take longer than a call's
/// deadline (50 ms by default) to page a component in the first time, and
/// that must not refuse a sound upload. A start routine or `describe` that
/// never returns is still stopped.
const SETUP_DEADLINE: Duration = Duration::from_secs(1);

impl PluginEngine {
    /// Builds the engine (pooling allocator, falling back to on-demand when
    /// the pool cannot be reserved), the linker and the epoch ticker thread.
    pub fn new(cfg: PluginConfig, cache_dir: Option<&Path>) -> wasmtime::Result<Self> {
        let engine = match Engine::new(&wasm_config(&cfg, Memories::PooledWide, cache_dir)?) {
            Ok(e) => e,
            Err(wide) => {
                tracing::warn!(error = %wide, "plugin pool with 4 GiB reservations unavailable (address space limited?); reserving each memory's cap instead");
                match Engine::new(&wasm_config(&cfg, Memories::PooledNarrow, cache_dir)?) {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::warn!(error = %e, "plugin pooling allocator unavailable; using on-demand allocation");
                        Engine::new(&wasm_config(&cfg, Memories::OnDemand, cache_dir)?)?
                    }
                }
            }
        };
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        super::wasi_io::shadow(&mut linker)?;
        v1::Plugin::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
        // The three 0.2 worlds import the same `host` interface: linking it
        // once (through the filter world) serves them all.
        v2::filter::EventFilterPlugin::add_to_linker::<HostState, HasSelf<HostState>>(
            &mut linker,
            |s| s,
        )?;
        let mut integration_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut integration_linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut integration_linker)?;
        v2::filter::EventFilterPlugin::add_to_linker::<HostState, HasSelf<HostState>>(
            &mut integration_linker,
            |s| s,
        )?;
        v2::gateway::add_to_linker::<HostState, HasSelf<HostState>>(
            &mut integration_linker,
            |s| s,
        )?;
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
            integration_linker,
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
    ) -> Result<(Arc<Loaded>, Described), LoadError> {
        check_header(bytes)?;
        let component = Component::new(&self.engine, bytes)
            .map_err(|e| LoadError::Invalid(format!("the component failed to compile: {e:#}")))?;
        let world = world_of(&self.engine, &component)?;
        let linker = match world {
            World::Integration => &self.integration_linker,
            _ => &self.linker,
        };
        let pre = linker.instantiate_pre(&component).map_err(|e| {
            LoadError::IncompatibleWorld(format!(
                "the component imports something this host does not offer: {e:#}"
            ))
        })?;
        let pre = Pre::new(world, pre)?;
        let loaded = Arc::new(Loaded {
            engine: self.engine.clone(),
            pre,
            plugin_id: plugin_id.to_owned(),
            name: Mutex::new(plugin_id.to_owned()),
            instance: Mutex::new(None),
            store: store.clone(),
            cfg: self.cfg.clone(),
        });
        let describe = |p: &Bound, s: &mut wasmtime::Store<HostState>| match p {
            Bound::V1(p) => {
                let i = p.switchboard_plugin_meta().call_describe(s)?;
                Ok((i.name, i.version, hooks_of(i.hooks)))
            }
            Bound::Filter(p) => {
                let i = p.world.switchboard_plugin_meta().call_describe(s)?;
                Ok((i.name, i.version, vec![Hook::EventFilter]))
            }
            Bound::Transform(p) => {
                let i = p.switchboard_plugin_meta().call_describe(s)?;
                Ok((i.name, i.version, vec![Hook::MessageTransform]))
            }
            Bound::Blast(p) => {
                let i = p.switchboard_plugin_meta().call_describe(s)?;
                Ok((i.name, i.version, vec![Hook::BlastEndpoint]))
            }
            Bound::Integration(p) => {
                let i = p.switchboard_plugin_meta().call_describe(s)?;
                Ok((i.name, i.version, vec![Hook::Integration]))
            }
        };
        // An integration's WASI may block (its linker keeps the blocking
        // `wasi:io`), which must not happen on an async worker, where a load
        // at start runs: its first call runs on a thread of its own.
        let described = if world == World::Integration {
            std::thread::scope(|t| {
                t.spawn(|| loaded.call_setup(&BindingText::none(), describe))
                    .join()
                    .unwrap_or_else(|_| {
                        Err(CallFailure::Trap("`describe` panicked in the host".into()))
                    })
            })
        } else {
            loaded.call_setup(&BindingText::none(), describe)
        };
        let (name, version, hooks) =
            described.map_err(|e| LoadError::Invalid(format!("`describe` failed: {e}")))?;
        loaded.set_name(&name);
        let endpoints = if hooks.contains(&Hook::BlastEndpoint) {
            loaded
                .call_setup(&BindingText::none(), |p, s| match p {
                    Bound::V1(p) => p.switchboard_plugin_blast_endpoint().call_endpoints(s),
                    Bound::Blast(p) => p.switchboard_plugin_blast_endpoint().call_endpoints(s),
                    _ => Err(not_served("blast-endpoint")),
                })
                .map_err(|e| LoadError::Invalid(format!("`endpoints` failed: {e}")))?
        } else {
            Vec::new()
        };
        let described = Described {
            name,
            version,
            hooks,
            endpoints,
            world: world.name().to_owned(),
        };
        Ok((loaded, described))
    }
}

/// How plugin instances and their memories are allocated, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Memories {
    /// A pool whose memories keep wasmtime's default 4 GiB reservation and
    /// guard: address space only (64 slots are about 260 GiB of it, nothing
    /// committed), and the compiled plugin skips the bounds check on every
    /// load and store (3–5% of a 0.2 filter call).
    PooledWide,
    /// A pool whose memories reserve only their cap, for a host whose
    /// address space is limited (`ulimit -v`, `LimitAS=`): bounds checked.
    PooledNarrow,
    /// No pool; each memory reserves its cap when made.
    OnDemand,
}

fn wasm_config(
    cfg: &PluginConfig,
    memories: Memories,
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
    if memories != Memories::PooledWide {
        // The cap is `max_memory_size` below (pooled) and the store limiter.
        let mem = cfg.max_memory_bytes as u64;
        c.memory_reservation(mem.next_power_of_two().max(1 << 24));
        c.memory_guard_size(1 << 16);
        c.memory_reservation_for_growth(0);
    }
    if memories != Memories::OnDemand {
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
    pre: Pre,
    plugin_id: String,
    name: Mutex<String>,
    instance: Mutex<Option<(wasmtime::Store<HostState>, Bound)>>,
    store: Store,
    cfg: PluginConfig,
}

impl Loaded {
    fn set_name(&self, name: &str) {
        *self.name.lock().unwrap_or_else(|p| p.into_inner()) = name.to_owned();
    }

    fn instantiate(&self, name: String) -> wasmtime::Result<(wasmtime::Store<HostState>, Bound)> {
        let limits = Limits::new(&self.cfg);
        let state = HostState {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            limits,
            plugin_id: self.plugin_id.clone(),
            name,
            config: BindingText::none(),
            store: self.store.clone(),
            kv_cap: self.cfg.kv_cap_bytes,
            event_data: None,
            call: None,
            integration: matches!(self.pre, Pre::Integration(_)),
            http: WasiHttpCtx::new(),
            http_hooks: GrantedHttp::default(),
        };
        let mut store = wasmtime::Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(self.setup_ticks());
        let plugin = self.pre.instantiate(&mut store)?;
        Ok((store, plugin))
    }

    fn deadline_ticks(&self) -> u64 {
        let timeout = match self.pre {
            Pre::Integration(_) => self.cfg.integration_timeout,
            _ => self.cfg.call_timeout,
        };
        (timeout.as_millis() as u64).max(1) + 1
    }

    /// The deadline of instantiating (the component's start code runs) and
    /// of the calls made while loading: a call's, but never under
    /// [`SETUP_DEADLINE`].
    fn setup_ticks(&self) -> u64 {
        self.deadline_ticks()
            .max(SETUP_DEADLINE.as_millis() as u64 + 1)
    }

    /// [`Loaded::call`] under the setup deadline, for the calls a load makes.
    pub(super) fn call_setup<R>(
        &self,
        config: &BindingText,
        f: impl FnOnce(&Bound, &mut wasmtime::Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, CallFailure> {
        self.call_within(self.setup_ticks(), config, f)
    }

    /// Runs one export on the reused instance, with `config` visible to the
    /// plugin and the epoch deadline armed. A failed call drops the instance
    /// (a trap may leave it inconsistent); the next call instantiates afresh.
    pub fn call<R>(
        &self,
        config: &BindingText,
        f: impl FnOnce(&Bound, &mut wasmtime::Store<HostState>) -> wasmtime::Result<R>,
    ) -> Result<R, CallFailure> {
        self.call_within(self.deadline_ticks(), config, f)
    }

    fn call_within<R>(
        &self,
        ticks: u64,
        config: &BindingText,
        f: impl FnOnce(&Bound, &mut wasmtime::Store<HostState>) -> wasmtime::Result<R>,
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
        if store.data().config.id() != config.id() {
            store.data_mut().config = config.clone();
        }
        store.data_mut().limits.begin_call();
        store.set_epoch_deadline(ticks);
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
