//! `hostile-loop`, a hostile test component: its event filter never returns.
//! The host must stop it with its per-call CPU deadline.

use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin};

/// The plugin.
pub struct HostileLoop;

impl Plugin for HostileLoop {
    const NAME: &'static str = "hostile-loop";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter(event: Envelope) -> FilterDecision {
        spin(&event.session_id)
    }
}

sdk::register_plugin!(HostileLoop);

/// Loops forever, in a way the optimizer cannot remove.
fn spin(seed: &str) -> FilterDecision {
    let mut n = seed.len() as u64;
    loop {
        n = std::hint::black_box(n.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}
