//! The one redb database of the gateway (`switchboard.redb` in the data
//! directory). Every write is one transaction: a crash leaves either the whole
//! change or none of it.

mod batch;
mod blasts;
mod chats;
mod contact_memo;
mod contacts;
mod event_log;
mod handle;
mod health;
mod lid;
mod media;
mod messages;
mod outbox;
mod plugins;
mod scheduled;
pub mod secrets;
mod session_cache;
mod sessions;
mod sim;
mod sim_account;
mod sim_groups;
pub mod tables;
mod timings;
mod tokens;
mod webhooks;
pub mod whatsapp;

use switchboard_domain as domain;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, ReadTransaction, ReadableDatabase, ReadableTable, WriteTransaction};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::domain::storage_fault::StorageFault;

pub use blasts::NextRecipient;
pub use chats::ChatPage;
pub use event_log::{EventLogBounds, EventWrite, LoggedEvent, PreparedEvent};
pub use health::{StorageEpisode, StoreStatus, free_bytes};
pub use outbox::{NewDelivery, OutboxKey, OutboxRow};
pub use scheduled::{DueEntry, DueHeads};
pub use sim::{OutboxEntry, SimUser};
pub use sim_account::{SimAddressEntry, SimTcToken};
pub use sim_groups::{SimGroup, SimMember, SimTopic};
use tables::{META, SCHEMA_VERSION_KEY};
pub use timings::StoreTimings;
pub use webhooks::WebhookInsert;

/// The schema version this build writes. A file created by a newer build is
/// refused at open; an older one is migrated (none exist yet).
///
/// 2: an outbox row may point at its event-log row instead of holding the
/// payload (a version 1 file is read as it is and marked 2 at open; a
/// version 1 binary would misread such rows, so it refuses the file).
///
/// 3: message records are indexed by chat and id, with a record per chat,
/// and learned lids by phone (indexed once at open from older files); a
/// version 2 binary would write records without indexing them and delete
/// sessions without their index rows, so it refuses the file.
///
/// 4: the outbox is keyed by session, then URL (each session's backlog for
/// a URL its own), and each session has an incarnation; older files are
/// moved to these at open, and a version 3 binary would find an empty
/// outbox of its own, so it refuses the file.
pub const SCHEMA_VERSION: u64 = 4;

/// The database file name inside the data directory.
pub const DB_FILE: &str = "switchboard.redb";

/// A store failure. Handlers turn a [`StoreError::Fault`] into `507` or
/// `503` (see [`StoreError::fault`]) and anything else into an opaque 500
/// after logging it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file was written by a newer Switchboard.
    #[error(
        "the database {path} has schema version {found}, newer than {supported} which this build supports; run a newer Switchboard or point --data-dir elsewhere"
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: u64,
        /// The version this build writes.
        supported: u64,
    },
    /// Another process (or another server in this process) has the file open.
    #[error("the database {0} is already open by another Switchboard process")]
    AlreadyOpen(PathBuf),
    /// redb reported an error.
    #[error("database error: {0}")]
    Redb(#[from] redb::Error),
    /// A stored document could not be (de)serialised.
    #[error("stored record is corrupt: {0}")]
    Corrupt(#[from] serde_json::Error),
    /// The write was not made: what makes it stopped first (the gateway is
    /// stopping).
    #[error("not stored: {0}")]
    Stopped(&'static str),
    /// A storage fault (a full disk, an I/O error) stopped the operation,
    /// or has the store closed while it is reopened; nothing was written.
    #[error("{1}")]
    Fault(StorageFault, &'static str),
    /// A sealed secret (a proxy's credentials) or the key that seals them
    /// could not be read.
    #[error("{0}")]
    Secret(String),
}

impl StoreError {
    /// The storage fault this error is, if it is one: the caller can wait
    /// and try again (the store reopens itself once the fault is gone).
    pub fn fault(&self) -> Option<StorageFault> {
        match self {
            StoreError::Fault(f, _) => Some(*f),
            _ => None,
        }
    }
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self { StoreError::Redb(e.into()) }
        }
    )*};
}
from_redb!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// Shorthand for store results.
pub type StoreResult<T> = Result<T, StoreError>;

/// A handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    /// The database, reopened after a storage fault (`handle.rs`).
    db: Arc<handle::DbHandle>,
    timings: crate::timings::StoreTimings,
    /// The group-commit writer (`batch.rs`).
    batch: batch::GroupCommit,
    /// Session records as committed (`session_cache.rs`).
    sessions: Arc<session_cache::SessionCache>,
    /// Delivered outbox rows waiting to be removed by the next event write
    /// (`outbox.rs`).
    removals: outbox::Removals,
    /// Contact observations known to change nothing (`contact_memo.rs`).
    contact_memo: Arc<contact_memo::ContactMemo>,
    /// The data directory's sealing key (`secrets.rs`).
    secrets: Arc<secrets::Secrets>,
}

