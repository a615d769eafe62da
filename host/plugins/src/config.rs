//! Plugin platform knobs.

use std::path::PathBuf;
use std::time::Duration;

/// Limits and timings of the plugin sandbox, and the plugin directory.
#[derive(Debug, Clone)]
pub struct PluginConfig {
    /// CPU deadline of one call (epoch interruption).
    pub call_timeout: Duration,
    /// Deadline of one integration call, which may wait on HTTP: the
    /// plugin is interrupted once it runs again after this long.
    pub integration_timeout: Duration,
    /// Linear memory cap of one plugin instance, in bytes.
    pub max_memory_bytes: usize,
    /// Size cap of one plugin's key-value store, in bytes (keys plus values).
    pub kv_cap_bytes: usize,
    /// Consecutive failed calls that quarantine a plugin.
    pub quarantine_after: u32,
    /// Instance slots of the pooling allocator.
    pub pool_instances: u32,
    /// The directory plugins are hot-loaded from (manifests plus components);
    /// `None` turns directory loading off.
    pub dir: Option<PathBuf>,
    /// How often the plugin directory is scanned for changes.
    pub dir_poll: Duration,
}

impl Default for PluginConfig {
    fn default() -> Self {
        Self {
            call_timeout: Duration::from_millis(50),
            integration_timeout: Duration::from_secs(30),
            max_memory_bytes: 64 << 20,
            kv_cap_bytes: 1 << 20,
            quarantine_after: 5,
            pool_instances: 32,
            dir: None,
            dir_poll: Duration::from_millis(1000),
        }
    }
}
