//! The raw WhatsApp messages the `whatsapp` backend keeps: every message it
//! sends and receives, as the encoded `wa::Message`, so a reply can quote
//! the original (its proto and its sender) and a poll's votes can be
//! decrypted with the secret in the poll's `message_context_info`.
//!
//! Rows live in `WA_MESSAGES` by (session id, message id); `WA_MESSAGES_BY_TIME`
//! orders them by timestamp and `WA_MESSAGE_COUNTS` counts them, so each write
//! keeps a session at [`MAX_WA_MESSAGES`] rows by pruning its oldest in the
//! same transaction, without a scan. A record is stored in a compact binary
//! form rather than the store's usual JSON, since it is mostly proto bytes:
//! a version byte (1), the timestamp (i64, big-endian), the chat and the
//! sender (each a u32 big-endian length and UTF-8 bytes), then the proto.

use redb::{ReadableTable, WriteTransaction};
use serde::de::Error as _;

use crate::tables::{WA_MESSAGE_COUNTS, WA_MESSAGES, WA_MESSAGES_BY_TIME};
use crate::{Store, StoreError, StoreResult};

/// Most message protos kept per session; a write past it drops the oldest
/// (by timestamp). Quotes and poll votes mostly concern recent messages, and
/// at a few hundred bytes a proto this bounds a session to tens of MB.
pub const MAX_WA_MESSAGES: u64 = 50_000;

/// The version byte of the record layout.
const RECORD_V1: u8 = 1;

/// One message as the whatsapp backend keeps it for quotes and poll votes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaMessageRow {
    /// The message id (the gateway's id for a send, the network's for an inbound message).
    pub message_id: String,
    /// The chat's non-AD JID.
    pub chat: String,
    /// The sender's non-AD JID (our own for our own messages).
    pub sender: String,
    /// When it was sent, Unix seconds (the prune order).
    pub timestamp: i64,
    /// The waproto-encoded `wa::Message`.
    pub proto: Vec<u8>,
}

impl Store {
    /// Keeps these messages (one transaction; a later write of the same id
    /// replaces the earlier). The session's oldest rows past
    /// [`MAX_WA_MESSAGES`] are pruned in the same transaction.
    pub fn put_wa_messages(&self, session_id: &str, rows: &[WaMessageRow]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.write(|tx| put_rows(tx, session_id, rows, MAX_WA_MESSAGES))
    }

    /// Keeps those of these messages not kept yet (a message history
    /// replays from before the link: what the gateway kept itself, as it
    /// sent or received it, stays as it is). Returns how many were new.
    /// The rows are taken, not copied: a chunk's protos can be megabytes.
    pub fn put_wa_history(&self, session_id: &str, rows: Vec<WaMessageRow>) -> StoreResult<usize> {
        if rows.is_empty() {
            return Ok(0);
        }
        self.write(|tx| {
            let fresh: Vec<WaMessageRow> = {
                let records = tx.open_table(WA_MESSAGES)?;
                let mut fresh = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for row in rows {
                    if !seen.contains(&row.message_id)
                        && records
                            .get((session_id, row.message_id.as_str()))?
                            .is_none()
                    {
                        seen.insert(row.message_id.clone());
                        fresh.push(row);
                    }
                }
                fresh
            };
            put_rows(tx, session_id, &fresh, MAX_WA_MESSAGES)?;
            Ok(fresh.len())
        })
    }

    /// The kept message with this id in this session.
    pub fn wa_message(
        &self,
        session_id: &str,
        message_id: &str,
    ) -> StoreResult<Option<WaMessageRow>> {
        self.read(|tx| {
            tx.open_table(WA_MESSAGES)?
                .get((session_id, message_id))?
                .map(|v| decode_record(message_id, v.value()))
                .transpose()
        })
    }
}

/// Writes `rows` into `tx` and prunes the session down to `max` rows.
fn put_rows(
    tx: &WriteTransaction,
    session_id: &str,
    rows: &[WaMessageRow],
    max: u64,
) -> StoreResult<()> {
    let mut records = tx.open_table(WA_MESSAGES)?;
    let mut by_time = tx.open_table(WA_MESSAGES_BY_TIME)?;
    let mut counts = tx.open_table(WA_MESSAGE_COUNTS)?;
    let mut count = counts.get(session_id)?.map(|v| v.value()).unwrap_or(0);
    for row in rows {
        let key = (session_id, row.message_id.as_str());
        let replaced = records
            .insert(key, encode_record(row).as_slice())?
            .map(|old| decode_record(&row.message_id, old.value()))
            .transpose()?;
        match replaced {
            Some(old) => {
                by_time.remove((session_id, old.timestamp, row.message_id.as_str()))?;
            }
            None => count += 1,
        }
        by_time.insert((session_id, row.timestamp, row.message_id.as_str()), ())?;
    }
    if count > max {
        let mut oldest: Vec<(i64, String)> = Vec::new();
        for entry in by_time
            .range((session_id, i64::MIN, "")..)?
            .take((count - max) as usize)
        {
            let (k, _) = entry?;
            let (sid, ts, id) = k.value();
            if sid != session_id {
                break;
            }
            oldest.push((ts, id.to_owned()));
        }
        for (ts, id) in &oldest {
            by_time.remove((session_id, *ts, id.as_str()))?;
            records.remove((session_id, id.as_str()))?;
        }
        count -= oldest.len() as u64;
    }
    counts.insert(session_id, count)?;
    Ok(())
}

