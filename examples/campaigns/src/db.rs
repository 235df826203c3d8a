//! The service's database, SQLite or PostgreSQL, behind one small interface: a [`Conn`] is one
//! connection, held for a statement or a transaction: SQLite's one, or one of a
//! `deadpool-postgres` pool that replaces connections the server dropped and that the
//! idempotency ledger shares. Statements are written once and run by each backend as its own
//! ([`sql`]); an effect's transaction is [`tx`]'s. Every PostgreSQL statement is
//! bounded in time.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::replay::{PostgresLedger, TransactionSettings};
use deadpool_postgres::{Object, Pool};
use tokio::sync::{Mutex, MutexGuard};

use error::DbError;
use sql::{Arg, Row, off_executor, pg_execute, pg_query, sqlite_execute, sqlite_query};

pub mod error;
pub mod guard;
pub mod ledger;
pub mod sql;
pub mod tx;

/// Where the service keeps its data: `--db` as given.
#[derive(Clone, Debug)]
pub enum Target {
    /// A SQLite file (created if need be).
    Sqlite(PathBuf),
    /// A PostgreSQL database, by URL.
    Postgres(String),
}

impl Target {
    /// A `postgres://` (or `postgresql://`) URL, else a SQLite path.
    pub fn parse(text: &str) -> Target {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Target::Postgres(text.to_owned())
        } else {
            Target::Sqlite(PathBuf::from(text))
        }
    }
}

/// The service's database: one SQLite connection, or a pool of PostgreSQL ones; the
/// idempotency ledger shares either. A clone shares the same connections.
#[derive(Clone)]
pub enum Db {
    /// SQLite: the one connection (a transaction left open on it by an early return is
    /// rolled back before its next use).
    Sqlite(Arc<Mutex<rusqlite::Connection>>),
    /// PostgreSQL.
    Postgres {
        /// The pool (the ledger takes its connections from it too).
        pool: Pool,
        /// How long one statement (or the wait for a connection) may take.
        timeout: Duration,
        /// What each transaction sets for itself as it begins.
        settings: Arc<TransactionSettings>,
    },
}

impl Db {
    /// Opens the database at `target`, running `schema` (PostgreSQL style; `SERIAL` is an
    /// auto-numbered integer primary key). A PostgreSQL pool holds `connections` at most, and
    /// no statement waits longer than `timeout` (nor does a transaction left open by a
    /// process that stopped hold its locks much longer: the server ends such a session).
    /// Nothing is set on a PostgreSQL session: each transaction sets its timeouts itself
    /// (`SET LOCAL`), and every statement is sent unnamed, so the service runs the same
    /// through a pooler in transaction mode (PgBouncer).
    pub async fn open(
        target: &Target,
        schema: &str,
        connections: usize,
        timeout: Duration,
    ) -> Result<Db, DbError> {
        match target {
            Target::Sqlite(path) => Db::open_sqlite(path, schema),
            Target::Postgres(url) => {
                let config: tokio_postgres::Config = url.parse()?;
                let options = config.get_options().map(str::to_owned);
                let pool = PostgresLedger::pool_for(config, connections, timeout)?;
                let settings = Arc::new(
                    TransactionSettings::new()
                        .lock_timeout(timeout)
                        .idle_timeout(timeout * 2),
                );
                let db = Db::Postgres {
                    pool,
                    timeout,
                    settings,
                };
                // Processes starting together do not race to create the tables.
                let ddl = schema.replace("SERIAL", "bigserial PRIMARY KEY");
                let created = async {
                    db.conn()
                        .await?
                        .batch(&format!(
                            "{}; SELECT pg_advisory_xact_lock(7462021); {ddl} COMMIT;",
                            db.settings().begin()
                        ))
                        .await
                };
                match created.await {
                    Err(err) if options.is_some() && err.is_startup_refused() => {
                        Err(DbError::Setting {
                            setting: "options",
                            fix: "a pooler in transaction mode (PgBouncer) refuses session \
                                  options at connect: remove `options` from the URL (the \
                                  service sets its timeouts per transaction), or list it in \
                                  PgBouncer's `ignore_startup_parameters`",
                            source: Box::new(err),
                        })
                    }
                    created => created.map(|()| db),
                }
            }
        }
    }

