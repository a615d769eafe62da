//! The plugin-directory manifest: one `<name>.toml` per plugin, naming its
//! component file and the bindings it comes with. Parsing is pure; the
//! directory watcher (`directory`) applies it.
//!
//! ```toml
//! name = "router"                    # optional; default: the component's own name
//! wasm = "keyword_router.wasm"       # the component, relative to the directory
//!
//! [[binding]]
//! hook = "event_filter"              # event_filter | message_transform | blast_endpoint
//! order = 10                         # optional, 0
//! sessions = ["alice"]               # optional: only these sessions
//! webhooks = ["<webhook id>"]        # optional, filters only: only these webhooks
//! failure_policy = "fail_closed"     # optional, fail_open
//! enabled = true                     # optional, true
//! config = { keywords = ["order"] }  # optional: what the plugin's config() returns, as JSON
//! ```

use std::path::{Component, Path};

use serde::Deserialize;
use serde_json::Value;

use super::BindingIn;
use super::model::{FailurePolicy, Grants, Hook};

/// Longest manifest file stem (it becomes part of the plugin id).
const MAX_STEM: usize = 64;

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The plugin's name in the API; the component's own name when absent.
    pub name: Option<String>,
    /// The component file, relative to the plugin directory.
    pub wasm: String,
    /// Where the plugin applies.
    #[serde(default, rename = "binding")]
    pub bindings: Vec<ManifestBinding>,
}

/// One `[[binding]]` table: a binding without its plugin id.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestBinding {
    /// The hook.
    pub hook: Hook,
    /// Position in the chain (0).
    pub order: Option<i32>,
    /// Sessions (all when absent).
    pub sessions: Option<Vec<String>>,
    /// Webhook ids (filters only; all audiences when absent).
    pub webhooks: Option<Vec<String>>,
    /// The configuration, a table (`{}`).
    pub config: Option<Value>,
    /// `fail_open` (default) or `fail_closed`.
    pub failure_policy: Option<FailurePolicy>,
    /// Whether it applies (true).
    pub enabled: Option<bool>,
    /// Integrations only: the events handed to the plugin (`["message"]`).
    pub events: Option<Vec<String>>,
    /// Integrations only: the capabilities granted (a `[binding.grants]`
    /// table; none when absent).
    pub grants: Option<Grants>,
}

impl ManifestBinding {
    /// The binding as the API would take it, for plugin `plugin_id`.
    pub fn into_binding_in(self, plugin_id: &str) -> BindingIn {
        BindingIn {
            plugin_id: plugin_id.to_owned(),
            hook: self.hook,
            order: self.order,
            sessions: self.sessions,
            webhooks: self.webhooks,
            config: self.config,
            failure_policy: self.failure_policy,
            enabled: self.enabled,
            events: self.events,
            grants: self.grants,
        }
    }
}

/// Parses a manifest's text; the error is a sentence naming what is wrong.
pub fn parse(text: &str) -> Result<Manifest, String> {
    let m: Manifest =
        toml::from_str(text).map_err(|e| format!("the manifest is not valid: {}", e.message()))?;
    let wasm = Path::new(&m.wasm);
    let inside = !m.wasm.trim().is_empty()
        && wasm
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(format!(
            "`wasm` must name a file inside the plugin directory by a relative path (got `{}`)",
            m.wasm
        ));
    }
    if m.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err("`name` must not be empty; leave it out to use the component's own".into());
    }
    Ok(m)
}

/// The id of the plugin a manifest file stem loads: `dir-<stem>`, stable
/// across restarts (so its key-value store is kept). The stem must be
/// letters, digits, `-` and `_`.
pub fn plugin_id(stem: &str) -> Result<String, String> {
    let ok = !stem.is_empty()
        && stem.len() <= MAX_STEM
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        return Err(format!(
            "the manifest's file name `{stem}` must be 1 to {MAX_STEM} letters, digits, `-` or `_` before `.toml`"
        ));
    }
    Ok(format!("dir-{stem}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_manifest_parses_with_its_bindings_and_json_config() {
        let m = parse(
            r#"
            name = "router"
            wasm = "keyword_router.wasm"

            [[binding]]
            hook = "event_filter"
            order = 3
            sessions = ["alice"]
            failure_policy = "fail_closed"
            config = { keywords = ["order"], mode = "keep", nested = { n = 1 } }
            "#,
        )
        .unwrap();
        assert_eq!(m.name.as_deref(), Some("router"));
        assert_eq!(m.bindings.len(), 1);
        let b = m.bindings[0].clone().into_binding_in("dir-router");
        assert_eq!(b.hook, Hook::EventFilter);
        assert_eq!(b.order, Some(3));
        assert_eq!(b.failure_policy, Some(FailurePolicy::FailClosed));
        assert_eq!(
            b.config,
            Some(json!({"keywords": ["order"], "mode": "keep", "nested": {"n": 1}}))
        );
    }

    #[test]
    fn a_manifest_without_bindings_loads_the_plugin_unbound() {
        let m = parse(r#"wasm = "sub/footer.wasm""#).unwrap();
        assert!(m.bindings.is_empty());
        assert_eq!(m.name, None);
    }

    #[test]
    fn unknown_keys_bad_hooks_and_broken_syntax_are_refused_with_a_reason() {
        let e = parse("wasm = \"a.wasm\"\ncolour = 1").unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e = parse("wasm = \"a.wasm\"\n[[binding]]\nhook = \"teleport\"").unwrap_err();
        assert!(e.contains("teleport"), "{e}");
        assert!(parse("wasm = ").unwrap_err().contains("not valid"));
        assert!(parse("name = \"x\"").unwrap_err().contains("wasm"));
    }

    #[test]
    fn a_component_path_outside_the_directory_is_refused() {
        for bad in ["../x.wasm", "/etc/x.wasm", "a/../../x.wasm", " "] {
            let e = parse(&format!("wasm = \"{bad}\"")).unwrap_err();
            assert!(e.contains("inside the plugin directory"), "{bad}: {e}");
        }
    }

    #[test]
    fn plugin_ids_come_from_safe_file_stems_only() {
        assert_eq!(plugin_id("router_2-b").unwrap(), "dir-router_2-b");
        assert!(plugin_id("a b").is_err());
        assert!(plugin_id("").is_err());
        assert!(plugin_id(&"x".repeat(65)).is_err());
    }
}
