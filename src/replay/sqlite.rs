//! [`SqliteLedger`]: the embedded ledger (feature `sqlite`), one SQLite file with WAL, each
//! transition one statement, on SQLite's clock. A statement waits for the connection as a task
//! (behind the lock the application may share), and runs on a thread of the ledger's own only
//! when SQLite must wait for another process's lock on the file, never blocking an executor.

use std::borrow::BorrowMut;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::fence::Fence;
use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::lease::Lease;
use super::ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Ledger, store_settings,
};
use super::scope::Scope;
use super::stored::StoredAnswer;
use begins::Begins;
pub use error::SqliteError;
use error::is_busy;
use schema::{
    CANDIDATES, CLAIM, COMPLETE, MIGRATIONS, NEXT_FENCE, PURGE, RELEASE, RENEW, RESOLVE,
    RESOLVE_RELEASE, SCHEMA, instant,
};
use worker::Worker;

/// A ledger in a SQLite file: keys survive the process, and several processes on one machine
/// may share the file.
///
/// ```
/// use agent_tool_result::replay::{Begin, Fingerprint, IdempotencyKey, Ledger, Scope, SqliteLedger};
///
/// # tokio_test_block_on(async {
/// let ledger = SqliteLedger::open_in_memory()?;
/// let (scope, key) = (Scope::principal("acct_1"), IdempotencyKey::new("k-1")?);
/// let print = Fingerprint::of("send_sms", "acct_1", &serde_json::json!({ "to": "+1555" }));
/// assert!(matches!(ledger.begin(&scope, &key, print, "msg_1").await?, Begin::Fresh(_)));
/// assert!(matches!(ledger.begin(&scope, &key, print, "msg_1").await?, Begin::InFlight { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SqliteLedger {
    /// The connection (the ledger's own, or one it shares with the application): used by the
    /// caller's task once its lock is free, and on the worker's thread when SQLite must wait
    /// for another process's lock on the file.
    connection: Arc<dyn Shared>,
    worker: Worker<Arc<dyn Shared>>,
    /// The begins waiting for the connection, made together by whoever takes it next.
    begins: Arc<Begins>,
    retention: Duration,
    lease: Duration,
}

impl std::fmt::Debug for SqliteLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteLedger")
            .field("retention", &self.retention)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// A leading begin's turn on the connection for the begins queued behind it: dropped before
/// it was taken (its caller stopped waiting), the ledger's thread takes it.
struct Turn<'a> {
    ledger: &'a SqliteLedger,
    taken: bool,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if !self.taken {
            self.ledger.begin_on_thread();
        }
    }
}

/// A job on the connection, for [`Shared`].
type Job<'a> = &'a mut (dyn FnMut(&mut Connection) + Send);

/// A connection behind a lock the application may hold too: the ledger waits for it as a
/// task does, or on its own thread when SQLite may have to wait for another process.
trait Shared: Send + Sync {
    /// Runs `job` on the connection once the lock is free, waiting for it as a task.
    fn run_when_free<'a>(
        &'a self,
        job: Job<'a>,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
    /// Runs `job` on the connection once it is free, blocking the thread (never an
    /// executor's) meanwhile.
    fn run_blocking(&self, job: &mut dyn FnMut(&mut Connection));
}

impl<C: BorrowMut<Connection> + Send> Shared for tokio::sync::Mutex<C> {
    fn run_when_free<'a>(
        &'a self,
        job: Job<'a>,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let mut held = self.lock().await;
            job((*held).borrow_mut());
        })
    }

    fn run_blocking(&self, job: &mut dyn FnMut(&mut Connection)) {
        job((*self.blocking_lock()).borrow_mut());
    }
}

/// How long a statement on the worker's thread waits for another connection's lock: about
/// five seconds, in [`SqliteLedger::busy_handler`]'s steps.
const BUSY_TRIES: i32 = 5_000;

mod begins;
mod error;
#[macro_use]
mod schema;
pub(super) mod transaction;
mod worker;

