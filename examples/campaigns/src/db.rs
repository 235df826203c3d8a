//! The service's database, SQLite or PostgreSQL, behind one small interface: statements are
//! written once, in PostgreSQL's style (`$1` parameters, `NOW_MS` for the database's clock in
//! milliseconds since 1970), and each backend runs them as its own. A [`Conn`] is one
//! connection, held for a statement or a transaction: SQLite's one, or one of a
//! `deadpool-postgres` pool that replaces connections the server dropped and that the
//! idempotency ledger shares. Every PostgreSQL statement is bounded in time.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_tool_result::guarantee::Answer;
use agent_tool_result::replay::{
    Done, Lease, PostgresError, PostgresLedger, PostgresTransaction, SqliteError,
    SqliteTransaction, TransactionError,
};
use deadpool_postgres::{Object, Pool};
use tokio::sync::{Mutex, MutexGuard};

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

/// A failure of the service's database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite failed.
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// No PostgreSQL connection could be had (the pool's reason).
    #[error("PostgreSQL pool: {0}")]
    Pool(String),
    /// The pool could not be set up.
    #[error("PostgreSQL: {0}")]
    Setup(#[from] PostgresError),
    /// A statement (or the wait for a connection) took longer than the service allows: the
    /// server is down, cut off or overloaded.
    #[error("PostgreSQL did not answer within {0:?}")]
    TimedOut(Duration),
    /// The SQLite file the service opened was deleted or replaced while it ran: what it
    /// would write goes nowhere another process (or a restart) would see.
    #[error("the database file {0} was deleted or replaced while the service ran")]
    Gone(String),
    /// The (injected) disk is full.
    #[error("database or disk is full (injected)")]
    Full,
    /// The crate's SQLite transaction failed.
    #[error("SQLite: {0}")]
    Ledger(#[from] SqliteError),
    /// An answer broke the guarantee contract (a bug of the service's).
    #[error("the answer breaks the contract: {0}")]
    Answer(#[from] agent_tool_result::guarantee::InvariantError),
}

/// A statement's parameter.
#[derive(Clone, Debug)]
pub enum Arg {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// A text, or NULL.
    Text(Option<String>),
    /// A boolean (an integer, 0 or 1, on SQLite).
    Bool(bool),
}

impl From<bool> for Arg {
    fn from(b: bool) -> Self {
        Arg::Bool(b)
    }
}

impl From<i64> for Arg {
    fn from(n: i64) -> Self {
        Arg::Int(Some(n))
    }
}

impl From<Option<i64>> for Arg {
    fn from(n: Option<i64>) -> Self {
        Arg::Int(n)
    }
}

impl From<&str> for Arg {
    fn from(text: &str) -> Self {
        Arg::Text(Some(text.to_owned()))
    }
}

impl From<Option<&str>> for Arg {
    fn from(text: Option<&str>) -> Self {
        Arg::Text(text.map(str::to_owned))
    }
}

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Arg::Int(n) => n.to_sql(),
            Arg::Text(text) => text.to_sql(),
            Arg::Bool(b) => b.to_sql(),
        }
    }
}

impl tokio_postgres::types::ToSql for Arg {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use tokio_postgres::types::Type;
        match self {
            Arg::Int(n) if *ty == Type::INT4 => n.map(i32::try_from).transpose()?.to_sql(ty, out),
            Arg::Int(n) => n.to_sql(ty, out),
            Arg::Text(text) => text.to_sql(ty, out),
            Arg::Bool(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        use tokio_postgres::types::Type;
        [
            Type::INT8,
            Type::INT4,
            Type::TEXT,
            Type::VARCHAR,
            Type::BOOL,
        ]
        .contains(ty)
    }

    tokio_postgres::types::to_sql_checked!();
}

/// A column's value in a [`Row`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Null,
    Int(i64),
    Text(String),
}

/// A result row.
#[derive(Clone, Debug)]
pub struct Row(Vec<Value>);