    fn open_sqlite(path: &Path, schema: &str) -> Result<Db, DbError> {
        let connection = rusqlite::Connection::open(path)?;
        // Waiting for another process's short write transactions on the same file as the
        // ledger waits: in steps of microseconds, not SQLite's milliseconds.
        connection.busy_handler(Some(agent_tool_result::replay::SqliteLedger::busy_handler))?;
        connection.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; {}",
            schema.replace("SERIAL", "INTEGER PRIMARY KEY")
        ))?;
        Ok(Db::Sqlite(Arc::new(Mutex::new(connection))))
    }

    /// What a PostgreSQL transaction sets for itself as it begins (none on SQLite).
    pub fn settings(&self) -> &TransactionSettings {
        static NONE: std::sync::LazyLock<TransactionSettings> =
            std::sync::LazyLock::new(TransactionSettings::new);
        match self {
            Db::Sqlite(_) => &NONE,
            Db::Postgres { settings, .. } => settings,
        }
    }

    /// The pool, for a PostgreSQL database.
    pub fn pool(&self) -> Option<&Pool> {
        match self {
            Db::Sqlite(_) => None,
            Db::Postgres { pool, .. } => Some(pool),
        }
    }

    /// A connection: SQLite's once it is free, or one of the pool's within the timeout.
    pub async fn conn(&self) -> Result<Conn<'_>, DbError> {
        match self {
            Db::Sqlite(connection) => {
                let connection = connection.lock().await;
                if !connection.is_autocommit() {
                    off_executor(|| connection.execute_batch("ROLLBACK"))?;
                }
                Ok(Conn::Sqlite(connection))
            }
            Db::Postgres {
                pool,
                timeout,
                settings,
            } => {
                let client = tokio::time::timeout(*timeout, pool.get())
                    .await
                    .map_err(|_| DbError::TimedOut(*timeout))?
                    .map_err(DbError::Pool)?;
                Ok(Conn::Postgres(Box::new(PgConn {
                    client: Some(client),
                    unsure: false,
                    timeout: *timeout,
                    settings: Arc::clone(settings),
                })))
            }
        }
    }
}

/// One of the pool's PostgreSQL connections, for a statement or a transaction.
pub struct PgConn {
    pub(crate) client: Option<Object>,
    /// Whether the session's state is not known (a transaction left open, a statement that
    /// timed out): then the connection leaves the pool when dropped, and the server rolls
    /// back whatever it held.
    pub(crate) unsure: bool,
    pub(crate) timeout: Duration,
    /// What each transaction sets for itself as it begins.
    pub(crate) settings: Arc<TransactionSettings>,
}

impl PgConn {
    fn client(&self) -> &Object {
        self.client.as_ref().expect("a connection until dropped")
    }

