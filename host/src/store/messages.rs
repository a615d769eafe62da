//! Message records, newest first per session.

use super::tables::{MESSAGE_SEQ_KEY, MESSAGES};
use super::{Store, StoreResult, encode, next_seq, page_newest_first};
use crate::domain::message::MessageRecord;

impl Store {
    /// Appends a message record to its session's history.
    pub fn append_message(&self, record: &MessageRecord) -> StoreResult<()> {
        let bytes = encode(record)?;
        self.write(|tx| {
            let seq = next_seq(tx, MESSAGE_SEQ_KEY)?;
            tx.open_table(MESSAGES)?
                .insert((record.session_id.as_str(), seq), bytes.as_slice())?;
            Ok(())
        })
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
