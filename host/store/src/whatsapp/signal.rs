//! The crate's `SignalStore` on `WA_SIGNAL`: identities, sessions, one-time
//! pre-keys (value = uploaded flag byte + record), signed pre-keys and sender
//! keys. Batches are one transaction each.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use redb::ReadableTable;
use whatsapp_rust::wacore::store::error::{Result as WaResult, StoreError as WaError};
use whatsapp_rust::wacore::store::traits::SignalStore;

use super::kv::{WaStore, id_key, key_id, scan};
use crate::tables::WA_SIGNAL;

const IDENTITY: &str = "identity";
const SESSION: &str = "session";
const PREKEY: &str = "prekey";
const SIGNED_PREKEY: &str = "signed_prekey";
const SENDER_KEY: &str = "sender_key";

#[async_trait]
impl SignalStore for WaStore {
    async fn put_identity(&self, address: &str, key: [u8; 32]) -> WaResult<()> {
        self.put(WA_SIGNAL, IDENTITY, address.into(), key.to_vec())
            .await
    }

    async fn put_identities_batch(&self, identities: &[(Arc<str>, [u8; 32])]) -> WaResult<()> {
        let rows: Vec<(Vec<u8>, Vec<u8>)> = identities
            .iter()
            .map(|(a, k)| (a.as_bytes().to_vec(), k.to_vec()))
            .collect();
        self.put_batch(IDENTITY, rows).await
    }

    async fn load_identity(&self, address: &str) -> WaResult<Option<[u8; 32]>> {
        match self.get(WA_SIGNAL, IDENTITY, address.into()).await? {
            None => Ok(None),
            Some(v) => <[u8; 32]>::try_from(v.as_slice())
                .map(Some)
                .map_err(|_| WaError::Validation(format!("identity key of {} bytes", v.len()))),
        }
    }

    async fn delete_identity(&self, address: &str) -> WaResult<()> {
        self.delete(WA_SIGNAL, IDENTITY, address.into()).await
    }

    async fn get_session(&self, address: &str) -> WaResult<Option<Bytes>> {
        Ok(self
            .get(WA_SIGNAL, SESSION, address.into())
            .await?
            .map(Bytes::from))
    }

    async fn put_session(&self, address: &str, session: &[u8]) -> WaResult<()> {
        self.put(WA_SIGNAL, SESSION, address.into(), session.to_vec())
            .await
    }

    async fn put_sessions_batch(&self, sessions: &[(Arc<str>, Bytes)]) -> WaResult<()> {
        let rows = sessions
            .iter()
            .map(|(a, s)| (a.as_bytes().to_vec(), s.to_vec()))
            .collect();
        self.put_batch(SESSION, rows).await
    }

    async fn delete_session(&self, address: &str) -> WaResult<()> {
        self.delete(WA_SIGNAL, SESSION, address.into()).await
    }

    async fn has_signal_state_for_user(&self, user: &str) -> WaResult<bool> {
        let user = user.to_owned();
        self.read(move |tx, sid| {
            let t = tx.open_table(WA_SIGNAL)?;
            for kind in [SESSION, IDENTITY] {
                let found = scan(&t, sid, kind, user.as_bytes())?
                    .iter()
                    .any(|(k, _)| matches!(k.get(user.len()), Some(b'@') | Some(b':')));
                if found {
                    return Ok(true);
                }
            }
            Ok(false)
        })
        .await
    }

    async fn store_prekey(&self, id: u32, record: &[u8], uploaded: bool) -> WaResult<()> {
        self.put(WA_SIGNAL, PREKEY, id_key(id), flagged(uploaded, record))
            .await
    }

    async fn store_prekeys_batch(&self, keys: &[(u32, Bytes)], uploaded: bool) -> WaResult<()> {
        let rows = keys
            .iter()
            .map(|(id, r)| (id_key(*id), flagged(uploaded, r)))
            .collect();
        self.put_batch(PREKEY, rows).await
    }

    async fn load_prekey(&self, id: u32) -> WaResult<Option<Bytes>> {
        Ok(self
            .get(WA_SIGNAL, PREKEY, id_key(id))
            .await?
            .map(|v| Bytes::from(v).slice(1..)))
    }

