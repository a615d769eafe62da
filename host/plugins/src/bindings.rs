//! The generated bindings of world `plugin` (`wit/0.1.0`); documented in the WIT files.
#![allow(missing_docs)]

wasmtime::component::bindgen!({
    world: "plugin",
    path: "../../wit/0.1.0",
});
