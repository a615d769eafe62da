//! The worlds a plugin component may target, in both contract versions:
//! which one a component targets (read from its exports), its bindings
//! ready to instantiate ([`Pre`]), and an instance bound by its world
//! ([`Bound`]), which the hooks match on. 0.1.0's world `plugin` exports
//! every hook; each 0.2.0 world exports one.

use wasmtime::Engine;
use wasmtime::component::{Component, InstancePre, TypedFunc};

use super::engine::{Hooks, HostState, LoadError, v1, v2};
use super::event_lowering::EventArg;
use super::model::Hook;

/// The first contract version, still served (world `plugin`).
pub const WORLD_V1: &str = "switchboard:plugin@0.1.0";
/// The current contract version (one world per kind of plugin).
pub const WORLD_V2: &str = "switchboard:plugin@0.2.0";

/// A compiled component's world, ready to instantiate.
pub(super) enum Pre {
    V1(v1::PluginPre<HostState>),
    Filter(v2::filter::EventFilterPluginPre<HostState>),
    Transform(v2::transform::MessageTransformPluginPre<HostState>),
    Blast(v2::blast::BlastEndpointPluginPre<HostState>),
    Integration(v2::integration::IntegrationPluginPre<HostState>),
}

impl Pre {
    /// The world's bindings over a component ready to instantiate; an error
    /// when its exports do not have the types the world declares.
    pub(super) fn new(world: World, pre: InstancePre<HostState>) -> Result<Pre, LoadError> {
        let bad = |e: wasmtime::Error| LoadError::IncompatibleWorld(format!("{e:#}"));
        Ok(match world {
            World::V1 => Pre::V1(v1::PluginPre::new(pre).map_err(bad)?),
            World::Filter => Pre::Filter(v2::filter::EventFilterPluginPre::new(pre).map_err(bad)?),
            World::Transform => {
                Pre::Transform(v2::transform::MessageTransformPluginPre::new(pre).map_err(bad)?)
            }
            World::Blast => Pre::Blast(v2::blast::BlastEndpointPluginPre::new(pre).map_err(bad)?),
            World::Integration => {
                Pre::Integration(v2::integration::IntegrationPluginPre::new(pre).map_err(bad)?)
            }
        })
    }

    /// A new instance in `store`, bound by its world.
    pub(super) fn instantiate(
        &self,
        store: &mut wasmtime::Store<HostState>,
    ) -> wasmtime::Result<Bound> {
        Ok(match self {
            Pre::V1(p) => Bound::V1(p.instantiate(store)?),
            Pre::Filter(p) => Bound::Filter(FilterInstance::new(p, store)?),
            Pre::Transform(p) => Bound::Transform(p.instantiate(store)?),
            Pre::Blast(p) => Bound::Blast(p.instantiate(store)?),
            Pre::Integration(p) => Bound::Integration(p.instantiate(store)?),
        })
    }
}

/// An instance of a plugin, by the world it was built for.
pub enum Bound {
    /// World `plugin` of 0.1.0: every hook exported.
    V1(v1::Plugin),
    /// World `event-filter-plugin` of 0.2.0.
    Filter(FilterInstance),
    /// World `message-transform-plugin` of 0.2.0.
    Transform(v2::transform::MessageTransformPlugin),
    /// World `blast-endpoint-plugin` of 0.2.0.
    Blast(v2::blast::BlastEndpointPlugin),
    /// World `integration-plugin` of 0.2.0.
    Integration(v2::integration::IntegrationPlugin),
}