impl Row {
    /// Column `i`, an integer or NULL.
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match &self.0[i] {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// Column `i`, an integer (NULL is 0).
    pub fn int(&self, i: usize) -> i64 {
        self.opt_int(i).unwrap_or(0)
    }

    /// Column `i`, a text or NULL.
    pub fn opt_text(&self, i: usize) -> Option<String> {
        match &self.0[i] {
            Value::Text(text) => Some(text.clone()),
            _ => None,
        }
    }

    /// Column `i`, a text (NULL is empty).
    pub fn text(&self, i: usize) -> String {
        self.opt_text(i).unwrap_or_default()
    }
}

/// SQLite's connection, and whether a transaction was left open on it (by an early return),
/// to be rolled back before its next use.
pub struct Held {
    connection: rusqlite::Connection,
    in_transaction: bool,
}

/// The service's database: one SQLite connection, or a pool of PostgreSQL ones that the
/// idempotency ledger shares.
pub enum Db {
    /// SQLite.
    Sqlite(Mutex<Held>),
    /// PostgreSQL.
    Postgres {
        /// The pool (the ledger takes its connections from it too).
        pool: Pool,
        /// How long one statement (or the wait for a connection) may take.
        timeout: Duration,
    },
}

/// SQLite's clock in milliseconds.
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
/// PostgreSQL's clock in milliseconds.
const POSTGRES_NOW: &str = "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS bigint)";

impl Db {
    /// Opens the database at `target`, running `schema` (PostgreSQL style; `SERIAL` is an
    /// auto-numbered integer primary key). A PostgreSQL pool holds `connections` at most, and
    /// no statement waits longer than `timeout` (nor does a transaction left open by a
    /// process that stopped hold its locks much longer: the server ends such a session).
    pub async fn open(
        target: &Target,
        schema: &str,
        connections: usize,
        timeout: Duration,
    ) -> Result<Db, DbError> {
        match target {
            Target::Sqlite(path) => Db::open_sqlite(path, schema),
            Target::Postgres(url) => {
                let mut config: tokio_postgres::Config = url.parse()?;
                let idle_ms = (timeout * 2).as_millis();
                config.options(format!(
                    "-c idle_in_transaction_session_timeout={idle_ms} -c lock_timeout={}",
                    timeout.as_millis()
                ));
                let pool = PostgresLedger::pool_for(config, connections, timeout)?;
                let db = Db::Postgres { pool, timeout };
                // Processes starting together do not race to create the tables.
                let ddl = schema.replace("SERIAL", "bigserial PRIMARY KEY");
                db.conn()
                    .await?
                    .batch(&format!(
                        "BEGIN; SELECT pg_advisory_xact_lock(7462021); {ddl} COMMIT;"
                    ))
                    .await?;
                Ok(db)
            }
        }
    }

    fn open_sqlite(path: &Path, schema: &str) -> Result<Db, DbError> {
        let connection = rusqlite::Connection::open(path)?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; {}",
            schema.replace("SERIAL", "INTEGER PRIMARY KEY")
        ))?;
        Ok(Db::Sqlite(Mutex::new(Held {
            connection,
            in_transaction: false,
        })))
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
                let mut held = connection.lock().await;
                if held.in_transaction {
                    held.connection.execute_batch("ROLLBACK")?;
                    held.in_transaction = false;
                }
                Ok(Conn::Sqlite(held))
            }
            Db::Postgres { pool, timeout } => {
                let client = tokio::time::timeout(*timeout, pool.get())
                    .await
                    .map_err(|_| DbError::TimedOut(*timeout))?
                    .map_err(|err| DbError::Pool(err.to_string()))?;
                Ok(Conn::Postgres(Box::new(PgConn {
                    client: Some(client),
                    unsure: false,
                    timeout: *timeout,
                })))
            }
        }
    }
}