impl SqliteLedger {
    /// The busy handler the ledger's connection waits with (what `rusqlite`'s
    /// `Connection::busy_handler` takes): whether to try the lock again after the `tries`-th
    /// wait, having waited 50 µs, then twice as long each time up to a millisecond, for about
    /// five seconds in all. SQLite's own handler waits a millisecond first, then longer, where a
    /// write transaction of another connection (another process's, or the application's own
    /// on the same file when it does not [share](Self::sharing) the ledger's) takes a fraction
    /// of that. Give the application's connection the same.
    ///
    /// ```
    /// let connection = rusqlite::Connection::open_in_memory()?;
    /// connection.busy_handler(Some(agent_tool_result::replay::SqliteLedger::busy_handler))?;
    /// # Ok::<(), rusqlite::Error>(())
    /// ```
    #[must_use]
    pub fn busy_handler(tries: i32) -> bool {
        if tries >= BUSY_TRIES {
            return false;
        }
        let step = u32::try_from(tries.clamp(0, 5)).unwrap_or(5);
        std::thread::sleep(Duration::from_micros(50 << step).min(Duration::from_millis(1)));
        true
    }

    /// Opens (and creates, if need be) the ledger in the file at `path`.
    ///
    /// # Errors
    ///
    /// [`SqliteError`] when the file cannot be opened or set up.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SqliteError> {
        SqliteLedger::with(Connection::open(path)?)
    }

    /// A ledger in memory (for tests).
    ///
    /// # Errors
    ///
    /// [`SqliteError`] when SQLite cannot set it up.
    pub fn open_in_memory() -> Result<Self, SqliteError> {
        SqliteLedger::with(Connection::open_in_memory()?)
    }

    /// The ledger on the application's own connection to its file, behind the lock the
    /// application takes it with: the ledger's statements and the application's (a
    /// [`SqliteTransaction`](transaction::SqliteTransaction) among them) take turns on one
    /// connection, so they wait for each other on the lock, not on the file's (a second
    /// connection in the same process sleeps in SQLite's busy handler until the file is free,
    /// and finds its page cache stale after every write of the other's). The ledger takes the
    /// lock for one statement or one short transaction at a time, waiting for it as a task;
    /// a transaction the application left open on the connection (and let go of the
    /// lock) is rolled back first. The ledger sets its [busy handler](Self::busy_handler) on
    /// the connection, for other processes' locks on the file. Let go of the lock before
    /// anything that waits for the ledger (a keyed call's run, say): the ledger would wait
    /// for it in turn.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agent_tool_result::replay::SqliteLedger;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let connection = Arc::new(tokio::sync::Mutex::new(rusqlite::Connection::open_in_memory()?));
    /// let ledger = SqliteLedger::sharing(Arc::clone(&connection)).await?;
    /// // The application's own statements, on the same connection.
    /// connection.lock().await.execute_batch("CREATE TABLE sent (id TEXT PRIMARY KEY)")?;
    /// # drop(ledger);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`SqliteError`] when SQLite cannot set the ledger's table up.
    pub async fn sharing<C>(connection: Arc<tokio::sync::Mutex<C>>) -> Result<Self, SqliteError>
    where
        C: BorrowMut<Connection> + Send + 'static,
    {
        {
            let mut held = connection.lock().await;
            let held: &mut Connection = (*held).borrow_mut();
            ready(held)?;
            set_up(held)?;
        }
        SqliteLedger::over(connection)
    }

    fn with(connection: Connection) -> Result<Self, SqliteError> {
        set_up(&connection)?;
        SqliteLedger::over(Arc::new(tokio::sync::Mutex::new(connection)))
    }

    fn over(connection: Arc<dyn Shared>) -> Result<Self, SqliteError> {
        let worker = Worker::spawn("atr-sqlite-ledger", Arc::clone(&connection))
            .map_err(|err| SqliteError::Stopped(Some(err)))?;
        Ok(SqliteLedger {
            connection,
            worker,
            begins: Arc::default(),
            retention: DEFAULT_RETENTION,
            lease: DEFAULT_LEASE,
        })
    }

    store_settings!();

    /// Runs `job` on the connection. When the connection is free, on the caller's thread with
    /// SQLite told not to wait: a statement takes microseconds, and a thread hop would cost
    /// more than the statement. When it is busy (another task holds it, or another process
    /// holds the file's write lock), on the worker's thread, which may wait (in
    /// [`SqliteLedger::busy_handler`]'s steps) without holding up the caller's executor.
    async fn run<T: Send + 'static>(
        &self,
        job: impl Fn(&mut Connection) -> Result<T, rusqlite::Error> + Send + Sync + 'static,
    ) -> Result<T, SqliteError> {
        self.run_with(move |connection, _| job(connection)).await
    }

    /// [`SqliteLedger::run`], telling `job` whether SQLite may wait for another process's
    /// lock where it runs (on the worker's thread) or not (on the caller's, where a file
    /// another process holds sends the job to the worker).
    async fn run_with<T: Send + 'static>(
        &self,
        job: impl Fn(&mut Connection, bool) -> Result<T, rusqlite::Error> + Send + Sync + 'static,
    ) -> Result<T, SqliteError> {
        let mut done = None;
        self.connection
            .run_when_free(&mut |connection| {
                done = Some((|| {
                    ready(connection)?;
                    connection.busy_handler(None)?;
                    let done = job(connection, false);
                    connection.busy_handler(Some(SqliteLedger::busy_handler))?;
                    done
                })());
            })
            .await;
        match done.expect("a job run once the connection is free") {
            Err(err) if is_busy(&err) => {}
            done => return done.map_err(SqliteError::Sqlite),
        }
        self.on_thread(move |connection| job(connection, true))
            .await
    }

    /// Runs `job` on the ledger's thread.
    async fn on_thread<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    ) -> Result<T, SqliteError> {
        let on_thread = move |shared: &mut Arc<dyn Shared>| {
            let (mut job, mut done) = (Some(job), None);
            shared.run_blocking(&mut |connection| {
                if let Some(job) = job.take() {
                    done = Some(ready(connection).and_then(|()| job(connection)));
                }
            });
            done.expect("a job run once")
        };
        match self.worker.run(on_thread).await {
            Some(result) => result.map_err(SqliteError::Sqlite),
            None => Err(SqliteError::Stopped(None)),
        }
    }

    /// Makes the begins queued on the ledger's thread, not awaited: it answers each.
    fn begin_on_thread(&self) {
        let (begins, lease_ms) = (Arc::clone(&self.begins), self.lease_ms());
        drop(self.worker.run(move |shared: &mut Arc<dyn Shared>| {
            shared.run_blocking(&mut |connection| {
                // Where SQLite may wait, every begin is answered, an error included (one left
                // open here fails each begin's transaction, and says so).
                let _ = ready(connection);
                let _ = begins.begin_waiting(connection, lease_ms, true);
            });
        }));
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
}

