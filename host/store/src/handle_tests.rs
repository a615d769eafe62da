//! The reopen path on a backend that can be made to fail as a full disk
//! does, and what a failed write leaves behind.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redb::backends::InMemoryBackend;
use redb::{Database, ReadableDatabase, StorageBackend, TableDefinition};

use crate::domain::storage_fault::StorageFault;
use crate::domain::webhook::PendingDelivery;
use crate::{EventWrite, NewDelivery, OutboxKey, Store, StoreError, StoreOptions, StoreStatus};

const T: TableDefinition<u64, u64> = TableDefinition::new("handle_test");

/// Bytes kept in memory across reopens; while `full`, every write, resize
/// and sync fails with `ENOSPC`, as on a full filesystem.
#[derive(Debug)]
struct Disk {
    bytes: Arc<InMemoryBackend>,
    full: Arc<AtomicBool>,
}

impl Disk {
    fn refuse(&self) -> io::Result<()> {
        if self.full.load(Ordering::SeqCst) {
            Err(io::Error::from_raw_os_error(28))
        } else {
            Ok(())
        }
    }
}

impl StorageBackend for Disk {
    fn len(&self) -> Result<u64, io::Error> {
        self.bytes.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        self.bytes.read(offset, out)
    }
    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        self.refuse()?;
        self.bytes.set_len(len)
    }
    fn sync_data(&self) -> Result<(), io::Error> {
        self.refuse()?;
        self.bytes.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        self.refuse()?;
        self.bytes.write(offset, data)
    }
}

/// A store on a [`Disk`] and the switch that fills it.
fn store_on_disk(dir: &std::path::Path) -> (Store, Arc<AtomicBool>) {
    let bytes = Arc::new(InMemoryBackend::new());
    let full = Arc::new(AtomicBool::new(false));
    let open = {
        let (bytes, full) = (bytes.clone(), full.clone());
        move || {
            Database::builder().create_with_backend(Disk {
                bytes: bytes.clone(),
                full: full.clone(),
            })
        }
    };
    let db = open().unwrap();
    let options = StoreOptions {
        reopen_backoff_min: Duration::from_millis(1),
        reopen_backoff_max: Duration::from_millis(5),
        min_free_bytes: 0,
    };
    let store =
        Store::with_database(db, Box::new(open), dir, &dir.join(crate::DB_FILE), options).unwrap();
    (store, full)
}

async fn put(store: &Store, k: u64) -> Result<(), StoreError> {
    store
        .write_grouped(move |tx| {
            tx.open_table(T)?.insert(k, k)?;
            Ok(())
        })
        .await
}

fn get(store: &Store, k: u64) -> Option<u64> {
    store
        .read(|tx| match tx.open_table(T) {
            Ok(t) => Ok(t.get(k)?.map(|v| v.value())),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(e.into()),
        })
        .unwrap()
}