/// How long opening waits for a database another handle is still closing:
/// a restart (a supervisor's, or a gateway started again in the same
/// process) can come while the previous owner's last commit is finishing.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);

/// Opens or creates the database file; while its lock is held, tries again
/// until [`LOCK_PATIENCE`] has passed, then reports it as open elsewhere.
fn create_waiting_for_lock(path: &Path) -> StoreResult<Database> {
    let deadline = std::time::Instant::now() + LOCK_PATIENCE;
    loop {
        match Database::create(path) {
            Ok(db) => return Ok(db),
            Err(redb::DatabaseError::DatabaseAlreadyOpen)
                if std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                return Err(StoreError::AlreadyOpen(path.to_owned()));
            }
            Err(other) => return Err(StoreError::Redb(other.into())),
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

/// How the store behaves when its storage fails.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// The first wait before the file is opened again after a fault.
    pub reopen_backoff_min: std::time::Duration,
    /// The longest wait between attempts to open it again.
    pub reopen_backoff_max: std::time::Duration,
    /// Free space of the data directory under which
    /// [`Store::check_free_space`] refuses new bulk work, in bytes.
    pub min_free_bytes: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            reopen_backoff_min: std::time::Duration::from_millis(100),
            reopen_backoff_max: std::time::Duration::from_secs(10),
            min_free_bytes: 64 * 1024 * 1024,
        }
    }
}

impl Store {
    /// Opens (or creates) the database in `data_dir`, creating the directory,
    /// every table and the schema version on first use.
    pub fn open(data_dir: &Path) -> StoreResult<Store> {
        Store::open_with(data_dir, StoreOptions::default())
    }

    /// [`Store::open`] with its fault handling configured.
    pub fn open_with(data_dir: &Path, options: StoreOptions) -> StoreResult<Store> {
        std::fs::create_dir_all(data_dir).map_err(|e| StoreError::Redb(e.into()))?;
        let path = data_dir.join(DB_FILE);
        let db = create_waiting_for_lock(&path)?;
        let reopen_path = path.clone();
        let open: handle::Opener = Box::new(move || Database::create(&reopen_path));
        Store::with_database(db, open, data_dir, &path, options)
    }

    /// A store on `db`, which `open` opens again after a fault.
    fn with_database(
        db: Database,
        open: handle::Opener,
        data_dir: &Path,
        path: &Path,
        options: StoreOptions,
    ) -> StoreResult<Store> {
        let secrets = Arc::new(secrets::Secrets::open(data_dir)?);
        let health = health::StoreHealth::new(data_dir, options.min_free_bytes);
        let db = Arc::new(handle::DbHandle::new(db, open, health));
        let timings = crate::timings::StoreTimings::default();
        let batch = batch::GroupCommit::start(&db, timings.write_seconds.clone(), &options)
            .map_err(|e| StoreError::Redb(e.into()))?;
        let store = Store {
            db,
            timings,
            batch,
            sessions: Default::default(),
            removals: Default::default(),
            contact_memo: Default::default(),
            secrets,
        };
        store.init_schema(path)?;
        Ok(store)
    }

    /// Whether the store takes writes, or the fault it is failing with.
    pub fn status(&self) -> StoreStatus {
        self.db.health.status()
    }

    /// Every change of [`Store::status`], for who tells the operator.
    pub fn watch_health(&self) -> tokio::sync::watch::Receiver<StoreStatus> {
        self.db.health.watch()
    }

    /// The runs of failure that ended since the last call (each once), for
    /// the events that tell subscribers.
    pub fn take_storage_episodes(&self) -> Vec<StorageEpisode> {
        self.db.health.take_episodes()
    }

    /// Free bytes of the data directory's filesystem.
    pub fn free_bytes(&self) -> Option<u64> {
        self.db.health.free_bytes()
    }

    /// The free-space floor of [`Store::check_free_space`], in bytes.
    pub fn min_free_bytes(&self) -> u64 {
        self.db.health.min_free_bytes()
    }

    /// Refuses new bulk work (an upload, a blast) while the data directory
    /// has less free space than configured, or the store is failing, so the
    /// disk does not fill with work the store then cannot record.
    pub fn check_free_space(&self) -> StoreResult<()> {
        if let Some(fault) = self.db.health.failing() {
            return Err(StoreError::Fault(
                fault,
                "the store is failing; it takes no new work until it recovers",
            ));
        }
        match self.free_bytes() {
            Some(free) if free < self.db.health.min_free_bytes() => Err(StoreError::Fault(
                StorageFault::NoSpace,
                "the data directory is under its free-space floor (--min-free-space-mb); free space before adding work",
            )),
            _ => Ok(()),
        }
    }