/// The ledger's table made (or brought up to date) on `connection`, with the ledger's busy
/// handler set.
fn set_up(connection: &Connection) -> Result<(), rusqlite::Error> {
    connection.execute_batch(SCHEMA)?;
    for (column, migrate) in MIGRATIONS {
        let has: bool = connection.query_row(
            "SELECT COUNT(*) FROM pragma_table_info('atr_idempotency') WHERE name = ?1",
            [column],
            |row| row.get::<_, i64>(0).map(|n| n > 0),
        )?;
        if !has {
            connection.execute_batch(migrate)?;
        }
    }
    connection.busy_handler(Some(SqliteLedger::busy_handler))
}

/// `connection` with no transaction open: one the application left open (and then let go of
/// the connection) is rolled back.
fn ready(connection: &Connection) -> Result<(), rusqlite::Error> {
    if connection.is_autocommit() {
        Ok(())
    } else {
        connection.execute_batch("ROLLBACK")
    }
}

impl Ledger for SqliteLedger {
    type Error = SqliteError;

    async fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Result<Begin, SqliteError> {
        let (queued, answer) = self.begins.queue(scope, key, fingerprint.to_hex(), context);
        if queued.leads() {
            // The begins queued behind this one wait for its turn on the connection: dropped
            // before it has the connection, it leaves the turn to the ledger's thread.
            let mut turn = Turn {
                ledger: self,
                taken: false,
            };
            let (begins, lease_ms) = (Arc::clone(&self.begins), self.lease_ms());
            let made = self
                .run_with(move |connection, may_wait| {
                    begins.begin_waiting(connection, lease_ms, may_wait)
                })
                .await;
            turn.taken = true;
            if let Err(err) = made {
                // Its turn failed: the begins behind it are made on the ledger's thread.
                self.begin_on_thread();
                if queued.withdraw() {
                    return Err(err);
                }
            }
        }
        // Begun in a batch, this begin's or the one it waited on, which answers it.
        answer.await.unwrap_or(Err(SqliteError::Stopped(None)))
    }

