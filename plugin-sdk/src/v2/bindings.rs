//! The generated bindings of `switchboard:plugin@0.2.0`. Hidden from the
//! docs (public only so that `register_plugin!` can reach it): plugin
//! authors use the typed API of [`crate::v2`].
//!
//! wit-bindgen makes one set of bindings per world, and the three plugin
//! worlds of 0.2 all export `meta`. Generating each world whole would define
//! the exported macro for `meta` three times in this crate, which Rust
//! refuses. So the worlds are put together from pieces instead, each piece a
//! world of its own written inline here: `host` (the imports and the shared
//! types), `meta`, and one piece per hook. `register_plugin!` exports `meta`
//! plus one hook piece, and the component then targets exactly that hook's
//! world: wit-component merges the pieces' type sections into one world and
//! leaves out the imports nothing calls.
//!
//! The hook pieces take `types` from the `host` piece (wit-bindgen's
//! `with`), so there is one set of WIT types for all of them.
//!
//! Every piece turns on the feature `clocks-timezone`: the package's wasi
//! dependencies gate `wasi:clocks/timezone` behind it, and this wit-bindgen
//! fails to resolve `wasi:cli`'s gated import of it otherwise. No piece
//! uses wasi, so it adds nothing to the bindings or to the imports.

/// The host imports and the shared types (`switchboard:plugin/host` and
/// `types`). No exports, so nothing here is ever required of a plugin.
pub mod host {
    wit_bindgen::generate!({
        inline: "
            package switchboard:plugin-sdk@0.2.0;
            world host-imports {
                import switchboard:plugin/host@0.2.0;
            }
        ",
        path: "../wit/0.2.0",
        features: ["clocks-timezone"],
        world: "switchboard:plugin-sdk/host-imports@0.2.0",
        // `types` comes in with `host`; both are generated here.
        generate_all,
    });
}

/// The `meta` export, shared by every world.
pub mod meta {
    wit_bindgen::generate!({
        inline: "
            package switchboard:plugin-sdk@0.2.0;
            world meta-export {
                export switchboard:plugin/meta@0.2.0;
            }
        ",
        path: "../wit/0.2.0",
        features: ["clocks-timezone"],
        world: "switchboard:plugin-sdk/meta-export@0.2.0",
        pub_export_macro: true,
        export_macro_name: "__export_v2_meta",
        default_bindings_module: "switchboard_plugin_sdk::v2::bindings::meta",
    });
}

/// The `event-filter` export (world `event-filter-plugin` with `meta`).
pub mod event_filter {
    wit_bindgen::generate!({
        inline: "
            package switchboard:plugin-sdk@0.2.0;
            world event-filter-export {
                export switchboard:plugin/event-filter@0.2.0;
            }
        ",
        path: "../wit/0.2.0",
        features: ["clocks-timezone"],
        world: "switchboard:plugin-sdk/event-filter-export@0.2.0",
        with: {
            "switchboard:plugin/types@0.2.0": crate::v2::bindings::host::switchboard::plugin::types,
        },
        pub_export_macro: true,
        export_macro_name: "__export_v2_event_filter",
        default_bindings_module: "switchboard_plugin_sdk::v2::bindings::event_filter",
    });
}

/// The `message-transform` export (world `message-transform-plugin` with `meta`).
pub mod message_transform {
    wit_bindgen::generate!({
        inline: "
            package switchboard:plugin-sdk@0.2.0;
            world message-transform-export {
                export switchboard:plugin/message-transform@0.2.0;
            }
        ",
        path: "../wit/0.2.0",
        features: ["clocks-timezone"],
        world: "switchboard:plugin-sdk/message-transform-export@0.2.0",
        with: {
            "switchboard:plugin/types@0.2.0": crate::v2::bindings::host::switchboard::plugin::types,
        },
        pub_export_macro: true,
        export_macro_name: "__export_v2_message_transform",
        default_bindings_module: "switchboard_plugin_sdk::v2::bindings::message_transform",
    });
}

/// The `blast-endpoint` export (world `blast-endpoint-plugin` with `meta`).
pub mod blast_endpoint {
    wit_bindgen::generate!({
        inline: "
            package switchboard:plugin-sdk@0.2.0;
            world blast-endpoint-export {
                export switchboard:plugin/blast-endpoint@0.2.0;
            }
        ",
        path: "../wit/0.2.0",
        features: ["clocks-timezone"],
        world: "switchboard:plugin-sdk/blast-endpoint-export@0.2.0",
        with: {
            "switchboard:plugin/types@0.2.0": crate::v2::bindings::host::switchboard::plugin::types,
        },
        pub_export_macro: true,
        export_macro_name: "__export_v2_blast_endpoint",
        default_bindings_module: "switchboard_plugin_sdk::v2::bindings::blast_endpoint",
    });
}
