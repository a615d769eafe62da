//! Plugins, their component bytes, their bindings and their key-value stores.

use redb::ReadableTable;

use super::tables::{PLUGIN_BINDINGS, PLUGIN_BLOBS, PLUGIN_KV, PLUGINS};
use super::{Store, StoreResult, decode, encode};
use crate::domain::plugin::{Binding, PluginRecord};

impl Store {
    /// Stores (or replaces) a plugin and its component bytes in one transaction.
    pub fn put_plugin(&self, record: &PluginRecord, bytes: Option<&[u8]>) -> StoreResult<()> {
        let doc = encode(record)?;
        self.write(|tx| {
            tx.open_table(PLUGINS)?
                .insert(record.id.as_str(), doc.as_slice())?;
            if let Some(bytes) = bytes {
                tx.open_table(PLUGIN_BLOBS)?
                    .insert(record.id.as_str(), bytes)?;
            }
            Ok(())
        })
    }

    /// Every plugin with its component bytes.
    pub fn list_plugins_with_bytes(&self) -> StoreResult<Vec<(PluginRecord, Vec<u8>)>> {
        self.read(|tx| {
            let t = tx.open_table(PLUGINS)?;
            let blobs = tx.open_table(PLUGIN_BLOBS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                let (k, v) = row?;
                let rec: PluginRecord = decode(v.value())?;
                let bytes = blobs
                    .get(k.value())?
                    .map(|b| b.value().to_vec())
                    .unwrap_or_default();
                out.push((rec, bytes));
            }
            Ok(out)
        })
    }

    /// Deletes a plugin, its bytes, its bindings and its key-value store.
    pub fn delete_plugin(&self, id: &str) -> StoreResult<bool> {
        self.write(|tx| {
            let existed = tx.open_table(PLUGINS)?.remove(id)?.is_some();
            tx.open_table(PLUGIN_BLOBS)?.remove(id)?;
            let mut b = tx.open_table(PLUGIN_BINDINGS)?;
            let mut gone = Vec::new();
            for row in b.iter()? {
                let (k, v) = row?;
                let binding: Binding = decode(v.value())?;
                if binding.plugin_id == id {
                    gone.push(k.value().to_owned());
                }
            }
            for k in gone {
                b.remove(k.as_str())?;
            }
            let mut kv = tx.open_table(PLUGIN_KV)?;
            kv.retain_in((id, "")..(id, "\u{10FFFF}"), |_, _| false)?;
            Ok(existed)
        })
    }

    /// Stores (or replaces) a binding.
    pub fn put_binding(&self, binding: &Binding) -> StoreResult<()> {
        let doc = encode(binding)?;
        self.write(|tx| {
            tx.open_table(PLUGIN_BINDINGS)?
                .insert(binding.id.as_str(), doc.as_slice())?;
            Ok(())
        })
    }

    /// Every binding.
    pub fn list_bindings(&self) -> StoreResult<Vec<Binding>> {
        self.read(|tx| {
            let t = tx.open_table(PLUGIN_BINDINGS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                out.push(decode(row?.1.value())?);
            }
            Ok(out)
        })
    }

    /// Deletes a binding; `false` when it did not exist.
    pub fn delete_binding(&self, id: &str) -> StoreResult<bool> {
        self.write(|tx| Ok(tx.open_table(PLUGIN_BINDINGS)?.remove(id)?.is_some()))
    }

    /// A value of a plugin's key-value store.
    pub fn plugin_kv_get(&self, plugin_id: &str, key: &str) -> StoreResult<Option<Vec<u8>>> {
        self.read(|tx| {
            Ok(tx
                .open_table(PLUGIN_KV)?
                .get((plugin_id, key))?
                .map(|v| v.value().to_vec()))
        })
    }

    /// Stores a value unless the plugin's store would exceed `cap` bytes (keys
    /// and values counted); `Ok(false)` when it would.
    pub fn plugin_kv_set(
        &self,
        plugin_id: &str,
        key: &str,
        value: &[u8],
        cap: usize,
    ) -> StoreResult<bool> {
        self.write(|tx| {
            let mut t = tx.open_table(PLUGIN_KV)?;
            let mut total = 0usize;
            for row in t.range((plugin_id, "")..(plugin_id, "\u{10FFFF}"))? {
                let (k, v) = row?;
                if k.value().1 != key {
                    total += k.value().1.len() + v.value().len();
                }
            }
            if total + key.len() + value.len() > cap {
                return Ok(false);
            }
            t.insert((plugin_id, key), value)?;
            Ok(true)
        })
    }

    /// Removes a value.
    pub fn plugin_kv_delete(&self, plugin_id: &str, key: &str) -> StoreResult<()> {
        self.write(|tx| {
            tx.open_table(PLUGIN_KV)?.remove((plugin_id, key))?;
            Ok(())
        })
    }
}
