//! The resource limits of one plugin store (the memory cap, instance,
//! table and memory counts), remembering whether a memory growth was
//! refused during the current call, so that the trap a guest raises when
//! its allocator gives up is reported as running out of memory.

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

use super::config::PluginConfig;

/// The limits of one store.
pub struct Limits {
    limits: StoreLimits,
    /// A memory growth was refused since the current call began.
    memory_refused: bool,
}

impl Limits {
    /// The limits the configuration sets.
    pub fn new(cfg: &PluginConfig) -> Limits {
        Limits {
            limits: StoreLimitsBuilder::new()
                .memory_size(cfg.max_memory_bytes)
                .instances(64)
                .tables(64)
                .memories(8)
                .build(),
            memory_refused: false,
        }
    }

    /// Forgets refusals of earlier calls.
    pub fn begin_call(&mut self) {
        self.memory_refused = false;
    }

    /// Whether a memory growth was refused during this call.
    pub fn memory_refused(&self) -> bool {
        self.memory_refused
    }
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        self.memory_refused |= !allowed;
        Ok(allowed)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.memory_refused = true;
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growth_past_the_cap_is_refused_and_remembered_until_the_next_call() {
        let cfg = PluginConfig {
            max_memory_bytes: 1 << 20,
            ..PluginConfig::default()
        };
        let mut l = Limits::new(&cfg);
        assert!(l.memory_growing(0, 1 << 19, None).unwrap());
        assert!(!l.memory_refused());
        assert!(!l.memory_growing(1 << 19, 2 << 20, None).unwrap());
        assert!(l.memory_refused());
        assert!(l.memory_growing(1 << 19, 1 << 20, None).unwrap());
        assert!(l.memory_refused(), "still this call");
        l.begin_call();
        assert!(!l.memory_refused());
    }
}