/// The `filter` export of a 0.2 filter, typed for the borrowed event record.
pub type FilterFunc = TypedFunc<(EventArg<'static>,), (v2::types::FilterDecision,)>;

/// An instance of world `event-filter-plugin`: its bindings (for `meta`)
/// and its `filter` export typed for [`EventArg`], which lowers the event's
/// strings straight from the envelope. (`TypedFunc` is covariant in its
/// parameters, so the `'static` here accepts a record of any lifetime.)
pub struct FilterInstance {
    /// The generated bindings.
    pub world: v2::filter::EventFilterPlugin,
    /// `switchboard:plugin/event-filter@0.2.0#filter`.
    pub filter: FilterFunc,
}

impl FilterInstance {
    fn new(
        pre: &v2::filter::EventFilterPluginPre<HostState>,
        store: &mut wasmtime::Store<HostState>,
    ) -> wasmtime::Result<Self> {
        const INTERFACE: &str = "switchboard:plugin/event-filter@0.2.0";
        let instance = pre.instance_pre().instantiate(&mut *store)?;
        let world = v2::filter::EventFilterPlugin::new(&mut *store, &instance)?;
        let missing = || wasmtime::Error::msg(format!("no export `{INTERFACE}#filter`"));
        let interface = instance
            .get_export_index(&mut *store, None, INTERFACE)
            .ok_or_else(missing)?;
        let index = instance
            .get_export_index(&mut *store, Some(&interface), "filter")
            .ok_or_else(missing)?;
        let filter = instance.get_typed_func(&mut *store, index)?;
        Ok(Self { world, filter })
    }
}

/// A call on a hook the instance's world does not export: the chains only
/// hold plugins by the hooks they serve, so this is a host bug, reported as
/// a failed call rather than a panic.
pub fn not_served(hook: &str) -> wasmtime::Error {
    wasmtime::Error::msg(format!("the plugin's world does not export `{hook}`"))
}

/// The hooks named by a 0.1.0 plugin's `describe` flags.
pub(super) fn hooks_of(h: Hooks) -> Vec<Hook> {
    let mut out = Vec::new();
    if h.contains(Hooks::EVENT_FILTER) {
        out.push(Hook::EventFilter);
    }
    if h.contains(Hooks::MESSAGE_TRANSFORM) {
        out.push(Hook::MessageTransform);
    }
    if h.contains(Hooks::BLAST_ENDPOINT) {
        out.push(Hook::BlastEndpoint);
    }
    out
}

/// The worlds this host serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum World {
    V1,
    Filter,
    Transform,
    Blast,
    Integration,
}

impl World {
    /// The 0.2 hook interface the world exports beside `meta`.
    pub(super) fn hook_interface(self) -> &'static str {
        match self {
            World::V1 => "meta",
            World::Filter => "event-filter",
            World::Transform => "message-transform",
            World::Blast => "blast-endpoint",
            World::Integration => "integration",
        }
    }

    /// The world as plugin records show it.
    pub(super) fn name(self) -> &'static str {
        match self {
            World::V1 => WORLD_V1,
            World::Filter => "switchboard:plugin/event-filter-plugin@0.2.0",
            World::Transform => "switchboard:plugin/message-transform-plugin@0.2.0",
            World::Blast => "switchboard:plugin/blast-endpoint-plugin@0.2.0",
            World::Integration => "switchboard:plugin/integration-plugin@0.2.0",
        }
    }
}

/// Which world the component targets, read from its exports: the 0.2
/// worlds by their one hook interface beside `meta`, 0.1's `plugin` by
/// all four of its exports.
pub(super) fn world_of(engine: &Engine, component: &Component) -> Result<World, LoadError> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let has = |i: &str, v: &str| exports.contains(&format!("switchboard:plugin/{i}@{v}"));
    if has("meta", "0.2.0") {
        let worlds: Vec<World> = [
            World::Filter,
            World::Transform,
            World::Blast,
            World::Integration,
        ]
        .into_iter()
        .filter(|w| has(w.hook_interface(), "0.2.0"))
        .collect();
        return match worlds.as_slice() {
            [one] => Ok(*one),
            [] => Err(LoadError::IncompatibleWorld(format!(
                "the component exports `meta` of `{WORLD_V2}` but none of its hooks; build it for one world: event-filter-plugin, message-transform-plugin, blast-endpoint-plugin or integration-plugin"
            ))),
            _ => Err(LoadError::IncompatibleWorld(format!(
                "the component exports several hooks of `{WORLD_V2}`; a 0.2 plugin targets one world (event-filter-plugin, message-transform-plugin, blast-endpoint-plugin or integration-plugin): upload one component per hook"
            ))),
        };
    }
    let needed = [
        "meta",
        "event-filter",
        "message-transform",
        "blast-endpoint",
    ];
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|i| !has(i, "0.1.0"))
        .collect();
    if missing.is_empty() {
        return Ok(World::V1);
    }
    let found = exports
        .iter()
        .find(|e| e.starts_with("switchboard:plugin/"))
        .cloned();
    let why = match found {
        Some(other) => format!(
            "the component targets a world version this host does not serve (it exports `{other}`); this host serves `{WORLD_V2}` (event-filter-plugin, message-transform-plugin, blast-endpoint-plugin, integration-plugin) and `{WORLD_V1}` world `plugin`"
        ),
        None => format!(
            "the component exports no world this host serves: `{WORLD_V2}` (event-filter-plugin, message-transform-plugin, blast-endpoint-plugin, integration-plugin) or `{WORLD_V1}` world `plugin` (missing: {}; it exports: {})",
            missing.join(", "),
            if exports.is_empty() {
                "nothing".to_owned()
            } else {
                exports.join(", ")
            }
        ),
    };
    Err(LoadError::IncompatibleWorld(why))
}
