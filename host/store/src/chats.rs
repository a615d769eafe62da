//! Chats and their history: every message record is indexed, in the write
//! that appends it, under its chat (`CHAT_MESSAGES`, in order) and its id
//! (`MESSAGE_IDS`), and its chat's record (`CHATS`) takes it in. The chat
//! flags the account's devices change are written here too, and a chat is
//! deleted with its messages.

use std::collections::HashMap;

use redb::{ReadableTable, WriteTransaction};

use super::tables::{
    CHAT_MESSAGES, CHATS, CHATS_INDEXED_KEY, LID_MAP, MESSAGE_IDS, MESSAGES, META, opened,
};
use super::{Store, StoreResult, decode, encode};
use crate::domain::chat::{BodyFacts, ChatRecord};
use crate::domain::message::MessageRecord;

/// One page of a chat's messages, newest first.
#[derive(Debug, Clone)]
pub struct ChatPage {
    /// The messages.
    pub messages: Vec<MessageRecord>,
    /// The cursor of the next (older) page; `None` on the last page.
    pub next_cursor: Option<u64>,
}

/// The chat a one-to-one conversation is listed under: its phone JID when
/// the chat is an `@lid` whose phone is known (from `phone`, else the
/// session's learned mapping), so the messages received from an `@lid` and
/// those sent to the phone are one chat; any other chat as it is.
fn chat_key(
    lids: &impl ReadableTable<(&'static str, &'static str), &'static str>,
    session_id: &str,
    chat: &str,
    phone: Option<&str>,
) -> StoreResult<String> {
    let Some(lid_user) = chat.strip_suffix("@lid") else {
        return Ok(chat.to_owned());
    };
    let phone = match phone {
        Some(p) => Some(p.to_owned()),
        None => lids
            .get((session_id, lid_user))?
            .map(|v| v.value().to_owned()),
    };
    Ok(match phone {
        Some(p) => format!("{p}@s.whatsapp.net"),
        None => chat.to_owned(),
    })
}

/// Indexes message record `record`, stored as `MESSAGES` row `seq`, and
/// updates its chat. A record of a message id the chat already holds is
/// listed but not counted again.
pub(crate) fn index_message(
    tx: &WriteTransaction,
    record: &MessageRecord,
    seq: u64,
) -> StoreResult<()> {
    let mut index = ChatIndex::new(tx);
    index.index(record, seq)?;
    index.close()
}

/// The chat index's tables, each opened when first needed and kept open
/// for a run of message writes, and the chats those writes changed, kept
/// in memory until [`ChatIndex::close`] writes each once: a burst of
/// messages in one chat (a busy group) reads and writes its record once,
/// not once per message.
pub(crate) struct ChatIndex<'t> {
    tx: &'t WriteTransaction,
    lids: Option<redb::Table<'t, (&'static str, &'static str), &'static str>>,
    ids: Option<redb::Table<'t, (&'static str, &'static str), u64>>,
    listed: Option<redb::Table<'t, (&'static str, &'static str, u64), &'static str>>,
    chats: Option<redb::Table<'t, (&'static str, &'static str), &'static [u8]>>,
    /// Chats changed and not yet written, by (session, chat key).
    changed: HashMap<(String, String), ChatRecord>,
}

impl<'t> ChatIndex<'t> {
    /// An index over `tx` with nothing opened yet.
    pub(crate) fn new(tx: &'t WriteTransaction) -> Self {
        ChatIndex {
            tx,
            lids: None,
            ids: None,
            listed: None,
            chats: None,
            changed: HashMap::new(),
        }
    }

    /// Indexes message record `record`, stored as `MESSAGES` row `seq`,
    /// and takes it into its chat (written by [`ChatIndex::close`]).
    pub(crate) fn index(&mut self, record: &MessageRecord, seq: u64) -> StoreResult<()> {
        self.index_with(record, &BodyFacts::of(&record.body), seq)
    }

    /// [`ChatIndex::index`] with what it reads of the record's body read
    /// already (`facts`); the record's own body is not looked at.
    pub(crate) fn index_with(
        &mut self,
        record: &MessageRecord,
        facts: &BodyFacts,
        seq: u64,
    ) -> StoreResult<()> {
        let tx = self.tx;
        let session = record.session_id.as_str();
        let phone = facts.chat_phone.as_deref();
        let key = chat_key(
            opened(&mut self.lids, tx, LID_MAP)?,
            session,
            &record.chat,
            phone,
        )?;
        let chat = key.as_str();
        let earlier = opened(&mut self.ids, tx, MESSAGE_IDS)?
            .insert((session, record.message_id.as_str()), seq)?
            .map(|v| v.value());
        let listed = opened(&mut self.listed, tx, CHAT_MESSAGES)?;
        listed.insert((session, chat, seq), record.message_id.as_str())?;
        // A message id the chat holds already (a live location's next
        // update, or a redelivery after a restart, past the in-memory
        // dedup) is kept in the history but counted once.
        if let Some(old) = earlier
            && listed.get((session, chat, old))?.is_some()
        {
            return Ok(());
        }
        let slot = (session.to_owned(), key);
        if !self.changed.contains_key(&slot) {
            let stored =
                match opened(&mut self.chats, tx, CHATS)?.get((session, slot.1.as_str()))? {
                    Some(v) => decode::<ChatRecord>(v.value())?,
                    None => ChatRecord::new(&slot.1),
                };
            self.changed.insert(slot.clone(), stored);
        }
        if let Some(c) = self.changed.get_mut(&slot) {
            c.on_message(record, facts);
        }
        Ok(())
    }

