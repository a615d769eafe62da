//! The handle to the redb database, swapped for a fresh one after a storage
//! fault.
//!
//! After an I/O error redb refuses every later operation of that
//! `Database` ("Previous I/O error occurred"): the file must be closed and
//! opened again, which also repairs it. So the store never holds the
//! `Database` itself but this handle: every transaction begins on the
//! database current at that moment, an operation that meets a storage fault
//! takes that database out (it is closed once the last transaction on it
//! ends), and the group-commit writer, which owns reopening, opens the file
//! again with backoff until that works. Meanwhile every operation is
//! answered with the fault at once instead of waiting.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use redb::{Database, DatabaseError};

use super::health::StoreHealth;
use super::{StoreError, StoreResult};
use crate::domain::storage_fault::StorageFault;

/// How the database file is opened (again): the real file, or in tests a
/// backend that can be made to fail.
pub(crate) type Opener = Box<dyn Fn() -> Result<Database, DatabaseError> + Send + Sync>;

/// The current database, or none while a fault has it closed.
pub(crate) struct DbHandle {
    current: ArcSwapOption<Database>,
    open: Opener,
    pub(crate) health: StoreHealth,
}

impl DbHandle {
    pub(crate) fn new(db: Database, open: Opener, health: StoreHealth) -> DbHandle {
        DbHandle {
            current: ArcSwapOption::from_pointee(db),
            open,
            health,
        }
    }

    /// The database to begin a transaction on, or the fault that has it
    /// closed.
    pub(crate) fn current(&self) -> StoreResult<Arc<Database>> {
        self.current.load_full().ok_or_else(|| {
            let fault = self.health.recent().unwrap_or(StorageFault::Unavailable);
            self.health.fault(fault, &"the store is being reopened");
            StoreError::Fault(fault, "the store is being reopened after a storage fault")
        })
    }

    /// Whether a fault has the database closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.current.load().is_none()
    }

    /// Looks at an error of an operation on `db`: a storage fault takes
    /// `db` out (if it is still the current one: a transaction begun before
    /// a reopen must not close the fresh database) and comes back as
    /// [`StoreError::Fault`]; any other error comes back as it was.
    pub(crate) fn observe(&self, db: &Arc<Database>, e: StoreError) -> StoreError {
        let Some(fault) = classify(&e, self.health.recent()) else {
            return e;
        };
        let current = self.current.load();
        match current.as_ref() {
            Some(c) if Arc::ptr_eq(c, db) => {
                // Failing first: whoever finds the database gone must find
                // the fault that took it out, not a healthy status.
                self.health.fault(fault, &e);
                self.current
                    .compare_and_swap(&current, None::<Arc<Database>>);
            }
            // Already closed: one more operation the fault refused.
            None => self.health.fault(fault, &e),
            // Met on a database a fault closed before a reopen: the fresh
            // one is not at fault.
            Some(_) => self.health.count(fault),
        }
        drop(current);
        StoreError::Fault(fault, fault_message(fault))
    }

    /// Opens the file again; on success the store takes writes again.
    pub(crate) fn reopen(&self) -> StoreResult<()> {
        match (self.open)() {
            Ok(db) => {
                self.current.store(Some(Arc::new(db)));
                self.health.recovered();
                Ok(())
            }
            Err(e) => {
                let e = StoreError::Redb(e.into());
                match classify(&e, self.health.recent()) {
                    Some(fault) => {
                        self.health.fault(fault, &e);
                        Err(StoreError::Fault(fault, fault_message(fault)))
                    }
                    None => Err(e),
                }
            }
        }
    }
}

/// What a storage fault tells the caller.
fn fault_message(fault: StorageFault) -> &'static str {
    match fault {
        StorageFault::NoSpace => "the data directory's filesystem is full; nothing was stored",
        StorageFault::Unavailable => "the store met an I/O fault; nothing was stored",
    }
}

/// The storage fault an error is, if it is one. redb's "previous I/O
/// error" repeats the fault the store is failing with.
pub(crate) fn classify(e: &StoreError, failing: Option<StorageFault>) -> Option<StorageFault> {
    match e {
        StoreError::Fault(f, _) => Some(*f),
        StoreError::Redb(redb::Error::Io(io)) => StorageFault::of_io(io),
        StoreError::Redb(redb::Error::PreviousIo | redb::Error::DatabaseClosed) => {
            Some(failing.unwrap_or(StorageFault::Unavailable))
        }
        // The file is still held by transactions on the database a fault
        // closed: reopening waits for them.
        StoreError::Redb(redb::Error::DatabaseAlreadyOpen) => {
            Some(failing.unwrap_or(StorageFault::Unavailable))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "handle_tests.rs"]
mod tests;
