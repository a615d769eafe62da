//! Message records, newest first per session.

use super::tables::{MESSAGE_SEQ_KEY, MESSAGES};
use super::{Store, StoreResult, encode, next_seq, page_newest_first};
use crate::domain::message::MessageRecord;

impl Store {
    /// Appends a message record to its session's history; returns once it
    /// is durably committed (in a group commit with concurrent writes,
    /// blocking the thread until then).
    pub fn append_message(&self, record: &MessageRecord) -> StoreResult<()> {
        self.write_grouped_blocking(append_job(record)?)
    }

    /// [`Store::append_message`] for async callers: awaits the group commit.
    pub async fn append_message_async(&self, record: &MessageRecord) -> StoreResult<()> {
        self.write_grouped(append_job(record)?).await
    }

    /// One page of a session's messages, newest first.
    pub fn list_messages(
        &self,
        session_id: &str,
        offset: usize,
        limit: usize,
    ) -> StoreResult<Vec<MessageRecord>> {
        self.read(|tx| page_newest_first(tx, MESSAGES, session_id, offset, limit))
    }
}

/// The write of one message record, as a group-commit job.
fn append_job(
    record: &MessageRecord,
) -> StoreResult<impl FnMut(&redb::WriteTransaction) -> StoreResult<()> + Send + 'static + use<>> {
    let bytes = encode(record)?;
    let record = record.clone();
    Ok(move |tx: &redb::WriteTransaction| append_in(tx, &record, &bytes))
}

/// Appends a message record (`bytes`, its encoding) inside `tx`, and
/// indexes it under its chat and id.
fn append_in(tx: &redb::WriteTransaction, record: &MessageRecord, bytes: &[u8]) -> StoreResult<()> {
    let seq = next_seq(tx, MESSAGE_SEQ_KEY)?;
    tx.open_table(MESSAGES)?
        .insert((record.session_id.as_str(), seq), bytes)?;
    super::chats::index_message(tx, record, seq)
}
