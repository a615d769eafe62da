//! # Switchboard plugin SDK
//!
//! Write [Switchboard](https://example.invalid/switchboard) plugins in Rust:
//! event filters, message transforms and blast endpoints, compiled to a
//! WebAssembly component for the WIT world `switchboard:plugin/plugin@0.1.0`
//! (`wit/0.1.0/types.wit` in the repository) and loaded by the gateway at run
//! time, sandboxed.
//!
//! You implement one trait, [`Plugin`], whose hooks all have pass-through
//! defaults, and call [`register_plugin!`] once. The host imports are plain
//! functions: [`log`] (and the macros [`info!`], [`warn!`], …), [`config`]
//! (and [`config_cached`], parsed once per configuration), [`now_ms`],
//! [`kv`] and [`contact`].
//!
//! Filters that run on every event and need only a field or two of its
//! data implement [`Plugin::filter_raw`] (see [`RawEnvelope`]) instead of
//! [`Plugin::filter`]: the data then stays JSON text until they read it.
//!
//! ## Contract 0.2
//!
//! The crate also writes plugins for `switchboard:plugin@0.2.0`
//! (`wit/0.2.0`), where a component targets one world per hook and a
//! filter gets a typed event instead of JSON: see [`v2`]. The 0.2 form of
//! the same macro registers them, for example
//! `register_plugin!(v2 event_filter: MyFilter)`. Everything at the crate
//! root is 0.1 (the types are shared); a 0.2 plugin takes its host
//! functions from [`v2`].
//!
//! ## From `cargo new` to a loaded plugin
//!
//! 1. Create a library crate and make it a `cdylib`:
//!
//!    ```sh
//!    cargo new --lib shout && cd shout
//!    ```
//!
//!    ```toml
//!    # Cargo.toml
//!    [lib]
//!    crate-type = ["cdylib", "rlib"]   # rlib: so `cargo test` can link the unit tests
//!
//!    [dependencies]
//!    switchboard-plugin-sdk = { path = "../switchboard/plugin-sdk" }
//!    serde = { version = "1", features = ["derive"] }
//!    serde_json = "1"
//!
//!    [profile.release]
//!    opt-level = "s"
//!    lto = true
//!    strip = true
//!    ```
//!
//!    (Or copy `examples/plugin-template/`, which is exactly this.)
//!
//! 2. Implement [`Plugin`] and register it:
//!
//!    ```
//!    use switchboard_plugin_sdk::{self as sdk, Envelope, FilterDecision, Hooks, Plugin};
//!
//!    /// Upper-cases the text of every message event.
//!    pub struct Shout;
//!
//!    impl Plugin for Shout {
//!        const NAME: &'static str = "shout";
//!        const VERSION: &'static str = env!("CARGO_PKG_VERSION");
//!        const HOOKS: Hooks = Hooks::EVENT_FILTER;
//!
//!        fn filter(mut event: Envelope) -> FilterDecision {
//!            if event.event != "message" {
//!                return FilterDecision::Keep;
//!            }
//!            let Some(text) = event.data["text"].as_str() else {
//!                return FilterDecision::Keep;
//!            };
//!            sdk::debug!("shouting in session {}", event.session_id);
//!            event.data["text"] = text.to_uppercase().into();
//!            FilterDecision::Replace(event.data)
//!        }
//!    }
//!
//!    sdk::register_plugin!(Shout);
//!    # fn main() {}
//!    ```
//!
//! 3. Build the component (the target installs once with
//!    `rustup target add wasm32-wasip2`):
//!
//!    ```sh
//!    cargo build --release --target wasm32-wasip2
//!    # → target/wasm32-wasip2/release/shout.wasm, a component
//!    ```
//!
//! 4. Upload it to the gateway and bind it to a hook (see `docs/plugins.md`,
//!    section "Loading plugins", for the admin API and the plugin directory):
//!
//!    ```sh
//!    curl -H "Authorization: Bearer $API_TOKEN" -H 'content-type: application/wasm' \
//!         --data-binary @target/wasm32-wasip2/release/shout.wasm \
//!         http://127.0.0.1:3451/api/v1/plugins
//!    ```
//!
//! ## What a plugin can rely on
//!
//! - The host calls only the hooks named in [`Plugin::HOOKS`]; the others
//!   keep their defaults (keep, unchanged, no endpoints).
//! - Instances are pooled and reused; a call may land on any of them and an
//!   instance may be recycled at any time. Keep state that must last in
//!   [`kv`], not in statics.
//! - Each call has a CPU deadline and the instance a memory cap. A panic
//!   traps the call; the binding's failure policy decides what happens to
//!   the event or send, and a plugin that keeps failing is quarantined.
//! - There is no filesystem, network, environment or clock besides
//!   [`now_ms`].
//!
//! ## Testing
//!
//! On any target but `wasm32` the host functions run against the in-process
//! double of [`testing`], so `cargo test` exercises the `Plugin` methods
//! directly (set the configuration with [`testing::set_config`]). The same
//! holds for the traits of [`v2`], whose event data comes from
//! [`testing::set_event_data`].

#[doc(hidden)]
pub mod adapter;
#[doc(hidden)]
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod bindings;
mod config_cache;
mod host;
mod raw;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
mod types;
pub mod v2;

pub use config_cache::config_cached;
pub use host::{config, config_json, contact, kv, log, now_ms};
pub use raw::{JsonStr, RawEnvelope};
pub use serde_json::{self, Value, json};
pub use types::{
    Contact, Envelope, FilterDecision, Hooks, Level, Outbound, Recipient, Send, TransformDecision,
};

