//! The message-related part of the crate's `ProtocolStore` on `WA_PROTOCOL`:
//! trusted-contact tokens (JSON), sent messages kept for retry receipts
//! (`chat \0 id` → stored-at + payload) and the pending-inbound buffer
//! (`chat \0 sender \0 id` → stored-at + message). Read-modify-writes are
//! one transaction, which is the atomicity the trait asks for.

use redb::ReadableTable;
use whatsapp_rust::wacore::store::error::Result as WaResult;
use whatsapp_rust::wacore::store::traits::{PendingInboundKey, PendingInboundRow, TcTokenEntry};

use super::kv::{WaStore, join, key_text, now_secs, stamp, to_json, unstamp};
use crate::tables::WA_PROTOCOL;

const TC_TOKEN: &str = "tc_token";
const SENT: &str = "sent_message";
const PENDING: &str = "pending_inbound";

impl WaStore {
    pub(super) async fn tc_token(&self, jid: &str) -> WaResult<Option<TcTokenEntry>> {
        self.get(WA_PROTOCOL, TC_TOKEN, jid.into())
            .await?
            .map(|v| super::kv::from_json(&v))
            .transpose()
    }

    pub(super) async fn set_tc_token(&self, jid: &str, entry: &TcTokenEntry) -> WaResult<()> {
        self.put(WA_PROTOCOL, TC_TOKEN, jid.into(), to_json(entry)?)
            .await
    }

    pub(super) async fn remove_tc_token(&self, jid: &str) -> WaResult<()> {
        self.delete(WA_PROTOCOL, TC_TOKEN, jid.into()).await
    }

    pub(super) async fn tc_token_jids(&self) -> WaResult<Vec<String>> {
        self.scan(WA_PROTOCOL, TC_TOKEN, Vec::new())
            .await?
            .into_iter()
            .map(|(k, _)| key_text(k))
            .collect()
    }

    pub(super) async fn prune_tc_tokens(
        &self,
        token_cutoff: i64,
        sender_cutoff: i64,
    ) -> WaResult<u32> {
        self.remove_counted(TC_TOKEN, Vec::new(), move |_, v| {
            // Unreadable rows are kept: pruning never destroys what it cannot judge.
            let Ok(e) = serde_json::from_slice::<TcTokenEntry>(v) else {
                return false;
            };
            let token_live = !e.token.is_empty() && e.token_timestamp >= token_cutoff;
            let sender_live = e.sender_timestamp.is_some_and(|ts| ts >= sender_cutoff);
            !(token_live || sender_live)
        })
        .await
    }

    /// Moves the sender bucket forward (never back), creating a byte-less
    /// placeholder row when there is none.
    pub(super) async fn touch_tc_token(&self, jid: &str, sender_timestamp: i64) -> WaResult<()> {
        self.update_tc_token(jid, move |existing| match existing {
            Some(mut e) => {
                e.sender_timestamp = Some(
                    e.sender_timestamp
                        .map_or(sender_timestamp, |old| old.max(sender_timestamp)),
                );
                Some(e)
            }
            None => Some(TcTokenEntry {
                token: Vec::new(),
                token_timestamp: sender_timestamp,
                sender_timestamp: Some(sender_timestamp),
            }),
        })
        .await
    }

    /// Stores a received token, newer-wins, keeping the sender bucket.
    pub(super) async fn receive_tc_token(
        &self,
        jid: &str,
        token: &[u8],
        token_timestamp: i64,
    ) -> WaResult<()> {
        let token = token.to_vec();
        self.update_tc_token(jid, move |existing| match existing {
            Some(e) if !e.token.is_empty() && token_timestamp < e.token_timestamp => None,
            Some(e) => Some(TcTokenEntry {
                token,
                token_timestamp,
                sender_timestamp: e.sender_timestamp,
            }),
            None => Some(TcTokenEntry {
                token,
                token_timestamp,
                sender_timestamp: None,
            }),
        })
        .await
    }

    /// Reads, changes and writes one token row in one transaction; `f`
    /// answering `None` leaves the row as it is.
    async fn update_tc_token(
        &self,
        jid: &str,
        f: impl FnOnce(Option<TcTokenEntry>) -> Option<TcTokenEntry> + Send + 'static,
    ) -> WaResult<()> {
        let jid = jid.to_owned();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            let existing: Option<TcTokenEntry> = t
                .get((sid, TC_TOKEN, jid.as_bytes()))?
                .map(|v| serde_json::from_slice(v.value()))
                .transpose()?;
            if let Some(next) = f(existing) {
                let doc = serde_json::to_vec(&next)?;
                t.insert((sid, TC_TOKEN, jid.as_bytes()), doc.as_slice())?;
            }
            Ok(())
        })
        .await
    }

    pub(super) async fn keep_sent_message(
        &self,
        chat: &str,
        id: &str,
        payload: &[u8],
    ) -> WaResult<()> {
        self.put(
            WA_PROTOCOL,
            SENT,
            join(&[chat, id]),
            stamp(now_secs(), payload),
        )
        .await
    }

    /// Reads and deletes a sent message in one transaction.
    pub(super) async fn take_sent(&self, chat: &str, id: &str) -> WaResult<Option<Vec<u8>>> {
        let key = join(&[chat, id]);
        let stored = self
            .write(move |tx, sid| {
                let mut t = tx.open_table(WA_PROTOCOL)?;
                let v = t
                    .remove((sid, SENT, key.as_slice()))?
                    .map(|v| v.value().to_vec());
                Ok(v)
            })
            .await?;
        stored
            .map(|v| unstamp(&v).map(|(_, p)| p.to_vec()))
            .transpose()
    }

    pub(super) async fn prune_sent(&self, cutoff: i64) -> WaResult<u32> {
        self.remove_counted(SENT, Vec::new(), move |_, v| {
            unstamp(v).is_ok_and(|(ts, _)| ts < cutoff)
        })
        .await
    }

    pub(super) async fn keep_pending(&self, rows: &[PendingInboundRow<'_>]) -> WaResult<()> {
        let now = now_secs();
        let rows: Vec<(Vec<u8>, Vec<u8>)> = rows
            .iter()
            .map(|r| (join(&[r.chat, r.sender, r.id]), stamp(now, r.message)))
            .collect();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            for (k, v) in rows {
                t.insert((sid, PENDING, k.as_slice()), v.as_slice())?;
            }
            Ok(())
        })
        .await
    }

    pub(super) async fn pending(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
    ) -> WaResult<Option<Vec<u8>>> {
        self.get(WA_PROTOCOL, PENDING, join(&[chat, sender, id]))
            .await?
            .map(|v| unstamp(&v).map(|(_, m)| m.to_vec()))
            .transpose()
    }

    pub(super) async fn drop_pending(&self, keys: &[PendingInboundKey<'_>]) -> WaResult<()> {
        let keys: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| join(&[k.chat, k.sender, k.id]))
            .collect();
        self.write(move |tx, sid| {
            let mut t = tx.open_table(WA_PROTOCOL)?;
            for k in keys {
                t.remove((sid, PENDING, k.as_slice()))?;
            }
            Ok(())
        })
        .await
    }

    pub(super) async fn prune_pending(&self, cutoff: i64) -> WaResult<u32> {
        self.remove_counted(PENDING, Vec::new(), move |_, v| {
            unstamp(v).is_ok_and(|(ts, _)| ts < cutoff)
        })
        .await
    }
}