/// A row's stored form (without the id, which is the key).
fn encode_record(row: &WaMessageRow) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(1 + 8 + 8 + row.chat.len() + row.sender.len() + row.proto.len());
    out.push(RECORD_V1);
    out.extend_from_slice(&row.timestamp.to_be_bytes());
    for text in [&row.chat, &row.sender] {
        out.extend_from_slice(&(text.len() as u32).to_be_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    out.extend_from_slice(&row.proto);
    out
}

/// Reads a stored record back into the row of `message_id`.
fn decode_record(message_id: &str, bytes: &[u8]) -> StoreResult<WaMessageRow> {
    let corrupt = |what: &str| {
        StoreError::Corrupt(serde_json::Error::custom(format!(
            "whatsapp message {message_id}: {what}"
        )))
    };
    let (&version, rest) = bytes.split_first().ok_or_else(|| corrupt("empty record"))?;
    if version != RECORD_V1 {
        return Err(corrupt(&format!("unknown record version {version}")));
    }
    let (ts, mut rest) = rest
        .split_first_chunk::<8>()
        .ok_or_else(|| corrupt("truncated timestamp"))?;
    let mut text = || -> StoreResult<String> {
        let (len, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| corrupt("truncated length"))?;
        let len = u32::from_be_bytes(*len) as usize;
        if tail.len() < len {
            return Err(corrupt("truncated text"));
        }
        let (s, tail) = tail.split_at(len);
        rest = tail;
        String::from_utf8(s.to_vec()).map_err(|_| corrupt("text is not UTF-8"))
    };
    let chat = text()?;
    let sender = text()?;
    Ok(WaMessageRow {
        message_id: message_id.to_owned(),
        chat,
        sender,
        timestamp: i64::from_be_bytes(*ts),
        proto: rest.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::session::SessionRecord;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for id in ["a", "ab"] {
            store
                .insert_session(&SessionRecord::new(
                    id.into(),
                    None,
                    "whatsapp".into(),
                    None,
                ))
                .unwrap();
        }
        (dir, store)
    }

    fn row(id: &str, timestamp: i64, proto: &[u8]) -> WaMessageRow {
        WaMessageRow {
            message_id: id.into(),
            chat: "120363000000000001@g.us".into(),
            sender: "15550001111@s.whatsapp.net".into(),
            timestamp,
            proto: proto.to_vec(),
        }
    }

    /// The session's ids in time order, and its count, as the index holds them.
    fn index(store: &Store, session: &str) -> (Vec<String>, u64) {
        store
            .read(|tx| {
                let mut ids = Vec::new();
                for entry in tx
                    .open_table(WA_MESSAGES_BY_TIME)?
                    .range((session, i64::MIN, "")..)?
                {
                    let (k, _) = entry?;
                    let (sid, _, id) = k.value();
                    if sid != session {
                        break;
                    }
                    ids.push(id.to_owned());
                }
                let count = tx
                    .open_table(WA_MESSAGE_COUNTS)?
                    .get(session)?
                    .map(|v| v.value())
                    .unwrap_or(0);
                Ok((ids, count))
            })
            .unwrap()
    }

    #[test]
    fn a_kept_message_reads_back_field_for_field() {
        let (_dir, store) = store();
        let kept = WaMessageRow {
            message_id: "3EB0AAA".into(),
            chat: "15552223333@s.whatsapp.net".into(),
            sender: "15550001111@s.whatsapp.net".into(),
            timestamp: -5,
            proto: vec![0, 1, 2, 255],
        };
        store
            .put_wa_messages("a", std::slice::from_ref(&kept))
            .unwrap();
        assert_eq!(store.wa_message("a", "3EB0AAA").unwrap(), Some(kept));
    }

    #[test]
    fn a_message_is_found_only_in_its_own_session() {
        let (_dir, store) = store();
        store.put_wa_messages("a", &[row("m1", 1, b"x")]).unwrap();
        assert!(store.wa_message("ab", "m1").unwrap().is_none());
        assert!(store.wa_message("a", "m2").unwrap().is_none());
    }

    #[test]
    fn a_later_write_of_the_same_id_replaces_the_earlier_and_counts_once() {
        let (_dir, store) = store();
        store
            .put_wa_messages("a", &[row("m1", 10, b"old")])
            .unwrap();
        store
            .put_wa_messages("a", &[row("m1", 20, b"new"), row("m2", 5, b"y")])
            .unwrap();
        let got = store.wa_message("a", "m1").unwrap().unwrap();
        assert_eq!((got.timestamp, got.proto.as_slice()), (20, &b"new"[..]));
        assert_eq!(index(&store, "a"), (vec!["m2".into(), "m1".into()], 2));
    }

    #[test]
    fn history_keeps_only_the_messages_not_kept_yet() {
        let (_dir, store) = store();
        store
            .put_wa_messages("a", &[row("m1", 10, b"sent")])
            .unwrap();
        let new = store
            .put_wa_history(
                "a",
                vec![
                    row("m1", 9, b"history"),
                    row("m0", 5, b"old"),
                    row("m0", 5, b"old"),
                ],
            )
            .unwrap();
        assert_eq!(new, 1, "a message twice in the history is one");
        let kept = store.wa_message("a", "m1").unwrap().unwrap();
        assert_eq!(kept.proto, b"sent", "what the gateway kept itself stays");
        assert_eq!(index(&store, "a"), (vec!["m0".into(), "m1".into()], 2));
        assert_eq!(store.put_wa_history("a", Vec::new()).unwrap(), 0);
    }

    #[test]
    fn a_write_past_the_bound_prunes_the_oldest_by_timestamp() {
        let (_dir, store) = store();
        store
            .write(|tx| put_rows(tx, "a", &[row("late", 30, b"l"), row("early", 10, b"e")], 3))
            .unwrap();
        store
            .write(|tx| {
                put_rows(
                    tx,
                    "a",
                    &[row("middle", 20, b"m"), row("latest", 40, b"n")],
                    3,
                )
            })
            .unwrap();
        assert!(store.wa_message("a", "early").unwrap().is_none());
        for id in ["middle", "late", "latest"] {
            assert!(store.wa_message("a", id).unwrap().is_some(), "{id} is kept");
        }
        assert_eq!(
            index(&store, "a"),
            (vec!["middle".into(), "late".into(), "latest".into()], 3)
        );
    }

    #[test]
    fn pruning_one_session_leaves_the_neighbours_rows() {
        let (_dir, store) = store();
        store.put_wa_messages("ab", &[row("old", 1, b"o")]).unwrap();
        store
            .write(|tx| put_rows(tx, "a", &[row("m1", 5, b"1"), row("m2", 6, b"2")], 1))
            .unwrap();
        assert!(store.wa_message("ab", "old").unwrap().is_some());
        assert_eq!(index(&store, "a"), (vec!["m2".into()], 1));
    }

    #[test]
    fn deleting_a_session_drops_its_messages_and_keeps_the_neighbours() {
        let (_dir, store) = store();
        store
            .put_wa_messages("a", &[row("m1", 1, b"1"), row("m2", 2, b"2")])
            .unwrap();
        store.put_wa_messages("ab", &[row("m3", 3, b"3")]).unwrap();
        assert!(store.delete_session("a").unwrap());
        assert!(store.wa_message("a", "m1").unwrap().is_none());
        assert_eq!(index(&store, "a"), (vec![], 0));
        assert!(store.wa_message("ab", "m3").unwrap().is_some());
        assert_eq!(index(&store, "ab"), (vec!["m3".into()], 1));
    }

    #[test]
    fn a_logout_wipe_keeps_the_message_history() {
        let (_dir, store) = store();
        store.put_wa_messages("a", &[row("m1", 1, b"1")]).unwrap();
        store.wipe_whatsapp_state("a").unwrap();
        assert!(store.wa_message("a", "m1").unwrap().is_some());
        assert_eq!(index(&store, "a").1, 1);
    }

    #[test]
    fn a_record_of_an_unknown_layout_is_reported_corrupt() {
        let good = encode_record(&row("m1", 1, b"p"));
        let mut newer = good.clone();
        newer[0] = 9;
        assert!(matches!(
            decode_record("m1", &newer),
            Err(StoreError::Corrupt(_))
        ));
        for cut in [0, 5, 12, 20] {
            assert!(
                matches!(
                    decode_record("m1", &good[..cut]),
                    Err(StoreError::Corrupt(_))
                ),
                "a record cut at {cut} bytes"
            );
        }
    }
}
