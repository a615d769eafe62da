//! The crate's `DeviceStore` (the session's one device document in
//! `WA_DEVICE`, JSON) and `MsgSecretStore` (message secrets in `WA_PROTOCOL`,
//! `chat \0 sender \0 id` → secret, expiry, parent time).

use async_trait::async_trait;
use redb::ReadableTable;
use whatsapp_rust::wacore::reporting_token::MESSAGE_SECRET_SIZE;
use whatsapp_rust::wacore::store::Device;
use whatsapp_rust::wacore::store::error::{Result as WaResult, StoreError as WaError};
use whatsapp_rust::wacore::store::traits::{
    DeviceStore, MsgSecretEntry, MsgSecretStore, merge_msg_secret_expiry,
    merge_msg_secret_message_ts,
};

use super::kv::{WaStore, from_json, join, to_json};
use crate::tables::{WA_DEVICE, WA_PROTOCOL};

const MSG_SECRET: &str = "msg_secret";

/// The device id reported to the crate: one device per session, so always 1.
const DEVICE_ID: i32 = 1;

#[async_trait]
impl DeviceStore for WaStore {
    async fn save(&self, device: &Device) -> WaResult<()> {
        let doc = to_json(device)?;
        self.write(move |tx, sid| {
            tx.open_table(WA_DEVICE)?.insert(sid, doc.as_slice())?;
            Ok(())
        })
        .await
    }

    async fn load(&self) -> WaResult<Option<Device>> {
        let doc = self
            .read(|tx, sid| {
                Ok(tx
                    .open_table(WA_DEVICE)?
                    .get(sid)?
                    .map(|v| v.value().to_vec()))
            })
            .await?;
        doc.map(|d| from_json(&d)).transpose()
    }

    async fn exists(&self) -> WaResult<bool> {
        self.read(|tx, sid| Ok(tx.open_table(WA_DEVICE)?.get(sid)?.is_some()))
            .await
    }

    async fn create(&self) -> WaResult<i32> {
        // A fresh device (new keys) unless the session already has one.
        let fresh = to_json(&Device::new())?;
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_DEVICE)?;
            if t.get(sid)?.is_none() {
                t.insert(sid, fresh.as_slice())?;
            }
            Ok(())
        })
        .await?;
        Ok(DEVICE_ID)
    }
}

/// A stored message secret: the secret, its expiry and the parent's time.
fn secret_value(secret: &[u8], expires_at: i64, message_ts: i64) -> Vec<u8> {
    let mut v = Vec::with_capacity(MESSAGE_SECRET_SIZE + 16);
    v.extend_from_slice(secret);
    v.extend_from_slice(&expires_at.to_be_bytes());
    v.extend_from_slice(&message_ts.to_be_bytes());
    v
}

/// Splits a value written by [`secret_value`].
fn split_secret(v: &[u8]) -> WaResult<(&[u8], i64, i64)> {
    if v.len() != MESSAGE_SECRET_SIZE + 16 {
        return Err(WaError::Validation(format!(
            "stored message secret has {} bytes",
            v.len()
        )));
    }
    let (secret, rest) = v.split_at(MESSAGE_SECRET_SIZE);
    let num = |b: &[u8]| i64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
    Ok((secret, num(&rest[..8]), num(&rest[8..])))
}

#[async_trait]
impl MsgSecretStore for WaStore {
    async fn put_msg_secrets(&self, entries: Vec<MsgSecretEntry>) -> WaResult<usize> {
        let stored = entries.len();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            for e in entries {
                let key = join(&[&e.chat, &e.sender, &e.msg_id]);
                let old = t
                    .get((sid, MSG_SECRET, key.as_slice()))?
                    .map(|v| v.value().to_vec());
                let (expires_at, message_ts) = match old.as_deref().map(split_secret) {
                    Some(Ok((_, old_exp, old_ts))) => (
                        merge_msg_secret_expiry(old_exp, e.expires_at),
                        merge_msg_secret_message_ts(old_ts, e.message_ts),
                    ),
                    _ => (e.expires_at, e.message_ts),
                };
                let value = secret_value(&e.secret, expires_at, message_ts);
                t.insert((sid, MSG_SECRET, key.as_slice()), value.as_slice())?;
            }
            Ok(())
        })
        .await?;
        Ok(stored)
    }

    async fn get_msg_secret(
        &self,
        chat: &str,
        sender: &str,
        msg_id: &str,
    ) -> WaResult<Option<Vec<u8>>> {
        Ok(self
            .get_msg_secret_with_ts(chat, sender, msg_id)
            .await?
            .map(|(secret, _)| secret))
    }

    async fn get_msg_secret_with_ts(
        &self,
        chat: &str,
        sender: &str,
        msg_id: &str,
    ) -> WaResult<Option<(Vec<u8>, i64)>> {
        let Some(v) = self
            .get(WA_PROTOCOL, MSG_SECRET, join(&[chat, sender, msg_id]))
            .await?
        else {
            return Ok(None);
        };
        let (secret, _, ts) = split_secret(&v)?;
        Ok(Some((secret.to_vec(), ts)))
    }

    async fn delete_expired_msg_secrets(&self, cutoff_timestamp: i64) -> WaResult<u32> {
        self.remove_counted(MSG_SECRET, Vec::new(), move |_, v| {
            split_secret(v).is_ok_and(|(_, exp, _)| exp != 0 && exp <= cutoff_timestamp)
        })
        .await
    }
}
