//! Device and protocol state of the `whatsapp` network backend, kept in the
//! gateway's redb file instead of the crate's SQLite store.
//!
//! Device state in four tables (`store/tables.rs`): `WA_DEVICE` holds each
//! session's device document; `WA_SIGNAL`, `WA_APP_STATE` and `WA_PROTOCOL`
//! hold everything else as `(session id, kind, key) → bytes`, one trait family
//! per table. Message history in three more: `WA_MESSAGES` keeps the raw
//! protos of sent and received messages (for quotes and poll votes), with its
//! time index `WA_MESSAGES_BY_TIME` and per-session row count
//! `WA_MESSAGE_COUNTS` (`messages.rs`); each chat's disappearing-messages
//! timer in `WA_CHAT_TIMERS` (`chat_timers.rs`). A session is one key range in each,
//! so [`delete_session_whatsapp`] (called by `Store::delete_session`) drops
//! all of it in the session's delete transaction; a logout
//! ([`Store::wipe_whatsapp_state`](super::Store::wipe_whatsapp_state)) drops
//! only the device state. The tables and the cascade exist in every build, so
//! a database written by a build with the backend is cleaned up by one
//! without it.
//!
//! With the `whatsapp` feature, [`WaStore`] implements the crate's storage
//! traits on the device-state tables (one file per trait family); the crate's
//! in-memory store is the reference for their semantics (see `conformance`).
//! The message history is the gateway's own API ([`WaMessageRow`] and the
//! `Store` methods next to it), not a crate trait.

use redb::{ReadableTable, TableDefinition, WriteTransaction};

use super::StoreResult;
use super::tables::{
    WA_APP_STATE, WA_CHAT_TIMERS, WA_DEVICE, WA_MESSAGE_COUNTS, WA_MESSAGES, WA_MESSAGES_BY_TIME,
    WA_PROTOCOL, WA_SIGNAL,
};

#[cfg(feature = "whatsapp")]
mod app_state;
mod chat_timers;
pub use chat_timers::ChatTimer;
#[cfg(all(test, feature = "whatsapp"))]
mod conformance;
#[cfg(all(test, feature = "whatsapp"))]
mod conformance_phase_two;
#[cfg(all(test, feature = "whatsapp"))]
mod conformance_scenarios;
#[cfg(feature = "whatsapp")]
mod device;
#[cfg(feature = "whatsapp")]
mod kv;
#[cfg(feature = "whatsapp")]
mod messages;
#[cfg(feature = "whatsapp")]
mod protocol;
#[cfg(feature = "whatsapp")]
mod protocol_messages;
#[cfg(feature = "whatsapp")]
mod signal;

#[cfg(feature = "whatsapp")]
pub use app_state::VersionWrites;
#[cfg(feature = "whatsapp")]
pub use kv::WaStore;
#[cfg(feature = "whatsapp")]
pub use messages::WaMessageRow;

/// The shape of the three key-value tables: (session id, kind, key) → bytes.
pub(crate) type KvTable =
    TableDefinition<'static, (&'static str, &'static str, &'static [u8]), &'static [u8]>;

/// Creates the backend's tables (called when the store opens).
pub(crate) fn create_tables(tx: &WriteTransaction) -> StoreResult<()> {
    tx.open_table(WA_DEVICE)?;
    tx.open_table(WA_SIGNAL)?;
    tx.open_table(WA_APP_STATE)?;
    tx.open_table(WA_PROTOCOL)?;
    tx.open_table(WA_MESSAGES)?;
    tx.open_table(WA_MESSAGES_BY_TIME)?;
    tx.open_table(WA_MESSAGE_COUNTS)?;
    tx.open_table(WA_CHAT_TIMERS)?;
    Ok(())
}

/// Removes every row the backend keeps for `session_id`: device state,
/// message history and chat timers.
pub(crate) fn delete_session_whatsapp(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    delete_device_state(tx, session_id)?;
    delete_message_history(tx, session_id)
}