    async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, SqliteError> {
        let held = lease.clone();
        let lease_ms = self.lease_ms();
        let asked = Instant::now();
        let until: Option<i64> = self
            .run(move |connection| {
                connection
                    .prepare_cached(RENEW)?
                    .query_row(
                        params![
                            held.scope().as_str(),
                            held.key().as_str(),
                            held.fence().as_i64(),
                            lease_ms
                        ],
                        |row| row.get(0),
                    )
                    .optional()
            })
            .await?;
        Ok(until.map(|until| lease.renewed(instant(until), asked, self.lease)))
    }

    async fn complete(
        &self,
        lease: &Lease,
        answer: &StoredAnswer,
    ) -> Result<Completion, SqliteError> {
        let held = lease.clone();
        let answer = answer.clone();
        let changed = self
            .run(move |connection| {
                connection.prepare_cached(COMPLETE)?.execute(params![
                    held.scope().as_str(),
                    held.key().as_str(),
                    held.fence().as_i64(),
                    answer.is_refusal(),
                    answer.json(),
                    answer.is_provisional()
                ])
            })
            .await?;
        Ok(Completion::of_rows_changed(
            u64::try_from(changed).unwrap_or(0),
        ))
    }

    async fn release(&self, lease: &Lease) -> Result<Completion, SqliteError> {
        let held = lease.clone();
        let changed = self
            .run(move |connection| {
                connection.prepare_cached(RELEASE)?.execute(params![
                    held.scope().as_str(),
                    held.key().as_str(),
                    held.fence().as_i64()
                ])
            })
            .await?;
        Ok(Completion::of_rows_changed(
            u64::try_from(changed).unwrap_or(0),
        ))
    }

    async fn resolve(
        &self,
        lease: &Lease,
        truth: Option<&StoredAnswer>,
    ) -> Result<Completion, SqliteError> {
        let held = lease.clone();
        let truth = truth.cloned();
        let changed = self
            .run(move |connection| {
                let lease = [
                    &held.scope().as_str() as &dyn rusqlite::ToSql,
                    &held.key().as_str(),
                    &held.fence().as_i64(),
                ];
                match &truth {
                    Some(truth) => connection.prepare_cached(RESOLVE)?.execute(params![
                        lease[0],
                        lease[1],
                        lease[2],
                        truth.is_refusal(),
                        truth.json()
                    ]),
                    None => connection
                        .prepare_cached(RESOLVE_RELEASE)?
                        .execute(&lease[..]),
                }
            })
            .await?;
        Ok(Completion::of_rows_changed(
            u64::try_from(changed).unwrap_or(0),
        ))
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, SqliteError> {
        let lease_ms = self.lease_ms();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let asked = Instant::now();
        // A scan: on the ledger's thread, never the caller's.
        let claimed: Vec<(String, String, i64, String, i64)> = self
            .on_thread(move |connection| {
                let candidates: Vec<(String, String)> = connection
                    .prepare_cached(CANDIDATES)?
                    .query_map(params![limit], |row| Ok((row.get(0)?, row.get(1)?)))?
                    .collect::<Result<_, _>>()?;
                let mut claimed = Vec::new();
                for (scope, key) in candidates {
                    // Each taken on its own, under a fence of its own, if nobody took it
                    // since the scan.
                    let transaction =
                        connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    let fence: i64 = transaction
                        .prepare_cached(NEXT_FENCE)?
                        .query_row([], |row| row.get(0))?;
                    let claim: Option<(String, i64)> = transaction
                        .prepare_cached(CLAIM)?
                        .query_row(params![scope, key, fence, lease_ms], |row| {
                            Ok((row.get(0)?, row.get(1)?))
                        })
                        .optional()?;
                    transaction.commit()?;
                    if let Some((context, until)) = claim {
                        claimed.push((scope, key, fence, context, until));
                    }
                }
                Ok(claimed)
            })
            .await?;
        Ok(claimed
            .into_iter()
            .filter_map(|(scope, key, fence, context, until)| {
                let key = IdempotencyKey::new(key).ok()?;
                let lease = Lease::new(
                    Scope::principal(scope),
                    key,
                    Fence::from_i64(fence),
                    instant(until),
                    asked,
                    self.lease,
                );
                Some(Abandoned::new(lease, context))
            })
            .collect())
    }

    async fn purge(&self, limit: usize) -> Result<usize, SqliteError> {
        let retention = i64::try_from(self.retention.as_millis()).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // A batch may take a while: on the ledger's thread, never the caller's.
        self.on_thread(move |connection| {
            connection
                .prepare_cached(PURGE)?
                .execute(params![retention, limit])
        })
        .await
    }
}
