//! The generated bindings of every world this host serves; documented in
//! the WIT files. `v1` is world `plugin` of `wit/0.1.0`; `v2` holds the
//! four worlds of `wit/0.2.0`, which share one `types` and one `host`
//! interface (the others reuse the filter world's, so a single `Host`
//! implementation serves all four).
#![allow(missing_docs)]

/// World `plugin` of `switchboard:plugin@0.1.0`.
pub mod v1 {
    wasmtime::component::bindgen!({
        world: "plugin",
        path: "../../wit/0.1.0",
    });
}

/// The worlds of `switchboard:plugin@0.2.0`.
pub mod v2 {
    /// World `event-filter-plugin`; its `types` and `host` are the ones
    /// every 0.2 world uses.
    pub mod filter {
        wasmtime::component::bindgen!({
            world: "event-filter-plugin",
            path: "../../wit/0.2.0",
        });
    }

    /// World `message-transform-plugin`.
    pub mod transform {
        wasmtime::component::bindgen!({
            world: "message-transform-plugin",
            path: "../../wit/0.2.0",
            with: {
                "switchboard:plugin/types@0.2.0": super::filter::switchboard::plugin::types,
                "switchboard:plugin/host@0.2.0": super::filter::switchboard::plugin::host,
            },
        });
    }

    /// World `blast-endpoint-plugin`.
    pub mod blast {
        wasmtime::component::bindgen!({
            world: "blast-endpoint-plugin",
            path: "../../wit/0.2.0",
            with: {
                "switchboard:plugin/types@0.2.0": super::filter::switchboard::plugin::types,
                "switchboard:plugin/host@0.2.0": super::filter::switchboard::plugin::host,
            },
        });
    }

    /// World `integration-plugin`: `wasi:http` comes from
    /// wasmtime-wasi-http, linked beside it.
    pub mod integration {
        wasmtime::component::bindgen!({
            world: "integration-plugin",
            path: "../../wit/0.2.0",
            with: {
                "switchboard:plugin/types@0.2.0": super::filter::switchboard::plugin::types,
                "switchboard:plugin/host@0.2.0": super::filter::switchboard::plugin::host,
                "wasi:http": wasmtime_wasi_http::p2::bindings::http,
                "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
                "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            },
        });
    }

    pub use filter::switchboard::plugin::{host, types};
    pub use integration::switchboard::plugin::gateway;
}