/// One of the pool's PostgreSQL connections, for a statement or a transaction.
pub struct PgConn {
    client: Option<Object>,
    /// Whether the session's state is not known (a transaction left open, a statement that
    /// timed out): then the connection leaves the pool when dropped, and the server rolls
    /// back whatever it held.
    unsure: bool,
    timeout: Duration,
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
    Sqlite(MutexGuard<'a, Held>),
    /// One of PostgreSQL's (boxed: a pooled connection is large).
    Postgres(Box<PgConn>),
}

impl<'a> Conn<'a> {
    fn set_in_transaction(&mut self, open: bool) {
        match self {
            Conn::Sqlite(held) => held.in_transaction = open,
            Conn::Postgres(conn) => conn.unsure = open,
        }
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(held) => Ok(held.connection.execute_batch(sql)?),
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
            Conn::Postgres(_) => {
                self.batch("BEGIN; SELECT pg_advisory_xact_lock(7462022)")
                    .await
            }
        }
    }

    /// Begins a transaction (SQLite takes the write lock at once, so a check made first in it
    /// still holds at its commit).
    pub async fn begin(&mut self) -> Result<(), DbError> {
        self.set_in_transaction(true);
        match self {
            Conn::Sqlite(_) => self.batch("BEGIN IMMEDIATE").await,
            Conn::Postgres(_) => self.batch("BEGIN").await,
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
            Conn::Sqlite(held) => sqlite_execute(&held.connection, sql, args),
            Conn::Postgres(conn) => {
                conn.bounded(async |client: &Object| pg_execute(client, sql, args).await)
                    .await
            }
        }
    }

    /// Runs a query; returns its rows.
    pub async fn query(&mut self, sql: &str, args: &[Arg]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(held) => sqlite_query(&held.connection, sql, args),
            Conn::Postgres(conn) => {
                conn.bounded(async |client: &Object| pg_query(client, sql, args).await)
                    .await
            }
        }
    }

    /// Begins the transaction of an effect: under `lease`'s fence when the call has one (the
    /// crate's typed transaction, which commits the effect with the call's answer), a plain
    /// one when it has none (outside the replay sequence: the benchmark's baseline).
    pub async fn effect(
        &mut self,
        lease: Option<&Lease>,
    ) -> Result<Tx<'_, 'a>, TransactionError<DbError>> {
        let failed = |err: DbError| TransactionError::Failed(err);
        match (self, lease) {
            (Conn::Sqlite(held), Some(lease)) => {
                SqliteTransaction::begin(&mut held.connection, lease)
                    .map(Tx::Sqlite)
                    .map_err(|err| map_tx(err, DbError::Ledger))
            }
            (Conn::Postgres(conn), Some(lease)) => {
                let PgConn {
                    client,
                    unsure,
                    timeout,
                } = &mut **conn;
                let client = client.as_mut().expect("a connection until dropped");
                // Until it commits, the connection's state is not known.
                *unsure = true;
                let begun =
                    tokio::time::timeout(*timeout, PostgresTransaction::begin(client, lease))
                        .await
                        .map_err(|_| failed(DbError::TimedOut(*timeout)))?;
                Ok(Tx::Postgres {
                    tx: begun.map_err(|err| map_tx(err, DbError::Setup))?,
                    unsure,
                    timeout: *timeout,
                })
            }
            (conn, None) => {
                conn.begin().await.map_err(failed)?;
                Ok(Tx::Plain(conn))
            }
        }
    }
}

/// A ledger's transaction error, with the store's error as the service's.
fn map_tx<E>(
    err: TransactionError<E>,
    into: impl FnOnce(E) -> DbError,
) -> TransactionError<DbError> {
    match err {
        TransactionError::Failed(err) => TransactionError::Failed(into(err)),
        TransactionError::Unsure(err) => TransactionError::Unsure(into(err)),
        TransactionError::InFlight => TransactionError::InFlight,
        _ => TransactionError::Fenced,
    }
}

/// The transaction of an effect: fenced by a call's lease (committing the call's answer with
/// the effect), or plain.
pub enum Tx<'c, 'a> {
    /// Fenced, on SQLite.
    Sqlite(SqliteTransaction<'c>),
    /// Fenced, on PostgreSQL.
    Postgres {
        /// The transaction.
        tx: PostgresTransaction<'c>,
        /// The connection's flag: left set unless the transaction commits.
        unsure: &'c mut bool,
        /// The bound on each statement.
        timeout: Duration,
    },
    /// Plain, outside the replay sequence.
    Plain(&'c mut Conn<'a>),
}

impl Tx<'_, '_> {
    /// Runs a statement in the transaction; returns how many rows it changed.
    pub async fn execute(&mut self, sql: &str, args: &[Arg]) -> Result<u64, DbError> {
        match self {
            Tx::Sqlite(tx) => sqlite_execute(tx, sql, args),
            Tx::Postgres { tx, timeout, .. } => bounded(*timeout, pg_execute(tx, sql, args)).await,
            Tx::Plain(conn) => conn.execute(sql, args).await,
        }
    }