    async fn load_prekeys_batch(&self, ids: &[u32]) -> WaResult<Vec<(u32, Bytes)>> {
        let ids = ids.to_vec();
        self.read(move |tx, sid| {
            let t = tx.open_table(WA_SIGNAL)?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(v) = t.get((sid, PREKEY, id_key(id).as_slice()))? {
                    out.push((id, Bytes::copy_from_slice(&v.value()[1..])));
                }
            }
            Ok(out)
        })
        .await
    }

    async fn mark_prekeys_uploaded(&self, ids: &[u32]) -> WaResult<()> {
        let ids = ids.to_vec();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_SIGNAL)?;
            for id in ids {
                let key = id_key(id);
                let current = t
                    .get((sid, PREKEY, key.as_slice()))?
                    .map(|v| v.value().to_vec());
                // Update only: a key consumed meanwhile stays consumed.
                if let Some(mut v) = current {
                    v[0] = 1;
                    t.insert((sid, PREKEY, key.as_slice()), v.as_slice())?;
                }
            }
            Ok(())
        })
        .await
    }

    async fn remove_prekey(&self, id: u32) -> WaResult<()> {
        self.delete(WA_SIGNAL, PREKEY, id_key(id)).await
    }

    async fn get_max_prekey_id(&self) -> WaResult<u32> {
        let last = self
            .read(|tx, sid| {
                let t = tx.open_table(WA_SIGNAL)?;
                let lo = [0u8; 4];
                let hi = [0xffu8; 4];
                let last = t
                    .range((sid, PREKEY, &lo[..])..=(sid, PREKEY, &hi[..]))?
                    .next_back()
                    .transpose()?
                    .map(|(k, _)| k.value().2.to_vec());
                Ok(last)
            })
            .await?;
        last.map_or(Ok(0), |k| key_id(&k))
    }

    async fn store_signed_prekey(&self, id: u32, record: &[u8]) -> WaResult<()> {
        self.put(WA_SIGNAL, SIGNED_PREKEY, id_key(id), record.to_vec())
            .await
    }

    async fn load_signed_prekey(&self, id: u32) -> WaResult<Option<Vec<u8>>> {
        self.get(WA_SIGNAL, SIGNED_PREKEY, id_key(id)).await
    }

    async fn load_all_signed_prekeys(&self) -> WaResult<Vec<(u32, Vec<u8>)>> {
        self.scan(WA_SIGNAL, SIGNED_PREKEY, Vec::new())
            .await?
            .into_iter()
            .map(|(k, v)| Ok((key_id(&k)?, v)))
            .collect()
    }

    async fn remove_signed_prekey(&self, id: u32) -> WaResult<()> {
        self.delete(WA_SIGNAL, SIGNED_PREKEY, id_key(id)).await
    }

    async fn put_sender_key(&self, address: &str, record: &[u8]) -> WaResult<()> {
        self.put(WA_SIGNAL, SENDER_KEY, address.into(), record.to_vec())
            .await
    }

    async fn put_sender_keys_batch(&self, sender_keys: &[(Arc<str>, Bytes)]) -> WaResult<()> {
        let rows = sender_keys
            .iter()
            .map(|(a, r)| (a.as_bytes().to_vec(), r.to_vec()))
            .collect();
        self.put_batch(SENDER_KEY, rows).await
    }

    async fn get_sender_key(&self, address: &str) -> WaResult<Option<Vec<u8>>> {
        self.get(WA_SIGNAL, SENDER_KEY, address.into()).await
    }

    async fn delete_sender_key(&self, address: &str) -> WaResult<()> {
        self.delete(WA_SIGNAL, SENDER_KEY, address.into()).await
    }
}

impl WaStore {
    /// Writes many values of `kind` in one transaction.
    async fn put_batch(&self, kind: &'static str, rows: Vec<(Vec<u8>, Vec<u8>)>) -> WaResult<()> {
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_SIGNAL)?;
            for (k, v) in rows {
                t.insert((sid, kind, k.as_slice()), v.as_slice())?;
            }
            Ok(())
        })
        .await
    }
}

/// A pre-key value: the uploaded flag, then the record.
fn flagged(uploaded: bool, record: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(record.len() + 1);
    v.push(u8::from(uploaded));
    v.extend_from_slice(record);
    v
}
