//! `hostile-trap`, a hostile test component: its event filter panics (a
//! trap in WebAssembly) on every call.

use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin};

/// The plugin.
pub struct HostileTrap;

impl Plugin for HostileTrap {
    const NAME: &'static str = "hostile-trap";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter(event: Envelope) -> FilterDecision {
        panic!("hostile-trap traps on every call (event {})", event.event)
    }
}

sdk::register_plugin!(HostileTrap);