    /// Runs a query in the transaction; returns its rows.
    pub async fn query(&mut self, sql: &str, args: &[Arg]) -> Result<Vec<Row>, DbError> {
        match self {
            Tx::Sqlite(tx) => sqlite_query(tx, sql, args),
            Tx::Postgres { tx, timeout, .. } => bounded(*timeout, pg_query(tx, sql, args)).await,
            Tx::Plain(conn) => conn.query(sql, args).await,
        }
    }

    /// Commits the effect with `answer`: what the tool answers the sequence (the answer
    /// recorded with the key, or, for a plain transaction, the answer itself).
    pub async fn commit<F: serde::Serialize>(self, answer: Answer<F>) -> Done<F> {
        self.commit_with("", &[], answer).await
    }

    /// [`Tx::commit`] after the effect's last write, `sql` with `args` (on PostgreSQL, in the
    /// same statement as the answer's record).
    pub async fn commit_with<F: serde::Serialize>(
        self,
        sql: &str,
        args: &[Arg],
        answer: Answer<F>,
    ) -> Done<F> {
        let committed = match self {
            Tx::Sqlite(tx) => {
                let done = if sql.is_empty() {
                    tx.commit(answer)
                } else {
                    tx.commit_with(&sqlite_sql(sql), rusqlite::params_from_iter(args), answer)
                };
                done.map_err(|err| map_tx(err, DbError::Ledger))
            }
            Tx::Postgres {
                tx,
                unsure,
                timeout,
            } => {
                let sql = sql.replace("NOW_MS", POSTGRES_NOW);
                let params = postgres_params(args);
                match tokio::time::timeout(timeout, tx.commit_with(&sql, &params, answer)).await {
                    Ok(Ok(done)) => {
                        *unsure = false;
                        Ok(done)
                    }
                    Ok(Err(err)) => Err(map_tx(err, DbError::Setup)),
                    Err(_) => Err(TransactionError::Unsure(DbError::TimedOut(timeout))),
                }
            }
            Tx::Plain(conn) => {
                let written = if sql.is_empty() {
                    Ok(0)
                } else {
                    conn.execute(sql, args).await
                };
                match written {
                    Err(err) => Err(TransactionError::Failed(err)),
                    Ok(_) => match conn.commit().await {
                        Ok(()) => Ok(Done::Answer(answer)),
                        Err(err) => Err(TransactionError::Unsure(err)),
                    },
                }
            }
        };
        committed.unwrap_or_else(Done::from)
    }
}

/// What runs the service's statements: a connection, or a transaction on one.
pub trait Statements: Send {
    /// Runs a statement; returns how many rows it changed.
    fn execute(
        &mut self,
        sql: &str,
        args: &[Arg],
    ) -> impl Future<Output = Result<u64, DbError>> + Send;

    /// Runs a query; returns its rows.
    fn query(
        &mut self,
        sql: &str,
        args: &[Arg],
    ) -> impl Future<Output = Result<Vec<Row>, DbError>> + Send;
}

impl Statements for Conn<'_> {
    fn execute(
        &mut self,
        sql: &str,
        args: &[Arg],
    ) -> impl Future<Output = Result<u64, DbError>> + Send {
        Conn::execute(self, sql, args)
    }

    fn query(
        &mut self,
        sql: &str,
        args: &[Arg],
    ) -> impl Future<Output = Result<Vec<Row>, DbError>> + Send {
        Conn::query(self, sql, args)
    }
}

impl Statements for Tx<'_, '_> {
    fn execute(
        &mut self,
        sql: &str,
        args: &[Arg],
    ) -> impl Future<Output = Result<u64, DbError>> + Send {
        Tx::execute(self, sql, args)
    }