/// A Switchboard plugin: implement the hooks you need, name them in
/// [`HOOKS`](Plugin::HOOKS), and export the type with [`register_plugin!`].
///
/// Every hook has a documented pass-through default, so a plugin overrides
/// only what it implements. The methods are associated functions (no
/// `self`): instances are pooled by the host, so there is no per-plugin
/// object to keep; persistent state goes into [`kv`].
pub trait Plugin {
    /// A short name, shown in the admin API and prefixed to log lines.
    const NAME: &'static str;
    /// The plugin's own version (`env!("CARGO_PKG_VERSION")` is a good choice).
    const VERSION: &'static str;
    /// The hooks this plugin implements; the host calls only these.
    const HOOKS: Hooks;

    /// Event filter: decides about one envelope before fan-out to webhooks
    /// and streams. Default: [`FilterDecision::Keep`].
    fn filter(event: Envelope) -> FilterDecision {
        let _ = event;
        FilterDecision::Keep
    }

    /// Event filter, fast path: the host calls this one, with the data
    /// still JSON text. Override it instead of [`filter`](Plugin::filter)
    /// when a decision needs a field or two: read them with
    /// [`RawEnvelope::data_as`] and skip parsing the rest (and pair it with
    /// [`config_cached`]). Default: parses the data and calls
    /// [`filter`](Plugin::filter); data that is not JSON is kept unchanged,
    /// with a warning.
    fn filter_raw(event: RawEnvelope) -> FilterDecision {
        match event.into_envelope() {
            Ok(envelope) => Self::filter(envelope),
            Err(_) => {
                log(Level::Warn, "event data is not JSON; kept unchanged");
                FilterDecision::Keep
            }
        }
    }

    /// Message transform: decides about one send before the network.
    /// Default: [`TransformDecision::Unchanged`].
    fn transform(send: Outbound) -> TransformDecision {
        let _ = send;
        TransformDecision::Unchanged
    }

    /// Blast endpoint: the endpoint keys served (usable as `endpoint` in
    /// `POST …/blast`). Default: none.
    fn endpoints() -> Vec<String> {
        Vec::new()
    }

    /// Blast endpoint: expands one recipient and the job body into concrete
    /// sends of built-in kinds (the host sets `to`). An `Err` fails that
    /// recipient with the message as its reason. Default: an error naming
    /// the unknown endpoint.
    fn expand(endpoint: &str, recipient: Recipient, body: Value) -> Result<Vec<Send>, String> {
        let _ = (recipient, body);
        Err(format!("this plugin serves no blast endpoint `{endpoint}`"))
    }
}

/// Exports a plugin type as the component's implementation of a world.
/// Call it once, at the crate root, in one of these forms:
///
/// | Form | Trait | World |
/// | --- | --- | --- |
/// | `register_plugin!(T)` | [`Plugin`] | `switchboard:plugin/plugin@0.1.0` |
/// | `register_plugin!(v2 event_filter: T)` | [`v2::EventFilter`] | `switchboard:plugin/event-filter-plugin@0.2.0` |
/// | `register_plugin!(v2 message_transform: T)` | [`v2::MessageTransform`] | `switchboard:plugin/message-transform-plugin@0.2.0` |
/// | `register_plugin!(v2 blast_endpoint: T)` | [`v2::BlastEndpoint`] | `switchboard:plugin/blast-endpoint-plugin@0.2.0` |
///
/// A component exports one world, so a crate registers one plugin; a
/// second registration fails to link (both would export `meta`).
///
/// On targets other than `wasm32` it exports nothing, so the crate's unit
/// tests build natively; the 0.2 forms still check there that `T`
/// implements the trait of the world named.
#[macro_export]
macro_rules! register_plugin {
    (v2 event_filter: $plugin:ty) => {
        $crate::__register_v2_plugin!(
            $plugin,
            EventFilter,
            EventFilterAdapter,
            event_filter,
            __export_v2_event_filter
        );
    };
    (v2 message_transform: $plugin:ty) => {
        $crate::__register_v2_plugin!(
            $plugin,
            MessageTransform,
            MessageTransformAdapter,
            message_transform,
            __export_v2_message_transform
        );
    };
    (v2 blast_endpoint: $plugin:ty) => {
        $crate::__register_v2_plugin!(
            $plugin,
            BlastEndpoint,
            BlastEndpointAdapter,
            blast_endpoint,
            __export_v2_blast_endpoint
        );
    };
    ($plugin:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __SwitchboardPlugin = $crate::adapter::Adapter<$plugin>;
            $crate::bindings::__export_plugin_world!(
                __SwitchboardPlugin with_types_in $crate::bindings
            );
        };
    };
}

/// The 0.2 forms of [`register_plugin!`]: exports `meta` and the one hook
/// interface of the world whose trait is `$trait`. Not used directly.
#[doc(hidden)]
#[macro_export]
macro_rules! __register_v2_plugin {
    ($plugin:ty, $trait:ident, $adapter:ident, $hook:ident, $export:ident) => {
        // On every target, so that a plugin registered for the wrong world
        // fails in `cargo test` too, naming the trait it lacks.
        const _: () = {
            fn registered<P: $crate::v2::$trait>() {}
            let _ = registered::<$plugin>;
        };
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __SwitchboardPlugin = $crate::v2::adapter::$adapter<$plugin>;
            $crate::v2::bindings::meta::__export_v2_meta!(
                __SwitchboardPlugin with_types_in $crate::v2::bindings::meta
            );
            $crate::v2::bindings::$hook::$export!(
                __SwitchboardPlugin with_types_in $crate::v2::bindings::$hook
            );
        };
    };
}
