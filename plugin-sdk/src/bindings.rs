//! The generated bindings of the `switchboard:plugin@0.1.0` world `plugin`.
//! Hidden from the docs (public only so that `register_plugin!` can reach
//! it): plugin authors use the typed API of the crate root.

wit_bindgen::generate!({
    path: "../wit/0.1.0",
    world: "plugin",
    pub_export_macro: true,
    export_macro_name: "__export_plugin_world",
    default_bindings_module: "switchboard_plugin_sdk::bindings",
});
