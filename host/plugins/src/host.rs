//! The `host` imports a plugin may call: logging, its binding's
//! configuration, the time, its private key-value store, a read-only
//! contact lookup and (0.2) the data of the event being filtered. Nothing
//! else. The 0.2 interface is the 0.1 one plus `event-data`, so it
//! delegates to the same code.

use super::engine::HostState;
use super::engine::types::{Contact, LogLevel};
use super::engine::v1::switchboard::plugin::host::Host;
use super::engine::v2;
use crate::domain::contact::StoredContact;
use crate::domain::plugin::Grants;

/// Longest log line kept from a plugin.
const MAX_LOG: usize = 2048;

impl super::engine::types::Host for HostState {}

impl Host for HostState {
    fn log(&mut self, level: LogLevel, message: String) {
        let mut message = message;
        if message.len() > MAX_LOG {
            let mut cut = MAX_LOG;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        let plugin = self.name.as_str();
        match level {
            LogLevel::Trace => tracing::trace!(plugin, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info => tracing::info!(plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            LogLevel::Error => tracing::error!(plugin, "{message}"),
        }
    }

    fn config(&mut self) -> String {
        self.config.text().to_owned()
    }

    fn now_ms(&mut self) -> i64 {
        crate::domain::time::unix_now_ms()
    }

    fn kv_get(&mut self, key: String) -> Option<Vec<u8>> {
        self.store
            .plugin_kv_get(&self.plugin_id, &key)
            .unwrap_or_else(|e| {
                tracing::error!(plugin = %self.name, error = %e, "plugin kv read failed");
                None
            })
    }

    fn kv_set(&mut self, key: String, value: Vec<u8>) -> Result<(), String> {
        match self
            .store
            .plugin_kv_set(&self.plugin_id, &key, &value, self.kv_cap)
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!(
                "the plugin's key-value store would exceed its cap of {} bytes",
                self.kv_cap
            )),
            Err(e) => {
                tracing::error!(plugin = %self.name, error = %e, "plugin kv write failed");
                Err("the gateway could not store the value".into())
            }
        }
    }

    fn kv_delete(&mut self, key: String) {
        if let Err(e) = self.store.plugin_kv_delete(&self.plugin_id, &key) {
            tracing::error!(plugin = %self.name, error = %e, "plugin kv delete failed");
        }
    }

    fn contact(&mut self, session_id: String, jid: String) -> Option<Contact> {
        match self.store.get_contact(&session_id, &jid) {
            Ok(c) => c.map(to_wit),
            Err(e) => {
                tracing::error!(plugin = %self.name, error = %e, "plugin contact lookup failed");
                None
            }
        }
    }
}

impl v2::types::Host for HostState {}

impl v2::host::Host for HostState {
    fn log(&mut self, level: v2::types::LogLevel, message: String) {
        use v2::types::LogLevel as L;
        let level = match level {
            L::Trace => LogLevel::Trace,
            L::Debug => LogLevel::Debug,
            L::Info => LogLevel::Info,
            L::Warn => LogLevel::Warn,
            L::Error => LogLevel::Error,
        };
        Host::log(self, level, message);
    }

    fn config(&mut self) -> String {
        Host::config(self)
    }

    fn config_id(&mut self) -> u64 {
        self.config.id()
    }

    fn now_ms(&mut self) -> i64 {
        Host::now_ms(self)
    }

    fn kv_get(&mut self, key: String) -> Option<Vec<u8>> {
        if !self.granted(|g| g.kv, "kv") {
            return None;
        }
        Host::kv_get(self, key)
    }

    fn kv_set(&mut self, key: String, value: Vec<u8>) -> Result<(), String> {
        if !self.granted(|g| g.kv, "kv") {
            return Err("the binding does not grant `kv` (`grants.kv` is false)".into());
        }
        Host::kv_set(self, key, value)
    }

    fn kv_delete(&mut self, key: String) {
        if self.granted(|g| g.kv, "kv") {
            Host::kv_delete(self, key);
        }
    }

    fn contact(&mut self, session_id: String, jid: String) -> Option<v2::types::Contact> {
        if !self.granted(|g| g.contacts, "contacts") {
            return None;
        }
        if let Some(call) = &self.call
            && call
                .sessions
                .as_ref()
                .is_some_and(|s| !s.contains(&session_id))
        {
            tracing::warn!(plugin = %self.name, session = %session_id, "an integration plugin looked up a contact of a session its binding does not cover");
            return None;
        }
        Host::contact(self, session_id, jid).map(contact_v2)
    }

    fn event_data(&mut self) -> String {
        match &self.event_data {
            // serde_json's writer, not `Display` (twice as fast on 1 KB).
            Some(data) => serde_json::to_string(data.as_ref()).unwrap_or_else(|_| "{}".into()),
            None => "{}".into(),
        }
    }
}

impl HostState {
    /// Whether a capability is open to the call in progress: always for
    /// filters, transforms and blast endpoints (they cannot call out);
    /// for an integration only within a call whose binding grants it. A refusal the
    /// interface cannot answer as an error (a lookup answers "none") is
    /// logged, so the operator sees why.
    fn granted(&self, grant: impl Fn(&Grants) -> bool, name: &str) -> bool {
        match &self.call {
            None if !self.integration => true,
            Some(call) if grant(&call.grants) => true,
            _ => {
                tracing::warn!(plugin = %self.name, capability = name, "an integration plugin used a capability its binding does not grant");
                false
            }
        }
    }
}

/// A contact record in the 0.2 contract's shape (the same fields as 0.1's).
pub fn contact_v2(c: Contact) -> v2::types::Contact {
    v2::types::Contact {
        jid: c.jid,
        phone: c.phone,
        full_name: c.full_name,
        first_name: c.first_name,
        push_name: c.push_name,
        business_name: c.business_name,
    }
}

/// The WIT shape of a directory contact.
pub fn to_wit(c: StoredContact) -> Contact {
    Contact {
        jid: c.jid,
        phone: Some(c.phone).filter(|p| !p.is_empty()),
        full_name: c.full_name,
        first_name: c.first_name,
        push_name: c.push_name,
        business_name: c.business_name,
    }
}