    /// Writes every changed chat and closes the tables (a later
    /// [`ChatIndex::index`] opens them again).
    pub(crate) fn close(&mut self) -> StoreResult<()> {
        if !self.changed.is_empty() {
            let chats = opened(&mut self.chats, self.tx, CHATS)?;
            for ((session, chat), record) in self.changed.drain() {
                chats.insert(
                    (session.as_str(), chat.as_str()),
                    encode(&record)?.as_slice(),
                )?;
            }
        }
        self.lids = None;
        self.ids = None;
        self.listed = None;
        self.chats = None;
        Ok(())
    }
}

/// Indexes every message record of a store written before the chat index
/// existed, once (marked in `META`).
pub(crate) fn index_existing(tx: &WriteTransaction) -> StoreResult<()> {
    let mut meta = tx.open_table(META)?;
    if meta.get(CHATS_INDEXED_KEY)?.is_some() {
        return Ok(());
    }
    let mut rows: Vec<(u64, Vec<u8>)> = {
        let messages = tx.open_table(MESSAGES)?;
        let mut rows = Vec::new();
        for row in messages.iter()? {
            let (k, v) = row?;
            rows.push((k.value().1, v.value().to_vec()));
        }
        rows
    };
    rows.sort_by_key(|(seq, _)| *seq);
    for (seq, bytes) in rows {
        index_message(tx, &decode::<MessageRecord>(&bytes)?, seq)?;
    }
    meta.insert(CHATS_INDEXED_KEY, 1)?;
    Ok(())
}

/// Removes every chat, chat index row and id index row of a session.
pub(crate) fn delete_session_chats(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    super::delete_session_keys(tx, CHATS, session_id)?;
    super::delete_session_keys(tx, MESSAGE_IDS, session_id)?;
    let mut t = tx.open_table(CHAT_MESSAGES)?;
    // Chat JIDs are ASCII: every one of the session's sorts below U+10FFFF.
    t.retain_in(
        (session_id, "", 0u64)..=(session_id, "\u{10FFFF}", u64::MAX),
        |_, _| false,
    )?;
    Ok(())
}

impl Store {
    /// The key a chat is listed under (see [`chat_key`]): an `@lid` whose
    /// phone the session learned is its phone JID.
    pub fn chat_key(&self, session_id: &str, chat: &str) -> StoreResult<String> {
        self.read(|tx| chat_key(&tx.open_table(LID_MAP)?, session_id, chat, None))
    }

    /// Every chat of a session (unordered).
    pub fn list_chats(&self, session_id: &str) -> StoreResult<Vec<ChatRecord>> {
        self.read(|tx| {
            let t = tx.open_table(CHATS)?;
            let mut out = Vec::new();
            for row in t.range((session_id, "")..)? {
                let (k, v) = row?;
                if k.value().0 != session_id {
                    break;
                }
                out.push(decode(v.value())?);
            }
            Ok(out)
        })
    }