/// Removes the device and protocol state of `session_id` (what pairing made).
fn delete_device_state(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    tx.open_table(WA_DEVICE)?.remove(session_id)?;
    for table in [WA_SIGNAL, WA_APP_STATE, WA_PROTOCOL] {
        delete_session_rows(tx, table, session_id)?;
    }
    Ok(())
}

/// Removes the kept message protos of `session_id`, their time index and
/// count, and its chat timers.
fn delete_message_history(tx: &WriteTransaction, session_id: &str) -> StoreResult<()> {
    super::delete_session_keys(tx, WA_MESSAGES, session_id)?;
    let mut by_time = tx.open_table(WA_MESSAGES_BY_TIME)?;
    let mut keys: Vec<(i64, String)> = Vec::new();
    for row in by_time.range((session_id, i64::MIN, "")..)? {
        let (k, _) = row?;
        let (sid, ts, id) = k.value();
        if sid != session_id {
            break;
        }
        keys.push((ts, id.to_owned()));
    }
    for (ts, id) in keys {
        by_time.remove((session_id, ts, id.as_str()))?;
    }
    tx.open_table(WA_MESSAGE_COUNTS)?.remove(session_id)?;
    super::delete_session_keys(tx, WA_CHAT_TIMERS, session_id)
}

impl super::Store {
    /// Drops the backend's device and protocol state of a session (a logout:
    /// the next connect pairs a new device). Returns whether there was a device.
    ///
    /// The kept message protos stay: they are the session's message history,
    /// like its gateway messages, and a session that pairs the same account
    /// again can still quote them and read the votes on its earlier polls.
    pub fn wipe_whatsapp_state(&self, session_id: &str) -> StoreResult<bool> {
        self.write(|tx| {
            let had = tx.open_table(WA_DEVICE)?.get(session_id)?.is_some();
            delete_device_state(tx, session_id)?;
            Ok(had)
        })
    }
}

/// Removes every row of a key-value table that belongs to `session_id`.
fn delete_session_rows(tx: &WriteTransaction, table: KvTable, session_id: &str) -> StoreResult<()> {
    let mut t = tx.open_table(table)?;
    let mut keys: Vec<(String, Vec<u8>)> = Vec::new();
    for row in t.range((session_id, "", &[][..])..)? {
        let (k, _) = row?;
        let (sid, kind, key) = k.value();
        if sid != session_id {
            break;
        }
        keys.push((kind.to_owned(), key.to_vec()));
    }
    for (kind, key) in keys {
        t.remove((session_id, kind.as_str(), key.as_slice()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::domain::session::SessionRecord;
    use redb::ReadableTableMetadata;

    #[test]
    fn deleting_a_session_removes_its_whatsapp_state_and_keeps_the_neighbours() {
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
        store
            .write(|tx| {
                for sid in ["a", "ab"] {
                    tx.open_table(WA_DEVICE)?.insert(sid, &b"device"[..])?;
                    for table in [WA_SIGNAL, WA_APP_STATE, WA_PROTOCOL] {
                        let mut t = tx.open_table(table)?;
                        t.insert((sid, "k1", &b"x"[..]), &b"1"[..])?;
                        t.insert((sid, "k2", &b"y"[..]), &b"2"[..])?;
                    }
                }
                Ok(())
            })
            .unwrap();
        assert!(store.delete_session("a").unwrap());
        let left = store
            .read(|tx| {
                let mut n = Vec::new();
                n.push(tx.open_table(WA_DEVICE)?.len()?);
                for table in [WA_SIGNAL, WA_APP_STATE, WA_PROTOCOL] {
                    n.push(tx.open_table(table)?.len()?);
                }
                Ok(n)
            })
            .unwrap();
        assert_eq!(left, [1, 2, 2, 2], "only session `ab` is left");
    }
}
