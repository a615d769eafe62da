//! The stored shapes of the plugin platform: plugins, bindings, and the
//! per-plugin counters the API reports.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A hook a binding attaches a plugin to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// Sees each event envelope before fan-out.
    EventFilter,
    /// Sees each outbound send before the network.
    MessageTransform,
    /// Serves custom blast endpoints.
    BlastEndpoint,
    /// Handles events off the hot path, from the durable outbox, and may
    /// call out with the capabilities its binding grants.
    Integration,
}

impl Hook {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::EventFilter => "event_filter",
            Hook::MessageTransform => "message_transform",
            Hook::BlastEndpoint => "blast_endpoint",
            Hook::Integration => "integration",
        }
    }
}

/// What a binding does when its plugin traps, times out or runs out of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FailurePolicy {
    /// Let the event or send through as if the plugin were not there.
    #[default]
    FailOpen,
    /// Drop the event, reject the send.
    FailClosed,
}

/// Whether a plugin is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PluginStatus {
    /// Loaded and called by its bindings.
    Active,
    /// Failed too many times in a row; not called until re-enabled.
    Quarantined,
}

/// A stored plugin (its component bytes are kept apart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PluginRecord {
    /// Plugin id.
    pub id: String,
    /// Name: the upload's `name`, else what the component says of itself.
    pub name: String,
    /// The component's own version.
    pub version: String,
    /// sha256 of the component bytes, hex.
    pub sha256: String,
    /// Size of the component in bytes.
    pub size: u64,
    /// The hooks the component implements.
    pub hooks: Vec<Hook>,
    /// Blast endpoint keys it serves.
    #[serde(default)]
    pub endpoints: Vec<String>,
    /// The WIT world version it was built for.
    pub world: String,
    /// Unix seconds of the first upload.
    pub created_at: i64,
    /// Unix seconds of the last upload (replace in place).
    pub updated_at: i64,
    /// Active or quarantined.
    pub status: PluginStatus,
    /// Why it was quarantined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantined_reason: Option<String>,
    /// Where it came from: an API upload or the plugin directory.
    #[serde(default)]
    pub source: Source,
    /// Loaded from the plugin directory: the manifest's file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
}

/// Where a plugin or binding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Created through the admin API; stored in the database.
    #[default]
    Api,
    /// Loaded from a manifest in the plugin directory; lives as long as the
    /// file, and is changed by changing the file.
    Directory,
}

/// What an integration binding lets its plugin do beyond computing: each
/// capability is off unless granted, and a call without its grant answers
/// an error naming it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Outbound HTTP through `wasi:http`, to the listed hosts only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpGrant>,
    /// Sending messages through the send core, from the sessions the
    /// binding covers.
    #[serde(default)]
    pub send: bool,
    /// The plugin's private key-value store.
    #[serde(default)]
    pub kv: bool,
    /// Read-only lookups in a session's contacts directory.
    #[serde(default)]
    pub contacts: bool,
}

/// Outbound HTTP an integration may make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HttpGrant {
    /// Hosts it may call: `host` (any port) or `host:port`, compared
    /// case-insensitively with the request's authority.
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub hosts: Vec<String>,
    /// Whether private, loopback and link-local addresses may be reached
    /// (refused by default, as for webhooks).
    #[serde(default)]
    pub allow_private: bool,
    /// Longest wait for a connection, for the first byte of an answer and
    /// between its frames, in milliseconds (10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 300000))]
    pub timeout_ms: Option<u64>,
}

/// Where a plugin applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Binding {
    /// Binding id.
    pub id: String,
    /// The plugin.
    pub plugin_id: String,
    /// The hook.
    pub hook: Hook,
    /// Position in the hook's chain; lower runs first.
    #[serde(default)]
    pub order: i32,
    /// Sessions it applies to; `None` is every session.
    #[serde(default)]
    pub sessions: Option<Vec<String>>,
    /// Filters only: the webhooks it applies to; `None` is every audience.
    #[serde(default)]
    pub webhooks: Option<Vec<String>>,
    /// The configuration the plugin reads with `config()`.
    #[serde(default = "empty_object")]
    pub config: Value,
    /// What a failure of the plugin does.
    #[serde(default)]
    pub failure_policy: FailurePolicy,
    /// Whether it is applied.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Unix seconds of creation.
    #[serde(default)]
    pub created_at: i64,
    /// Where it came from: the admin API or a plugin-directory manifest.
    #[serde(default)]
    pub source: Source,
    /// Integrations only: the events handed to the plugin (`message` when
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    /// Integrations only: the capabilities granted (none when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grants: Option<Grants>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

fn yes() -> bool {
    true
}

impl Binding {
    /// Whether the binding applies to a session.
    pub fn covers(&self, session_id: &str) -> bool {
        self.enabled
            && self
                .sessions
                .as_ref()
                .is_none_or(|s| s.iter().any(|x| x == session_id))
    }

    /// Whether it is a filter scoped to some webhooks only (it runs per
    /// delivery, not once before fan-out).
    pub fn is_webhook_scoped(&self) -> bool {
        self.webhooks.is_some()
    }

    /// Integrations: whether the binding hands `event` of `session_id` to
    /// its plugin.
    pub fn takes(&self, session_id: &str, event: &str) -> bool {
        self.hook == Hook::Integration
            && self.covers(session_id)
            && match &self.events {
                Some(events) => events.iter().any(|e| e == event),
                None => event == "message",
            }
    }

    /// Whether it applies to deliveries to `webhook_id`.
    pub fn covers_webhook(&self, webhook_id: &str) -> bool {
        self.webhooks
            .as_ref()
            .is_some_and(|w| w.iter().any(|x| x == webhook_id))
    }
}