    /// One chat of a session.
    pub fn chat(&self, session_id: &str, jid: &str) -> StoreResult<Option<ChatRecord>> {
        self.read(|tx| {
            let t = tx.open_table(CHATS)?;
            t.get((session_id, jid))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// Changes one chat (created when the gateway had none: the account's
    /// devices may speak of a chat before any of its messages arrives) and
    /// returns it.
    pub fn update_chat(
        &self,
        session_id: &str,
        jid: &str,
        f: impl FnOnce(&mut ChatRecord),
    ) -> StoreResult<ChatRecord> {
        self.write(|tx| {
            let mut t = tx.open_table(CHATS)?;
            let mut c = match t.get((session_id, jid))? {
                Some(v) => decode::<ChatRecord>(v.value())?,
                None => ChatRecord::new(jid),
            };
            f(&mut c);
            t.insert((session_id, jid), encode(&c)?.as_slice())?;
            Ok(c)
        })
    }

    /// Deletes a chat and its messages; `false` when there was no such chat.
    pub fn delete_chat(&self, session_id: &str, jid: &str) -> StoreResult<bool> {
        self.write(|tx| {
            let existed = tx.open_table(CHATS)?.remove((session_id, jid))?.is_some();
            let mut index = tx.open_table(CHAT_MESSAGES)?;
            let mut rows = Vec::new();
            for row in index.range((session_id, jid, 0u64)..=(session_id, jid, u64::MAX))? {
                let (k, v) = row?;
                rows.push((k.value().2, v.value().to_owned()));
            }
            index.retain_in(
                (session_id, jid, 0u64)..=(session_id, jid, u64::MAX),
                |_, _| false,
            )?;
            let mut messages = tx.open_table(MESSAGES)?;
            let mut ids = tx.open_table(MESSAGE_IDS)?;
            for (seq, id) in &rows {
                messages.remove((session_id, *seq))?;
                if ids.get((session_id, id.as_str()))?.map(|v| v.value()) == Some(*seq) {
                    ids.remove((session_id, id.as_str()))?;
                }
            }
            Ok(existed || !rows.is_empty())
        })
    }

    /// One page of a chat's messages, newest first, starting below `before`
    /// (a message seq, the previous page's cursor) or at the newest.
    pub fn chat_messages(
        &self,
        session_id: &str,
        jid: &str,
        before: Option<u64>,
        limit: usize,
    ) -> StoreResult<ChatPage> {
        self.read(|tx| {
            let index = tx.open_table(CHAT_MESSAGES)?;
            let messages = tx.open_table(MESSAGES)?;
            let end = before.unwrap_or(u64::MAX);
            let mut out = Vec::with_capacity(limit.min(1024));
            let mut last_seq = None;
            let mut more = false;
            for row in index
                .range((session_id, jid, 0u64)..(session_id, jid, end))?
                .rev()
            {
                let (k, _) = row?;
                if out.len() == limit {
                    more = true;
                    break;
                }
                let seq = k.value().2;
                if let Some(v) = messages.get((session_id, seq))? {
                    out.push(decode(v.value())?);
                    last_seq = Some(seq);
                }
            }
            Ok(ChatPage {
                messages: out,
                next_cursor: if more { last_seq } else { None },
            })
        })
    }

    /// The latest message record with this id in a session.
    pub fn message_by_id(
        &self,
        session_id: &str,
        message_id: &str,
    ) -> StoreResult<Option<MessageRecord>> {
        self.read(|tx| {
            let ids = tx.open_table(MESSAGE_IDS)?;
            let Some(seq) = ids.get((session_id, message_id))?.map(|v| v.value()) else {
                return Ok(None);
            };
            let messages = tx.open_table(MESSAGES)?;
            messages
                .get((session_id, seq))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::domain::message::{Direction, MessageRecord};
    use crate::domain::session::SessionRecord;

    fn message(session: &str, chat: &str, id: &str, ts: i64) -> MessageRecord {
        MessageRecord {
            message_id: id.into(),
            session_id: session.into(),
            direction: Direction::Inbound,
            chat: chat.into(),
            sender: Some(chat.into()),
            kind: "text".into(),
            body: serde_json::json!({"text": id}),
            timestamp: ts,
        }
    }

    #[test]
    fn a_chats_history_pages_newest_first_and_goes_with_the_chat() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store
            .insert_session(&SessionRecord::new("s".into(), None, "sim".into(), None))
            .unwrap();
        let a = "1@s.whatsapp.net";
        for i in 0..5 {
            store
                .append_message(&message("s", a, &format!("A{i}"), i))
                .unwrap();
        }
        store
            .append_message(&message("s", "2@s.whatsapp.net", "B0", 9))
            .unwrap();
        let first = store.chat_messages("s", a, None, 2).unwrap();
        let ids: Vec<_> = first
            .messages
            .iter()
            .map(|m| m.message_id.as_str())
            .collect();
        assert_eq!(ids, ["A4", "A3"]);
        let second = store.chat_messages("s", a, first.next_cursor, 2).unwrap();
        let third = store.chat_messages("s", a, second.next_cursor, 2).unwrap();
        assert_eq!(third.messages.len(), 1);
        assert_eq!(third.next_cursor, None);
        assert_eq!(store.chat("s", a).unwrap().unwrap().unread_count, 5);
        // Recorded again (redelivered after a restart): listed, counted once.
        store.append_message(&message("s", a, "A4", 4)).unwrap();
        assert_eq!(store.chat("s", a).unwrap().unwrap().unread_count, 5);
        assert_eq!(store.chat("s", a).unwrap().unwrap().message_count, 5);
        let again = store.chat_messages("s", a, None, 10).unwrap();
        assert_eq!(again.messages.len(), 6);
        assert_eq!(
            store.message_by_id("s", "A2").unwrap().unwrap().timestamp,
            2
        );
        assert!(store.delete_chat("s", a).unwrap());
        assert!(store.chat("s", a).unwrap().is_none());
        assert!(store.message_by_id("s", "A2").unwrap().is_none());
        assert_eq!(store.list_messages("s", 0, 10).unwrap().len(), 1);
        assert_eq!(store.list_chats("s").unwrap().len(), 1);
        store.delete_session("s").unwrap();
        assert!(store.list_chats("s").unwrap().is_empty());
        assert!(store.message_by_id("s", "B0").unwrap().is_none());
    }
}
