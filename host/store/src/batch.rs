//! Group commit: concurrent writes share one durable redb transaction.
//!
//! A durable commit (an fsync) costs far more than the inserts it makes
//! durable, so one commit per request caps the store at a few thousand
//! writes per second however small they are. [`GroupCommit`] queues write
//! jobs for one writer thread, which takes everything queued at that moment
//! (up to [`MAX_BATCH`]), runs the jobs in order in one write transaction,
//! takes in and runs whatever was queued meanwhile, commits, and only then
//! answers each job. Nothing is answered before its commit, so a caller
//! that answers HTTP 200 after [`Store::write_grouped`] keeps its
//! durability promise, and a batch costs one fsync instead of one per job.
//!
//! Jobs that record events ([`Store::write_event_then`]) share more than
//! the transaction: a run of them queued one after another keeps the
//! tables events write open from the first to the last
//! ([`EventTables`]), and a chat that several of them touch is read and
//! written once. Opening and closing tables was a fifth of the writer's
//! time when every event did it for itself.
//!
//! One failing job must not fail its neighbours: when any job of a batch
//! fails, the batch transaction is dropped (aborted, nothing written) and
//! each job runs again in a transaction of its own, so every job gets
//! exactly the answer it would have got alone. Jobs are therefore `FnMut`
//! and must not keep side effects outside the transaction.
//!
//! A storage fault (a full disk, an I/O error) is different: redb refuses
//! every later write of that database, so nothing is run again; every job
//! of the batch is answered with the fault (never as stored), and the
//! writer, which owns reopening (`handle.rs`), opens the file again with
//! backoff until that works, answering what is queued meanwhile with the
//! fault at once. A job whose write failed gives back what it took from
//! the store's shared state (delivered outbox rows waiting for removal), so
//! the next write takes it.

use std::sync::{Arc, Mutex, Weak, mpsc};
use std::time::{Duration, Instant};

use prometheus_client::metrics::histogram::Histogram;
use redb::{Database, WriteTransaction};

use super::event_log::{EventJob, EventTables};
use super::handle::DbHandle;
use super::outbox::OutboxKey;
use super::{Store, StoreError, StoreOptions, StoreResult};

/// Most jobs one transaction takes: enough to turn a burst of concurrent
/// sends into a handful of fsyncs, small enough that a batch that has to be
/// replayed job by job (one job failed) stays short.
pub const MAX_BATCH: usize = 256;

/// A queued write: runs inside the batch transaction.
type Job = Box<dyn FnMut(&WriteTransaction) -> StoreResult<()> + Send>;

/// What a queued write does.
enum Work {
    /// Any write, with the transaction to itself.
    Any(Job),
    /// One event's record: consecutive ones share their open tables.
    Event(Box<EventJob>),
}

/// A job and where its answer goes.
struct Pending {
    work: Work,
    done: Reply,
}

impl Pending {
    /// The job's write failed for good: what it took from the store's
    /// shared state goes back for the next write.
    fn give_back(&mut self) {
        if let Work::Event(job) = &mut self.work {
            job.give_back();
        }
    }
}

/// What the writer's queue carries: a job, or `None` to wake the writer
/// (a fault seen outside it closed the database, which it must reopen).
type Msg = Option<Pending>;

/// The answer channel: a future for async callers, a blocking one
/// otherwise, or a callback run on the writer thread.
enum Reply {
    Async(tokio::sync::oneshot::Sender<StoreResult<()>>),
    Blocking(mpsc::SyncSender<StoreResult<()>>),
    Then(Box<dyn FnOnce(StoreResult<()>) + Send>),
}

impl Reply {
    fn send(self, result: StoreResult<()>) {
        // A caller that stopped waiting has nothing to be told.
        let _ = match self {
            Reply::Async(tx) => tx.send(result).map_err(|_| ()),
            Reply::Blocking(tx) => tx.send(result).map_err(|_| ()),
            Reply::Then(f) => {
                f(result);
                Ok(())
            }
        };
    }
}

/// The queue of the writer thread; cheap to clone. The thread stops when
/// the last handle is dropped, and holds the database only while it commits
/// a batch, so dropping the last [`Store`] still closes the file.
#[derive(Clone)]
pub(crate) struct GroupCommit {
    queue: mpsc::Sender<Msg>,
}

