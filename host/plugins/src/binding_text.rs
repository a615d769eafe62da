//! The configuration a binding hands its plugin: the JSON text, and the
//! number that names it for the 0.2 `config-id` import.
//!
//! One instance serves every binding of its plugin, so a plugin has to ask
//! on each call which configuration it runs under. Asking for the text
//! copies it into the guest and has the guest compare it with the one it
//! parsed before, about a tenth of a small filter call; asking for a
//! number costs neither.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The next number a configuration gets; 0 is kept for `{}` outside any
/// binding (the calls a load makes).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A binding's configuration text and its number: two values with the
/// same number have the same text for as long as the gateway runs.
#[derive(Debug, Clone)]
pub struct BindingText {
    id: u64,
    text: Arc<str>,
}

impl BindingText {
    /// `text` under a number no other configuration has had.
    pub fn new(text: String) -> BindingText {
        BindingText {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            text: text.into(),
        }
    }

    /// `{}`, number 0: what a plugin sees when no binding invoked it.
    pub fn none() -> BindingText {
        BindingText {
            id: 0,
            text: Arc::from("{}"),
        }
    }

    /// Its number.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its JSON text.
    pub fn text(&self) -> &str {
        &self.text
    }
}