    /// Runs `work` on the connection within the timeout; a statement that failed or timed out
    /// leaves the connection unsure.
    async fn bounded<T>(
        &mut self,
        work: impl AsyncFnOnce(&Object) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, DbError> {
        let timeout = self.timeout;
        let done = tokio::time::timeout(timeout, work(self.client())).await;
        match done {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => {
                self.unsure = true;
                Err(err.into())
            }
            Err(_) => {
                self.unsure = true;
                Err(DbError::TimedOut(timeout))
            }
        }
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        if self.unsure
            && let Some(client) = self.client.take()
        {
            drop(Object::take(client));
        }
    }
}

/// One connection of the [`Db`].
pub enum Conn<'a> {
    /// SQLite's.
    Sqlite(MutexGuard<'a, rusqlite::Connection>),
    /// One of PostgreSQL's (boxed: a pooled connection is large).
    Postgres(Box<PgConn>),
}

impl Conn<'_> {
    /// Marks a PostgreSQL connection unsure while a transaction is open on it (SQLite's
    /// says so itself).
    fn set_in_transaction(&mut self, open: bool) {
        if let Conn::Postgres(conn) = self {
            conn.unsure = open;
        }
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(connection) => Ok(off_executor(|| connection.execute_batch(sql))?),
            Conn::Postgres(conn) => {
                conn.bounded(async |client: &Object| client.batch_execute(sql).await)
                    .await
            }
        }
    }

    /// Begins a transaction that no other process's exclusive transaction runs beside (SQLite
    /// takes the write lock, PostgreSQL one advisory lock).
    pub async fn begin_exclusive(&mut self) -> Result<(), DbError> {
        self.set_in_transaction(true);
        match self {
            Conn::Sqlite(_) => self.batch("BEGIN IMMEDIATE").await,
            Conn::Postgres(conn) => {
                let begin = format!(
                    "{}; SELECT pg_advisory_xact_lock(7462022)",
                    conn.settings.begin()
                );
                self.batch(&begin).await
            }
        }
    }

    /// Begins a transaction (SQLite takes the write lock at once, so a check made first in it
    /// still holds at its commit).
    pub async fn begin(&mut self) -> Result<(), DbError> {
        self.set_in_transaction(true);
        match self {
            Conn::Sqlite(_) => self.batch("BEGIN IMMEDIATE").await,
            Conn::Postgres(conn) => {
                let settings = Arc::clone(&conn.settings);
                self.batch(settings.begin()).await
            }
        }
    }

    /// Commits the transaction.
    pub async fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT").await?;
        self.set_in_transaction(false);
        Ok(())
    }

    /// Rolls the transaction back.
    pub async fn rollback(&mut self) -> Result<(), DbError> {
        self.batch("ROLLBACK").await?;
        self.set_in_transaction(false);
        Ok(())
    }

    /// Runs a statement; returns how many rows it changed.
    pub async fn execute(&mut self, sql: &str, args: &[Arg]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(connection) => sqlite_execute(connection, sql, args),
            Conn::Postgres(conn) => {
                conn.bounded(async |client: &Object| pg_execute(client, sql, args).await)
                    .await
            }
        }
    }

    /// Runs a query in a transaction of its own whose commit does not wait for the server to
    /// flush it to disk or to a standby (`synchronous_commit = off`); returns its rows. For a
    /// count that many calls take their turn at (an account's rate limit): its row is free
    /// for the next as soon as the commit is made, not once it is flushed. What a crash can
    /// lose is bounded: the commit of any call made after the count flushes the count with it
    /// (the log is flushed in order), so only counts of calls that wrote nothing since, in the
    /// last moments before the crash, are lost. The `BEGIN`, the query and the `COMMIT` go
    /// together, one round trip as a lone statement is. On SQLite, the query alone.
    pub async fn query_unflushed(&mut self, sql: &str, args: &[Arg]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(connection) => sqlite_query(connection, sql, args),
            Conn::Postgres(conn) => {
                let begin = format!(
                    "{}; SET LOCAL synchronous_commit = off",
                    conn.settings.begin()
                );
                conn.bounded(async |client: &Object| {
                    // Polled together, the three are sent in this order without waiting for
                    // one another; a query that fails makes the COMMIT a rollback.
                    let (opened, rows, committed) = tokio::join!(
                        client.batch_execute(&begin),
                        pg_query(client, sql, args),
                        client.batch_execute("COMMIT"),
                    );
                    opened?;
                    let rows = rows?;
                    committed?;
                    Ok(rows)
                })
                .await
            }
        }
    }

    /// Runs a query; returns its rows.
    pub async fn query(&mut self, sql: &str, args: &[Arg]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(connection) => sqlite_query(connection, sql, args),
            Conn::Postgres(conn) => {
                conn.bounded(async |client: &Object| pg_query(client, sql, args).await)
                    .await
            }
        }
    }
}