impl GroupCommit {
    /// Starts the writer thread of `db`; each transaction's time, commit
    /// included, goes into `write_seconds`.
    pub(crate) fn start(
        db: &Arc<DbHandle>,
        write_seconds: Histogram,
        options: &StoreOptions,
    ) -> std::io::Result<GroupCommit> {
        let (queue, jobs) = mpsc::channel();
        let db = Arc::downgrade(db);
        let backoff = Backoff::new(options.reopen_backoff_min, options.reopen_backoff_max);
        std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || writer(&db, &jobs, &write_seconds, backoff))?;
        Ok(GroupCommit { queue })
    }

    fn submit(&self, work: Work, done: Reply) {
        if let Err(mpsc::SendError(Some(p))) = self.queue.send(Some(Pending { work, done })) {
            p.done.send(Err(stopped()));
        }
    }

    /// Wakes the writer to reopen a database a fault closed.
    pub(crate) fn wake(&self) {
        let _ = self.queue.send(None);
    }
}

/// When the writer next tries to open a database a fault closed: first
/// after the shortest wait, then twice as long each time, up to the longest.
struct Backoff {
    min: Duration,
    max: Duration,
    wait: Duration,
    next: Option<Instant>,
}

impl Backoff {
    fn new(min: Duration, max: Duration) -> Backoff {
        let min = min.max(Duration::from_millis(1));
        Backoff {
            min,
            max: max.max(min),
            wait: min,
            next: None,
        }
    }

    /// How long to wait for a job before the next attempt is due.
    fn until_due(&mut self) -> Duration {
        let now = Instant::now();
        let next = *self.next.get_or_insert(now + self.wait);
        next.saturating_duration_since(now)
    }

    fn due(&mut self) -> bool {
        self.until_due().is_zero()
    }

    fn failed(&mut self) {
        self.wait = (self.wait * 2).min(self.max);
        self.next = Some(Instant::now() + self.wait);
    }

    fn reset(&mut self) {
        self.wait = self.min;
        self.next = None;
    }
}

impl Store {
    /// Runs `f` in a write transaction shared with other concurrent writes
    /// and resolves once that transaction is durably committed; nothing of
    /// `f` is written if it fails. `f` may run twice (see the module docs).
    pub(crate) async fn write_grouped<T: Send + 'static>(
        &self,
        f: impl FnMut(&WriteTransaction) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.write_grouped_queued(f).await
    }

    /// [`Store::write_grouped`], but the write is queued before this returns
    /// (not when the future is first polled): a caller can queue several
    /// writes, go on, and await them later, in the order it queued them.
    pub(crate) fn write_grouped_queued<T, F>(
        &self,
        f: F,
    ) -> impl Future<Output = StoreResult<T>> + Send + 'static + use<T, F>
    where
        T: Send + 'static,
        F: FnMut(&WriteTransaction) -> StoreResult<T> + Send + 'static,
    {
        let (job, slot) = job(f);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.batch.submit(Work::Any(job), Reply::Async(tx));
        async move {
            rx.await.map_err(|_| stopped())??;
            take(&slot)
        }
    }

    /// Queues the record of one event, answered by calling `then` on the
    /// writer thread once the commit is done (or failed), with the outbox
    /// keys the write moved to the dead-letter queue. Writes are answered
    /// in the order they were queued, so callbacks see commits in that
    /// order; `then` must be quick and must not write to the store (the
    /// writer would wait for itself).
    pub(crate) fn write_event_then(
        &self,
        job: EventJob,
        then: impl FnOnce(StoreResult<Vec<OutboxKey>>) + Send + 'static,
    ) {
        let out = job.out();
        let done = Reply::Then(Box::new(move |result: StoreResult<()>| {
            then(result.and_then(|()| take(&out)));
        }));
        self.batch.submit(Work::Event(Box::new(job)), done);
    }

    /// [`Store::write_grouped`] for callers that are not async: blocks the
    /// thread until the commit.
    pub(crate) fn write_grouped_blocking<T: Send + 'static>(
        &self,
        f: impl FnMut(&WriteTransaction) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let (job, slot) = job(f);
        let (tx, rx) = mpsc::sync_channel(1);
        self.batch.submit(Work::Any(job), Reply::Blocking(tx));
        rx.recv().map_err(|_| stopped())??;
        take(&slot)
    }
}

/// Where a job leaves its value for its answer.
pub(crate) type Slot<T> = Arc<Mutex<Option<T>>>;

/// Boxes `f` as a job that leaves its value in a slot.
fn job<T: Send + 'static>(
    mut f: impl FnMut(&WriteTransaction) -> StoreResult<T> + Send + 'static,
) -> (Job, Slot<T>) {
    let slot: Slot<T> = Arc::new(Mutex::new(None));
    let out = slot.clone();
    let job: Job = Box::new(move |tx| {
        let v = f(tx)?;
        *out.lock().unwrap_or_else(|p| p.into_inner()) = Some(v);
        Ok(())
    });
    (job, slot)
}

fn take<T>(slot: &Slot<T>) -> StoreResult<T> {
    slot.lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .ok_or_else(stopped)
}