    fn init_schema(&self, path: &Path) -> StoreResult<()> {
        let tx = self.db.current()?.begin_write()?;
        {
            let mut meta = tx.open_table(META)?;
            let found = meta.get(SCHEMA_VERSION_KEY)?.map(|v| v.value());
            match found {
                Some(v) if v > SCHEMA_VERSION => {
                    return Err(StoreError::NewerSchema {
                        path: path.to_owned(),
                        found: v,
                        supported: SCHEMA_VERSION,
                    });
                }
                // Every older format is still read as it is.
                Some(v) if v < SCHEMA_VERSION => {
                    meta.insert(SCHEMA_VERSION_KEY, SCHEMA_VERSION)?;
                }
                Some(_) => {}
                None => {
                    meta.insert(SCHEMA_VERSION_KEY, SCHEMA_VERSION)?;
                }
            }
            // Create every table up front so read transactions never meet a missing one.
            tx.open_table(tables::SESSIONS)?;
            tx.open_table(tables::SESSION_INCARNATIONS)?;
            tx.open_table(tables::MESSAGES)?;
            tx.open_table(tables::CHATS)?;
            tx.open_table(tables::TOKENS)?;
            tx.open_table(tables::TOKEN_HASHES)?;
            tx.open_table(tables::CHAT_MESSAGES)?;
            tx.open_table(tables::MESSAGE_IDS)?;
            tx.open_table(tables::SIM_USERS)?;
            tx.open_table(tables::SIM_OUTBOX)?;
            tx.open_table(tables::SIM_OUTBOX_IDS)?;
            tx.open_table(tables::SIM_GROUPS)?;
            tx.open_table(tables::LID_MAP)?;
            tx.open_table(tables::LID_BY_PHONE)?;
            tx.open_table(tables::WEBHOOKS)?;
            tx.open_table(tables::WEBHOOK_DLQ)?;
            tx.open_table(tables::WEBHOOK_OUTBOX)?;
            tx.open_table(tables::WEBHOOK_OUTBOX_DEPTH)?;
            tx.open_table(tables::EVENT_LOG)?;
            tx.open_table(tables::CONTACTS)?;
            tx.open_table(tables::SIM_ADDRESS_BOOK)?;
            tx.open_table(tables::SIM_APP_STATE)?;
            tx.open_table(tables::SIM_TCTOKENS)?;
            tx.open_table(tables::SIM_BLOCKS)?;
            tx.open_table(tables::SIM_PROFILES)?;
            tx.open_table(tables::MEDIA)?;
            blasts::create_tables(&tx)?;
            tx.open_table(tables::SCHEDULED)?;
            tx.open_table(tables::SCHEDULED_BODIES)?;
            tx.open_table(tables::SCHEDULED_IDS)?;
            tx.open_table(tables::SCHEDULED_DUE)?;
            tx.open_table(tables::SCHEDULED_WAITING)?;
            tx.open_table(tables::PLUGINS)?;
            tx.open_table(tables::PLUGIN_BLOBS)?;
            tx.open_table(tables::PLUGIN_BINDINGS)?;
            tx.open_table(tables::PLUGIN_KV)?;
            whatsapp::create_tables(&tx)?;
        }
        sessions::index_incarnations(&tx)?;
        let moved = outbox::migrate_v1(&tx)?;
        if moved > 0 {
            tracing::info!(
                deliveries = moved,
                "pending deliveries moved to the outbox keyed by session and URL"
            );
        }
        chats::index_existing(&tx)?;
        lid::index_existing(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// The schema version recorded in the file.
    pub fn schema_version(&self) -> StoreResult<u64> {
        self.read(|tx| {
            let meta = tx.open_table(META)?;
            Ok(meta
                .get(SCHEMA_VERSION_KEY)?
                .map(|v| v.value())
                .unwrap_or(0))
        })
    }

    /// Runs `f` in a write transaction and commits it; nothing is written if `f` fails.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&WriteTransaction) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let started = std::time::Instant::now();
        let db = self.db.current()?;
        let out = (|| {
            let tx = db.begin_write()?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })()
        .map_err(|e| self.observed(&db, e))?;
        self.timings
            .write_seconds
            .observe(started.elapsed().as_secs_f64());
        Ok(out)
    }

    /// The write-transaction timings (registered by the metrics module).
    pub fn timings(&self) -> &crate::timings::StoreTimings {
        &self.timings
    }

    /// Registers the store's metrics: its write timings and its faults.
    pub fn register_metrics(&self, r: &mut prometheus_client::registry::Registry) {
        self.timings.register(r);
        r.register(
            "switchboard_store_faults",
            "Store operations refused for a storage fault, by kind (no_space, io)",
            self.db.health.faults.clone(),
        );
    }

    /// Runs `f` in a read transaction.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let db = self.db.current()?;
        let out = db
            .begin_read()
            .map_err(StoreError::from)
            .and_then(|tx| f(&tx));
        out.map_err(|e| self.observed(&db, e))
    }

