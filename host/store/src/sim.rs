//! The simulated network's own durable state: outside users and the outbox
//! (what the network received from each session). Kept in the same database so
//! a restart of the gateway is not a reset of the simulated world.

use redb::ReadableTable;

use super::tables::{OUTBOX_SEQ_KEY, SIM_OUTBOX, SIM_OUTBOX_IDS, SIM_USERS};
use super::{Store, StoreResult, decode, encode, next_seq, page_newest_first};

pub use crate::domain::sim::{OutboxEntry, SimUser};

impl Store {
    /// Registers or replaces an outside user of the simulated network.
    pub fn put_sim_user(&self, user: &SimUser) -> StoreResult<()> {
        let bytes = encode(user)?;
        self.write(|tx| {
            tx.open_table(SIM_USERS)?
                .insert(user.phone.as_str(), bytes.as_slice())?;
            Ok(())
        })
    }

    /// One outside user by phone digits.
    pub fn get_sim_user(&self, phone: &str) -> StoreResult<Option<SimUser>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_USERS)?;
            t.get(phone)?.map(|v| decode(v.value())).transpose()
        })
    }

    /// Every outside user, ordered by phone.
    pub fn list_sim_users(&self) -> StoreResult<Vec<SimUser>> {
        self.read(|tx| {
            let t = tx.open_table(SIM_USERS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                out.push(decode(row?.1.value())?);
            }
            Ok(out)
        })
    }

    /// Appends to a session's outbox; returns once it is durably committed
    /// (in a group commit with concurrent writes, blocking the thread until then).
    pub fn append_outbox(&self, session_id: &str, entry: &OutboxEntry) -> StoreResult<()> {
        self.write_grouped_blocking(outbox_job(session_id, entry)?)
    }

    /// [`Store::append_outbox`] for async callers: awaits the group commit.
    pub async fn append_outbox_async(
        &self,
        session_id: &str,
        entry: &OutboxEntry,
    ) -> StoreResult<()> {
        self.write_grouped(outbox_job(session_id, entry)?).await
    }

    /// The outbox entry a session sent under `message_id`, if any.
    pub fn find_outbox(
        &self,
        session_id: &str,
        message_id: &str,
    ) -> StoreResult<Option<OutboxEntry>> {
        self.read(|tx| {
            let Some(seq) = tx
                .open_table(SIM_OUTBOX_IDS)?
                .get((session_id, message_id))?
                .map(|v| v.value())
            else {
                return Ok(None);
            };
            let t = tx.open_table(SIM_OUTBOX)?;
            t.get((session_id, seq))?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }

    /// A session's outbox in the order the network received it (oldest first).
    pub fn list_outbox(&self, session_id: &str) -> StoreResult<Vec<OutboxEntry>> {
        self.read(|tx| {
            let mut page: Vec<OutboxEntry> =
                page_newest_first(tx, SIM_OUTBOX, session_id, 0, usize::MAX)?;
            page.reverse();
            Ok(page)
        })
    }
}

/// The write of one outbox entry (and its id index), as a group-commit job.
fn outbox_job(
    session_id: &str,
    entry: &OutboxEntry,
) -> StoreResult<impl FnMut(&redb::WriteTransaction) -> StoreResult<()> + Send + 'static> {
    let bytes = encode(entry)?;
    let (session_id, message_id) = (session_id.to_owned(), entry.message_id.clone());
    Ok(move |tx: &redb::WriteTransaction| {
        let seq = next_seq(tx, OUTBOX_SEQ_KEY)?;
        tx.open_table(SIM_OUTBOX)?
            .insert((session_id.as_str(), seq), bytes.as_slice())?;
        tx.open_table(SIM_OUTBOX_IDS)?
            .insert((session_id.as_str(), message_id.as_str()), seq)?;
        Ok(())
    })
}