/// The error of a write the writer could not take.
fn stopped() -> StoreError {
    StoreError::Stopped("the store's writer has stopped")
}

/// The writer thread: one batch after another until every handle is gone;
/// while a fault has the database closed, an attempt to open it again
/// whenever the backoff says so.
fn writer(
    db: &Weak<DbHandle>,
    jobs: &mpsc::Receiver<Msg>,
    write_seconds: &Histogram,
    mut backoff: Backoff,
) {
    loop {
        let closed = db.upgrade().is_some_and(|h| h.is_closed());
        let msg = if closed {
            match jobs.recv_timeout(backoff.until_due()) {
                Ok(msg) => msg,
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match jobs.recv() {
                Ok(msg) => msg,
                Err(_) => return,
            }
        };
        let handle = db.upgrade();
        if let Some(h) = &handle
            && h.is_closed()
            && backoff.due()
        {
            match h.reopen() {
                Ok(()) => backoff.reset(),
                Err(e) => {
                    backoff.failed();
                    tracing::warn!(error = %e, retry_in = ?backoff.wait, "the store could not be reopened yet");
                }
            }
        }
        let Some(first) = msg else {
            continue;
        };
        let mut batch = vec![first];
        take_queued(jobs, &mut batch);
        let answers = match handle.as_ref().map(|h| (h, h.current())) {
            Some((h, Ok(current))) => commit(h, &current, batch, jobs, write_seconds),
            Some((_, Err(e))) => fail_all(batch, &e),
            None => batch
                .into_iter()
                .map(|p| (p.done, Err(stopped())))
                .collect(),
        };
        drop(handle);
        // Answered only once the database handle is released, so a caller
        // that drops the last `Store` on its answer really closes the file.
        for (done, result) in answers {
            done.send(result);
        }
    }
}

/// Moves what is queued now into `batch`, up to [`MAX_BATCH`] in all;
/// returns how many it took.
fn take_queued(jobs: &mpsc::Receiver<Msg>, batch: &mut Vec<Pending>) -> usize {
    let before = batch.len();
    while batch.len() < MAX_BATCH {
        match jobs.try_recv() {
            Ok(Some(p)) => batch.push(p),
            // A wake: the writer looks at the database before its next batch.
            Ok(None) => {}
            Err(_) => break,
        }
    }
    batch.len() - before
}

/// Answers every job of `batch` with the storage fault `e`, nothing of it
/// written.
fn fail_all(batch: Vec<Pending>, e: &StoreError) -> Vec<(Reply, StoreResult<()>)> {
    let (fault, why) = match e {
        StoreError::Fault(fault, why) => (*fault, *why),
        _ => (
            crate::domain::storage_fault::StorageFault::Unavailable,
            "the store met an I/O fault; nothing was stored",
        ),
    };
    batch
        .into_iter()
        .map(|mut p| {
            p.give_back();
            (p.done, Err(StoreError::Fault(fault, why)))
        })
        .collect()
}

/// Commits a batch in one transaction; on any failure, each job alone.
/// Jobs queued while the batch runs join it before the commit: they would
/// otherwise wait for this commit and then pay one of their own, and under
/// load the commit, not the jobs, is most of the writer's time. Returns
/// each job's answer.
fn commit(
    handle: &DbHandle,
    db: &Arc<Database>,
    mut batch: Vec<Pending>,
    jobs: &mpsc::Receiver<Msg>,
    write_seconds: &Histogram,
) -> Vec<(Reply, StoreResult<()>)> {
    let timed = |started: std::time::Instant| {
        write_seconds.observe(started.elapsed().as_secs_f64());
    };
    let started = std::time::Instant::now();
    let together = (|| {
        let tx = db.begin_write()?;
        let mut ran = 0;
        loop {
            run(&tx, &mut batch[ran..])?;
            ran = batch.len();
            if take_queued(jobs, &mut batch) == 0 {
                break;
            }
        }
        tx.commit()?;
        Ok::<_, StoreError>(())
    })();
    timed(started);
    match together.map_err(|e| handle.observe(db, e)) {
        Ok(()) => return batch.into_iter().map(|p| (p.done, Ok(()))).collect(),
        // The database refuses every later write: nothing runs again.
        Err(e) if e.fault().is_some() => return fail_all(batch, &e),
        // A job that ran alone has had its answer.
        Err(e) if batch.len() == 1 => {
            return batch
                .pop()
                .map(|mut p| {
                    p.give_back();
                    vec![(p.done, Err(e))]
                })
                .unwrap_or_default();
        }
        Err(_) => {}
    }
    batch
        .into_iter()
        .map(|mut p| {
            let started = std::time::Instant::now();
            let alone = handle.current().and_then(|db| {
                (|| {
                    let tx = db.begin_write()?;
                    run(&tx, std::slice::from_mut(&mut p))?;
                    tx.commit()?;
                    Ok(())
                })()
                .map_err(|e| handle.observe(&db, e))
            });
            timed(started);
            if alone.is_err() {
                p.give_back();
            }
            (p.done, alone)
        })
        .collect()
}

/// Runs `jobs` in order in `tx`; a run of event jobs shares one
/// [`EventTables`], closed before any other job runs (so that job finds
/// every table closed and every chat written) and at the end.
fn run(tx: &WriteTransaction, jobs: &mut [Pending]) -> StoreResult<()> {
    let mut events: Option<EventTables<'_>> = None;
    for p in jobs {
        match &mut p.work {
            Work::Any(job) => {
                if let Some(mut tables) = events.take() {
                    tables.close()?;
                }
                job(tx)?;
            }
            Work::Event(job) => job.apply(events.get_or_insert_with(|| EventTables::new(tx)))?,
        }
    }
    if let Some(mut tables) = events {
        tables.close()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use redb::{ReadableDatabase, TableDefinition};

    use super::*;

    const T: TableDefinition<u64, u64> = TableDefinition::new("batch_test");

    fn put(store: &Store, k: u64, fail: bool) -> impl Future<Output = StoreResult<u64>> + use<> {
        let store = store.clone();
        async move {
            store
                .write_grouped(move |tx| {
                    tx.open_table(T)?.insert(k, k * 10)?;
                    if fail {
                        return Err(StoreError::Corrupt(serde_json::Error::io(
                            std::io::Error::other("refused"),
                        )));
                    }
                    Ok(k)
                })
                .await
        }
    }

    fn stored(store: &Store, k: u64) -> Option<u64> {
        let tx = store.db.current().unwrap().begin_read().unwrap();
        let t = tx.open_table(T).ok()?;
        t.get(k).unwrap().map(|v| v.value())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_are_each_answered_after_their_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let all: Vec<_> = (0..200)
            .map(|k| tokio::spawn(put(&store, k, false)))
            .collect();
        for (k, h) in all.into_iter().enumerate() {
            assert_eq!(h.await.unwrap().unwrap(), k as u64);
            assert_eq!(stored(&store, k as u64), Some(k as u64 * 10));
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_write_fails_alone_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let all: Vec<_> = (0..100)
            .map(|k| tokio::spawn(put(&store, k, k % 7 == 3)))
            .collect();
        for (k, h) in all.into_iter().enumerate() {
            let k = k as u64;
            let r = h.await.unwrap();
            if k % 7 == 3 {
                assert!(r.is_err());
                assert_eq!(stored(&store, k), None, "a failed job leaves nothing");
            } else {
                assert_eq!(r.unwrap(), k);
                assert_eq!(stored(&store, k), Some(k * 10));
            }
        }
    }

    /// Write transactions committed so far, as the metrics endpoint reports.
    fn commits(store: &Store) -> u64 {
        let mut registry = prometheus_client::registry::Registry::default();
        store.timings().register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("switchboard_store_write_seconds_count "))
            .and_then(|n| n.trim().parse().ok())
            .expect("the commit count is reported")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_queued_while_a_batch_runs_joins_that_batch_s_commit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let before = commits(&store);
        // The first write queues the second while the writer runs it, as a
        // request arriving mid-batch would.
        let later = Arc::new(Mutex::new(None));
        let (queuer, slot) = (store.clone(), later.clone());
        store
            .write_grouped(move |tx| {
                tx.open_table(T)?.insert(1, 10)?;
                let mut slot = slot.lock().unwrap();
                if slot.is_none() {
                    *slot = Some(queuer.write_grouped_queued(|tx| {
                        tx.open_table(T)?.insert(2, 20)?;
                        Ok(())
                    }));
                }
                Ok(())
            })
            .await
            .unwrap();
        let second = later.lock().unwrap().take().expect("queued");
        second.await.unwrap();
        assert_eq!((stored(&store, 1), stored(&store, 2)), (Some(10), Some(20)));
        assert_eq!(commits(&store) - before, 1, "both writes shared one commit");
    }

    #[test]
    fn blocking_callers_are_answered_too_and_the_file_closes_with_the_store() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let v = store
                .write_grouped_blocking(|tx| {
                    tx.open_table(T)?.insert(1, 2)?;
                    Ok(7)
                })
                .unwrap();
            assert_eq!(v, 7);
        }
        let store = Store::open(dir.path()).expect("reopens once the last handle is gone");
        assert_eq!(stored(&store, 1), Some(2));
    }
}