    fn query(
        &mut self,
        sql: &str,
        args: &[Arg],
    ) -> impl Future<Output = Result<Vec<Row>, DbError>> + Send {
        Tx::query(self, sql, args)
    }
}

impl From<DbError> for TransactionError<DbError> {
    /// A statement of the service's that failed before the commit: nothing was written.
    fn from(err: DbError) -> Self {
        TransactionError::Failed(err)
    }
}

/// `work` within `timeout`.
async fn bounded<T, E: Into<DbError>>(
    timeout: Duration,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, DbError> {
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| DbError::TimedOut(timeout))?
        .map_err(Into::into)
}

fn sqlite_execute(
    connection: &rusqlite::Connection,
    sql: &str,
    args: &[Arg],
) -> Result<u64, DbError> {
    let changed = connection
        .prepare_cached(&sqlite_sql(sql))?
        .execute(rusqlite::params_from_iter(args))?;
    Ok(changed as u64)
}

fn sqlite_query(
    connection: &rusqlite::Connection,
    sql: &str,
    args: &[Arg],
) -> Result<Vec<Row>, DbError> {
    let mut statement = connection.prepare_cached(&sqlite_sql(sql))?;
    let width = statement.column_count();
    let rows = statement.query_map(rusqlite::params_from_iter(args), |row| {
        (0..width)
            .map(|i| {
                Ok(match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Integer(n) => Value::Int(n),
                    rusqlite::types::ValueRef::Text(text) => {
                        Value::Text(String::from_utf8_lossy(text).into_owned())
                    }
                    _ => Value::Null,
                })
            })
            .collect::<rusqlite::Result<Vec<_>>>()
            .map(Row)
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A statement on PostgreSQL, its parameters typed in it: one round trip, no prepared
/// statement kept on the connection (a pooler in transaction mode keeps none).
async fn pg_execute(
    client: &tokio_postgres::Client,
    sql: &str,
    args: &[Arg],
) -> Result<u64, tokio_postgres::Error> {
    let sql = sql.replace("NOW_MS", POSTGRES_NOW);
    client.execute_typed(&sql, &postgres_params(args)).await
}

async fn pg_query(
    client: &tokio_postgres::Client,
    sql: &str,
    args: &[Arg],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let sql = sql.replace("NOW_MS", POSTGRES_NOW);
    let rows = client.query_typed(&sql, &postgres_params(args)).await?;
    Ok(rows.iter().map(postgres_row).collect())
}

/// A PostgreSQL row as the service reads it.
fn postgres_row(row: &tokio_postgres::Row) -> Row {
    use tokio_postgres::types::Type;
    Row((0..row.len())
        .map(|i| match row.columns()[i].type_() {
            ty if *ty == Type::INT8 => row.get::<_, Option<i64>>(i).map_or(Value::Null, Value::Int),
            ty if *ty == Type::INT4 => row
                .get::<_, Option<i32>>(i)
                .map_or(Value::Null, |n| Value::Int(n.into())),
            // Text, or nothing the service reads (`void`, say).
            _ => row
                .try_get::<_, Option<String>>(i)
                .ok()
                .flatten()
                .map_or(Value::Null, Value::Text),
        })
        .collect())
}

/// The parameters as `tokio-postgres` takes them, each with its type, so that a statement
/// needs no separate prepare.
fn postgres_params(
    args: &[Arg],
) -> Vec<(
    &(dyn tokio_postgres::types::ToSql + Sync),
    tokio_postgres::types::Type,
)> {
    use tokio_postgres::types::Type;
    args.iter()
        .map(|arg| {
            let ty = match arg {
                Arg::Int(_) => Type::INT8,
                Arg::Text(_) => Type::TEXT,
                Arg::Bool(_) => Type::BOOL,
            };
            (arg as &(dyn tokio_postgres::types::ToSql + Sync), ty)
        })
        .collect()
}

/// A statement in SQLite's dialect: `?N` parameters and its clock.
fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?").replace("NOW_MS", SQLITE_NOW)
}