    /// An error of an operation on `db`, looked at for a storage fault; a
    /// fault that closed the database wakes the writer to reopen it.
    fn observed(&self, db: &Arc<Database>, e: StoreError) -> StoreError {
        let e = self.db.observe(db, e);
        if self.db.is_closed() {
            self.batch.wake();
        }
        e
    }
}

/// Serialises a record for storage.
pub(crate) fn encode<T: Serialize>(value: &T) -> StoreResult<Vec<u8>> {
    Ok(serde_json::to_vec(value)?)
}

/// Deserialises a stored record.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> StoreResult<T> {
    Ok(serde_json::from_slice(bytes)?)
}

/// Takes the next value of a `META` sequence counter inside `tx`.
pub(crate) fn next_seq(tx: &WriteTransaction, key: &str) -> StoreResult<u64> {
    let mut meta = tx.open_table(META)?;
    let next = meta.get(key)?.map(|v| v.value()).unwrap_or(0) + 1;
    meta.insert(key, next)?;
    Ok(next)
}

/// Removes every row of a `(session id, seq)` keyed table that belongs to `session_id`.
pub(crate) fn delete_session_range(
    tx: &WriteTransaction,
    table: redb::TableDefinition<(&str, u64), &[u8]>,
    session_id: &str,
) -> StoreResult<()> {
    let mut t = tx.open_table(table)?;
    t.retain_in((session_id, 0u64)..=(session_id, u64::MAX), |_, _| false)?;
    Ok(())
}

/// Removes every row of a `(session id, text)` keyed table that belongs to `session_id`.
pub(crate) fn delete_session_keys<V: redb::Value + 'static>(
    tx: &WriteTransaction,
    table: redb::TableDefinition<(&str, &str), V>,
    session_id: &str,
) -> StoreResult<()> {
    let mut t = tx.open_table(table)?;
    let keys: Vec<String> = {
        let mut keys = Vec::new();
        for row in t.range((session_id, "")..)? {
            let (k, _) = row?;
            let (sid, key) = k.value();
            if sid != session_id {
                break;
            }
            keys.push(key.to_owned());
        }
        keys
    };
    for key in keys {
        t.remove((session_id, key.as_str()))?;
    }
    Ok(())
}

/// Reads one page of a `(session id, seq)` keyed table, newest first.
pub(crate) fn page_newest_first<T: DeserializeOwned>(
    tx: &ReadTransaction,
    table: redb::TableDefinition<(&str, u64), &[u8]>,
    session_id: &str,
    offset: usize,
    limit: usize,
) -> StoreResult<Vec<T>> {
    let t = tx.open_table(table)?;
    let mut out = Vec::with_capacity(limit.min(1024));
    for row in t
        .range((session_id, 0u64)..=(session_id, u64::MAX))?
        .rev()
        .skip(offset)
        .take(limit)
    {
        let (_, v) = row?;
        out.push(decode(v.value())?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_store_records_the_current_schema_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_store_written_by_a_newer_version_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store
                .write(|tx| {
                    tx.open_table(META)?
                        .insert(SCHEMA_VERSION_KEY, SCHEMA_VERSION + 1)?;
                    Ok(())
                })
                .unwrap();
        }
        let err = Store::open(dir.path()).unwrap_err();
        assert!(
            matches!(err, StoreError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1)
        );
        assert!(err.to_string().contains("newer"));
    }

    #[test]
    fn a_second_open_of_the_same_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Store::open(dir.path()).unwrap();
        assert!(matches!(
            Store::open(dir.path()),
            Err(StoreError::AlreadyOpen(_))
        ));
    }

    #[test]
    fn an_open_waits_for_a_handle_that_is_closing() {
        let dir = tempfile::tempdir().unwrap();
        let first = Store::open(dir.path()).unwrap();
        let (opened, closing) = std::sync::mpsc::channel();
        let closer = std::thread::spawn(move || {
            // Dropped only once the second open has begun waiting.
            closing.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(first);
        });
        opened.send(()).unwrap();
        Store::open(dir.path()).expect("opens once the first handle is gone");
        closer.join().unwrap();
    }
}
