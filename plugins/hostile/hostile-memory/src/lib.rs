//! `hostile-memory`, a hostile test component: its event filter allocates
//! (and touches) memory until allocation fails and the instance traps. The
//! host must contain it with its per-instance memory cap.

use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin};

/// The plugin.
pub struct HostileMemory;

impl Plugin for HostileMemory {
    const NAME: &'static str = "hostile-memory";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const HOOKS: Hooks = Hooks::EVENT_FILTER;

    fn filter(_event: Envelope) -> FilterDecision {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            let chunk = vec![0xA5u8; 1 << 20];
            hoard.push(std::hint::black_box(chunk));
        }
    }
}

sdk::register_plugin!(HostileMemory);
