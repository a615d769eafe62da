//! The crate's `ProtocolStore` on `WA_PROTOCOL`: sender-key device status
//! (`group \0 device` → flag), the lid/phone mapping (both directions), base
//! keys (`address \0 message id`), device lists and group metadata (JSON and
//! opaque blobs). Trust tokens, sent messages and the pending-inbound buffer
//! are in `protocol_messages.rs`.

use async_trait::async_trait;
use redb::ReadableTable;
use whatsapp_rust::wacore::store::error::Result as WaResult;
use whatsapp_rust::wacore::store::traits::{
    DeviceListRecord, LidPnMappingEntry, PendingInboundKey, PendingInboundRow, ProtocolStore,
    TcTokenEntry,
};

use super::kv::{WaStore, from_json, join, key_text, scan, to_json};
use crate::tables::WA_PROTOCOL;

const SENDER_KEY_DEVICE: &str = "sender_key_device";
const LID: &str = "lid";
const PN: &str = "pn";
const BASE_KEY: &str = "base_key";
const DEVICES: &str = "devices";
const GROUP_META: &str = "group_metadata";

#[async_trait]
impl ProtocolStore for WaStore {
    async fn get_sender_key_devices(&self, group_jid: &str) -> WaResult<Vec<(String, bool)>> {
        let prefix = join(&[group_jid, ""]);
        let plen = prefix.len();
        self.scan(WA_PROTOCOL, SENDER_KEY_DEVICE, prefix)
            .await?
            .into_iter()
            .map(|(k, v)| Ok((key_text(k[plen..].to_vec())?, v.first() == Some(&1))))
            .collect()
    }

