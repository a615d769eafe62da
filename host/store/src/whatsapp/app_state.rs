//! The crate's `AppSyncStore` on `WA_APP_STATE`: sync keys (JSON), the
//! latest key id, collection versions (JSON `HashState`) and mutation MACs
//! keyed `collection \0 index MAC`; and [`VersionWrites`], the count of
//! version writes a caller watches to learn whether a sync went through.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use whatsapp_rust::wacore::appstate::hash::HashState;
use whatsapp_rust::wacore::appstate::processor::AppStateMutationMAC;
use whatsapp_rust::wacore::store::error::Result as WaResult;
use whatsapp_rust::wacore::store::traits::{AppStateSyncKey, AppSyncStore};

use super::kv::{WaStore, from_json, scan, to_json};
use crate::tables::WA_APP_STATE;

const SYNC_KEY: &str = "sync_key";
const LATEST_KEY: &str = "latest_sync_key";
const VERSION: &str = "version";
const MUTATION_MAC: &str = "mutation_mac";

/// The key of a mutation MAC: the collection, a NUL, the index MAC.
fn mac_key(name: &str, index_mac: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(name.len() + 1 + index_mac.len());
    k.extend_from_slice(name.as_bytes());
    k.push(0);
    k.extend_from_slice(index_mac);
    k
}

/// How many times each collection's version was written, since the backend
/// was made (memory only: it tells a caller what happened while it watched,
/// nothing a restart needs).
#[derive(Debug, Default)]
pub struct VersionWrites(Mutex<HashMap<String, u64>>);

impl VersionWrites {
    /// The writes of collection `name` so far.
    pub fn of(&self, name: &str) -> u64 {
        let counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        counts.get(name).copied().unwrap_or(0)
    }

    fn bump(&self, name: &str) {
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *counts.entry(name.to_owned()).or_default() += 1;
    }
}

#[async_trait]
impl AppSyncStore for WaStore {
    async fn get_sync_key(&self, key_id: &[u8]) -> WaResult<Option<AppStateSyncKey>> {
        self.get(WA_APP_STATE, SYNC_KEY, key_id.to_vec())
            .await?
            .map(|v| from_json(&v))
            .transpose()
    }

    async fn set_sync_key(&self, key_id: &[u8], key: AppStateSyncKey) -> WaResult<()> {
        let (id, doc) = (key_id.to_vec(), to_json(&key)?);
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_APP_STATE)?;
            t.insert((sid, SYNC_KEY, id.as_slice()), doc.as_slice())?;
            t.insert((sid, LATEST_KEY, &[][..]), id.as_slice())?;
            Ok(())
        })
        .await
    }

    async fn get_version(&self, name: &str) -> WaResult<HashState> {
        match self.get(WA_APP_STATE, VERSION, name.into()).await? {
            Some(v) => from_json(&v),
            None => Ok(HashState::default()),
        }
    }

    async fn set_version(&self, name: &str, state: HashState) -> WaResult<()> {
        self.put(WA_APP_STATE, VERSION, name.into(), to_json(&state)?)
            .await?;
        self.versions_written.bump(name);
        Ok(())
    }

    async fn put_mutation_macs(
        &self,
        name: &str,
        _version: u64,
        mutations: &[AppStateMutationMAC],
    ) -> WaResult<()> {
        let rows: Vec<(Vec<u8>, Vec<u8>)> = mutations
            .iter()
            .map(|m| (mac_key(name, &m.index_mac), m.value_mac.clone()))
            .collect();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_APP_STATE)?;
            for (k, v) in rows {
                t.insert((sid, MUTATION_MAC, k.as_slice()), v.as_slice())?;
            }
            Ok(())
        })
        .await
    }

    async fn get_mutation_mac(&self, name: &str, index_mac: &[u8]) -> WaResult<Option<Vec<u8>>> {
        self.get(WA_APP_STATE, MUTATION_MAC, mac_key(name, index_mac))
            .await
    }

    async fn get_mutation_macs(
        &self,
        name: &str,
        index_macs: &[[u8; 32]],
    ) -> WaResult<std::collections::HashMap<[u8; 32], Vec<u8>>> {
        let (name, macs) = (name.to_owned(), index_macs.to_vec());
        self.read(move |tx, sid| {
            let t = tx.open_table(WA_APP_STATE)?;
            let mut out = std::collections::HashMap::with_capacity(macs.len());
            for mac in macs {
                let key = mac_key(&name, &mac);
                if let Some(v) = t.get((sid, MUTATION_MAC, key.as_slice()))? {
                    out.insert(mac, v.value().to_vec());
                }
            }
            Ok(out)
        })
        .await
    }

    async fn delete_mutation_macs(&self, name: &str, index_macs: &[Vec<u8>]) -> WaResult<()> {
        let keys: Vec<Vec<u8>> = index_macs.iter().map(|m| mac_key(name, m)).collect();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_APP_STATE)?;
            for k in keys {
                t.remove((sid, MUTATION_MAC, k.as_slice()))?;
            }
            Ok(())
        })
        .await
    }

    async fn clear_mutation_macs(&self, name: &str) -> WaResult<()> {
        let prefix = mac_key(name, &[]);
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_APP_STATE)?;
            for (k, _) in scan(&t, sid, MUTATION_MAC, &prefix)? {
                t.remove((sid, MUTATION_MAC, k.as_slice()))?;
            }
            Ok(())
        })
        .await
    }

    async fn get_latest_sync_key_id(&self) -> WaResult<Option<Vec<u8>>> {
        self.get(WA_APP_STATE, LATEST_KEY, Vec::new()).await
    }
}