async fn until_ok(store: &Store) {
    let mut health = store.watch_health();
    health
        .wait_for(|s| *s == StoreStatus::Ok)
        .await
        .expect("the store is still there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_met_a_full_disk_reopens_itself_and_takes_writes_once_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (store, full) = store_on_disk(dir.path());
    put(&store, 1).await.unwrap();

    full.store(true, Ordering::SeqCst);
    let e = put(&store, 2).await.unwrap_err();
    assert_eq!(e.fault(), Some(StorageFault::NoSpace), "{e}");
    assert_eq!(store.status(), StoreStatus::Failing(StorageFault::NoSpace));
    let e = put(&store, 3).await.unwrap_err();
    assert_eq!(
        e.fault(),
        Some(StorageFault::NoSpace),
        "refused while full: {e}"
    );
    assert_eq!(
        store.check_free_space().unwrap_err().fault(),
        Some(StorageFault::NoSpace),
        "no new bulk work while failing"
    );

    full.store(false, Ordering::SeqCst);
    until_ok(&store).await;
    put(&store, 4).await.unwrap();
    assert_eq!(get(&store, 1), Some(1), "what was stored before is kept");
    assert_eq!(get(&store, 4), Some(4));
    assert_eq!(
        (get(&store, 2), get(&store, 3)),
        (None, None),
        "nothing failed is stored"
    );

    let mut registry = prometheus_client::registry::Registry::default();
    store.register_metrics(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    let counted = text
        .lines()
        .find_map(|l| l.strip_prefix("switchboard_store_faults_total{kind=\"no_space\"} "))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .expect("faults are counted by kind");
    assert!(counted >= 2, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_write_that_meets_the_fault_also_closes_the_store_for_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (store, full) = store_on_disk(dir.path());
    full.store(true, Ordering::SeqCst);
    let e = store
        .write(|tx| {
            tx.open_table(T)?.insert(7, 7)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.fault(), Some(StorageFault::NoSpace), "{e}");
    full.store(false, Ordering::SeqCst);
    // No grouped write comes: the writer reopens on its own.
    until_ok(&store).await;
    put(&store, 8).await.unwrap();
    assert_eq!(get(&store, 8), Some(8));
}

fn delivery(id: &str) -> NewDelivery {
    NewDelivery {
        delivery: PendingDelivery {
            delivery_id: id.into(),
            session_id: "s".into(),
            webhook_id: Some("w".into()),
            url: "http://a".into(),
            secret: None,
            signature_scheme: Default::default(),
            event: "message".into(),
            attempts: 0,
            next_attempt_at: 0,
            last_error: None,
            created_at: 1,
            probe: false,
            replayed: false,
        },
        payload: bytes::Bytes::from(format!("{{\"id\":\"{id}\"}}")),
    }
}

async fn record(store: &Store, seq: u64, id: &str) -> Result<Vec<OutboxKey>, StoreError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    store.record_event(
        EventWrite {
            seq,
            deliveries: vec![delivery(id)],
            backlog_limit: 100,
            dlq_capacity: 100,
            ..Default::default()
        },
        move |_, r| {
            let _ = tx.send(r);
        },
    );
    rx.await.unwrap()
}

fn pending(store: &Store) -> Vec<String> {
    store
        .outbox_all()
        .unwrap()
        .into_iter()
        .map(|e| e.key.delivery_id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_event_write_whose_commit_fails_leaves_its_outbox_removals_for_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let (store, full) = store_on_disk(dir.path());
    record(&store, 1, "a").await.unwrap();
    let delivered = store.outbox_all().unwrap()[0].key.clone();
    store.remove_outbox_later(vec![delivered]);

    full.store(true, Ordering::SeqCst);
    let e = record(&store, 2, "b").await.unwrap_err();
    assert_eq!(e.fault(), Some(StorageFault::NoSpace), "{e}");
    full.store(false, Ordering::SeqCst);
    until_ok(&store).await;

    record(&store, 3, "c").await.unwrap();
    assert_eq!(
        pending(&store),
        ["c"],
        "the delivered row went with the next write; the failed one left nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_met_on_a_database_a_fault_closed_does_not_close_the_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let (store, full) = store_on_disk(dir.path());
    let old = store.db.current().unwrap();
    full.store(true, Ordering::SeqCst);
    assert!(
        store
            .write(|tx| Ok(tx.open_table(T)?.insert(1, 1).map(|_| ())?))
            .is_err()
    );
    full.store(false, Ordering::SeqCst);
    until_ok(&store).await;
    // An error met on the database the fault closed is not the fresh one's.
    let e = store
        .db
        .observe(&old, StoreError::Redb(redb::Error::PreviousIo));
    assert!(e.fault().is_some());
    assert!(!store.db.is_closed(), "the fresh database stays open");
    assert_eq!(store.status(), StoreStatus::Ok);
    drop(old);
    assert!(store.db.current().unwrap().begin_read().is_ok());
}