    async fn set_sender_key_status(
        &self,
        group_jid: &str,
        entries: &[(&str, bool)],
    ) -> WaResult<()> {
        let rows: Vec<(Vec<u8>, bool)> = entries
            .iter()
            .map(|(d, has)| (join(&[group_jid, d]), *has))
            .collect();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            for (k, has) in rows {
                t.insert((sid, SENDER_KEY_DEVICE, k.as_slice()), &[u8::from(has)][..])?;
            }
            Ok(())
        })
        .await
    }

    async fn clear_sender_key_devices(&self, group_jid: &str) -> WaResult<()> {
        let prefix = join(&[group_jid, ""]);
        self.remove_where(SENDER_KEY_DEVICE, prefix, |_| true).await
    }

    async fn delete_sender_key_device_rows(&self, device_jids: &[&str]) -> WaResult<()> {
        let devices: Vec<Vec<u8>> = device_jids.iter().map(|d| d.as_bytes().to_vec()).collect();
        self.remove_where(SENDER_KEY_DEVICE, Vec::new(), move |k| {
            let device = k
                .iter()
                .position(|b| *b == 0)
                .map_or(&[][..], |i| &k[i + 1..]);
            devices.iter().any(|d| d == device)
        })
        .await
    }

    async fn clear_all_sender_key_devices(&self) -> WaResult<()> {
        self.remove_where(SENDER_KEY_DEVICE, Vec::new(), |_| true)
            .await
    }

    async fn get_lid_mapping(&self, lid: &str) -> WaResult<Option<LidPnMappingEntry>> {
        self.get(WA_PROTOCOL, LID, lid.into())
            .await?
            .map(|v| from_json(&v))
            .transpose()
    }

    async fn get_pn_mapping(&self, phone: &str) -> WaResult<Option<LidPnMappingEntry>> {
        let Some(lid) = self.get(WA_PROTOCOL, PN, phone.into()).await? else {
            return Ok(None);
        };
        self.get_lid_mapping(&key_text(lid)?).await
    }

    async fn put_lid_mapping(&self, entry: &LidPnMappingEntry) -> WaResult<()> {
        self.put_lid_mappings(std::slice::from_ref(entry)).await
    }

    async fn put_lid_mappings(&self, entries: &[LidPnMappingEntry]) -> WaResult<()> {
        let rows = entries
            .iter()
            .map(|e| Ok((e.lid.clone(), e.phone_number.clone(), to_json(e)?)))
            .collect::<WaResult<Vec<_>>>()?;
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            for (lid, phone, doc) in rows {
                // A lid that moved to another phone leaves no stale reverse entry.
                let old: Option<LidPnMappingEntry> = t
                    .get((sid, LID, lid.as_bytes()))?
                    .and_then(|v| serde_json::from_slice(v.value()).ok());
                if let Some(old) = old.filter(|o| o.phone_number != phone) {
                    t.remove((sid, PN, old.phone_number.as_bytes()))?;
                }
                t.insert((sid, PN, phone.as_bytes()), lid.as_bytes())?;
                t.insert((sid, LID, lid.as_bytes()), doc.as_slice())?;
            }
            Ok(())
        })
        .await
    }

    async fn get_all_lid_mappings(&self) -> WaResult<Vec<LidPnMappingEntry>> {
        self.scan(WA_PROTOCOL, LID, Vec::new())
            .await?
            .iter()
            .map(|(_, v)| from_json(v))
            .collect()
    }

    async fn save_base_key(
        &self,
        address: &str,
        message_id: &str,
        base_key: &[u8],
    ) -> WaResult<()> {
        self.put(
            WA_PROTOCOL,
            BASE_KEY,
            join(&[address, message_id]),
            base_key.to_vec(),
        )
        .await
    }

    async fn has_same_base_key(
        &self,
        address: &str,
        message_id: &str,
        current_base_key: &[u8],
    ) -> WaResult<bool> {
        let stored = self
            .get(WA_PROTOCOL, BASE_KEY, join(&[address, message_id]))
            .await?;
        Ok(stored.is_some_and(|s| s == current_base_key))
    }

    async fn delete_base_key(&self, address: &str, message_id: &str) -> WaResult<()> {
        self.delete(WA_PROTOCOL, BASE_KEY, join(&[address, message_id]))
            .await
    }

    async fn update_device_list(&self, record: DeviceListRecord) -> WaResult<()> {
        self.update_device_lists(vec![record]).await
    }

    async fn update_device_lists(&self, records: Vec<DeviceListRecord>) -> WaResult<()> {
        let rows = records
            .iter()
            .map(|r| Ok((r.user.clone(), to_json(r)?)))
            .collect::<WaResult<Vec<_>>>()?;
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            for (user, doc) in rows {
                t.insert((sid, DEVICES, user.as_bytes()), doc.as_slice())?;
            }
            Ok(())
        })
        .await
    }

    async fn get_devices(&self, user: &str) -> WaResult<Option<DeviceListRecord>> {
        self.get(WA_PROTOCOL, DEVICES, user.into())
            .await?
            .map(|v| from_json(&v))
            .transpose()
    }

    async fn delete_devices(&self, user: &str) -> WaResult<()> {
        self.delete(WA_PROTOCOL, DEVICES, user.into()).await
    }

    async fn get_group_metadata(&self, group_jid: &str) -> WaResult<Option<Vec<u8>>> {
        self.get(WA_PROTOCOL, GROUP_META, group_jid.into()).await
    }

    async fn put_group_metadata(&self, group_jid: &str, blob: &[u8]) -> WaResult<()> {
        self.put(WA_PROTOCOL, GROUP_META, group_jid.into(), blob.to_vec())
            .await
    }

    async fn delete_group_metadata(&self, group_jid: &str) -> WaResult<()> {
        self.delete(WA_PROTOCOL, GROUP_META, group_jid.into()).await
    }

    async fn get_tc_token(&self, jid: &str) -> WaResult<Option<TcTokenEntry>> {
        self.tc_token(jid).await
    }

    async fn put_tc_token(&self, jid: &str, entry: &TcTokenEntry) -> WaResult<()> {
        self.set_tc_token(jid, entry).await
    }

    async fn delete_tc_token(&self, jid: &str) -> WaResult<()> {
        self.remove_tc_token(jid).await
    }

    async fn get_all_tc_token_jids(&self) -> WaResult<Vec<String>> {
        self.tc_token_jids().await
    }

    async fn delete_expired_tc_tokens(
        &self,
        token_cutoff: i64,
        sender_cutoff: i64,
    ) -> WaResult<u32> {
        self.prune_tc_tokens(token_cutoff, sender_cutoff).await
    }

    async fn touch_tc_token_sender_timestamp(
        &self,
        jid: &str,
        sender_timestamp: i64,
    ) -> WaResult<()> {
        self.touch_tc_token(jid, sender_timestamp).await
    }

    async fn store_received_tc_token(
        &self,
        jid: &str,
        token: &[u8],
        token_timestamp: i64,
    ) -> WaResult<()> {
        self.receive_tc_token(jid, token, token_timestamp).await
    }

    async fn store_sent_message(
        &self,
        chat_jid: &str,
        message_id: &str,
        payload: &[u8],
    ) -> WaResult<()> {
        self.keep_sent_message(chat_jid, message_id, payload).await
    }

    async fn take_sent_message(
        &self,
        chat_jid: &str,
        message_id: &str,
    ) -> WaResult<Option<Vec<u8>>> {
        self.take_sent(chat_jid, message_id).await
    }

    async fn delete_expired_sent_messages(&self, cutoff_timestamp: i64) -> WaResult<u32> {
        self.prune_sent(cutoff_timestamp).await
    }

    async fn store_pending_inbound(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
        message: &[u8],
    ) -> WaResult<()> {
        let row = PendingInboundRow {
            chat,
            sender,
            id,
            message,
        };
        self.keep_pending(&[row]).await
    }

    async fn get_pending_inbound(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
    ) -> WaResult<Option<Vec<u8>>> {
        self.pending(chat, sender, id).await
    }

    async fn delete_pending_inbound(&self, chat: &str, sender: &str, id: &str) -> WaResult<()> {
        self.drop_pending(&[PendingInboundKey { chat, sender, id }])
            .await
    }

    async fn delete_expired_pending_inbound(&self, cutoff_timestamp: i64) -> WaResult<u32> {
        self.prune_pending(cutoff_timestamp).await
    }

    async fn store_pending_inbound_batch(&self, rows: &[PendingInboundRow<'_>]) -> WaResult<()> {
        self.keep_pending(rows).await
    }

    async fn delete_pending_inbound_batch(&self, keys: &[PendingInboundKey<'_>]) -> WaResult<()> {
        self.drop_pending(keys).await
    }
}

impl WaStore {
    /// Removes the rows of `kind` under `prefix` whose key passes `matches`
    /// (the key is given whole, prefix included); returns how many went.
    pub(super) async fn remove_where(
        &self,
        kind: &'static str,
        prefix: Vec<u8>,
        matches: impl Fn(&[u8]) -> bool + Send + 'static,
    ) -> WaResult<()> {
        self.remove_counted(kind, prefix, move |k, _| matches(k))
            .await
            .map(|_| ())
    }

    /// Removes the rows of `kind` under `prefix` for which `matches(key,
    /// value)` holds, in one transaction; returns how many went.
    pub(super) async fn remove_counted(
        &self,
        kind: &'static str,
        prefix: Vec<u8>,
        matches: impl Fn(&[u8], &[u8]) -> bool + Send + 'static,
    ) -> WaResult<u32> {
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            let mut n = 0u32;
            for (k, v) in scan(&t, sid, kind, &prefix)? {
                if matches(&k, &v) {
                    t.remove((sid, kind, k.as_slice()))?;
                    n += 1;
                }
            }
            Ok(n)
        })
        .await
    }
}
