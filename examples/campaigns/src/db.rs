//! The service's database, SQLite or PostgreSQL, behind one small interface: statements are
//! written once, in PostgreSQL's style (`$1` parameters, `NOW_MS` for the database's clock in
//! milliseconds since 1970), and each backend runs them as its own. A [`Conn`] is one
//! connection, held for a statement or a transaction.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Mutex, MutexGuard};

/// How many connections a PostgreSQL database gets: statements of several calls at once.
const POOL: usize = 4;

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
    /// The SQLite file the service opened was deleted or replaced while it ran: what it
    /// would write goes nowhere another process (or a restart) would see.
    #[error("the database file {0} was deleted or replaced while the service ran")]
    Gone(String),
    /// The (injected) disk is full.
    #[error("database or disk is full (injected)")]
    Full,
}

/// A statement's parameter.
#[derive(Clone, Debug)]
pub enum Arg {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// A text, or NULL.
    Text(Option<String>),
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
        }
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        use tokio_postgres::types::Type;
        [Type::INT8, Type::INT4, Type::TEXT, Type::VARCHAR].contains(ty)
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

/// A connection, and whether a transaction was left open on it (by an early return), to be
/// rolled back before its next use.
pub struct Held<C> {
    connection: C,
    in_transaction: bool,
}

/// The service's database: one SQLite connection, or a few PostgreSQL ones.
pub enum Db {
    /// SQLite.
    Sqlite(Mutex<Held<rusqlite::Connection>>),
    /// PostgreSQL.
    Postgres {
        /// The connections.
        pool: Vec<Mutex<Held<tokio_postgres::Client>>>,
        /// The next to try first.
        next: AtomicUsize,
    },
}

/// SQLite's clock in milliseconds.
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
/// PostgreSQL's clock in milliseconds.
const POSTGRES_NOW: &str = "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS bigint)";

impl Db {
    /// Opens the database at `target`, running `schema` (PostgreSQL style; `SERIAL` is an
    /// auto-numbered integer primary key).
    pub async fn open(target: &Target, schema: &str) -> Result<Db, DbError> {
        match target {
            Target::Sqlite(path) => Db::open_sqlite(path, schema),
            Target::Postgres(url) => {
                let mut pool = Vec::with_capacity(POOL);
                for _ in 0..POOL {
                    let (client, connection) =
                        tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
                    tokio::spawn(async move {
                        if let Err(err) = connection.await {
                            eprintln!("campaigns: a PostgreSQL connection ended: {err}");
                        }
                    });
                    pool.push(Mutex::new(Held {
                        connection: client,
                        in_transaction: false,
                    }));
                }
                // Processes starting together do not race to create the tables.
                let ddl = schema.replace("SERIAL", "bigserial PRIMARY KEY");
                pool[0]
                    .lock()
                    .await
                    .connection
                    .batch_execute(&format!(
                        "BEGIN; SELECT pg_advisory_xact_lock(7462021); {ddl} COMMIT;"
                    ))
                    .await?;
                Ok(Db::Postgres {
                    pool,
                    next: AtomicUsize::new(0),
                })
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

    /// A connection: a free one when there is one.
    pub async fn conn(&self) -> Result<Conn<'_>, DbError> {
        let mut conn = match self {
            Db::Sqlite(connection) => Conn::Sqlite(connection.lock().await),
            Db::Postgres { pool, next } => {
                let start = next.fetch_add(1, Ordering::Relaxed);
                let free =
                    (0..pool.len()).find_map(|i| pool[(start + i) % pool.len()].try_lock().ok());
                match free {
                    Some(held) => Conn::Postgres(held),
                    None => Conn::Postgres(pool[start % pool.len()].lock().await),
                }
            }
        };
        if conn.held_in_transaction() {
            conn.batch("ROLLBACK").await?;
            conn.set_in_transaction(false);
        }
        Ok(conn)
    }
}

/// One connection of the [`Db`].
pub enum Conn<'a> {
    /// SQLite's.
    Sqlite(MutexGuard<'a, Held<rusqlite::Connection>>),
    /// One of PostgreSQL's.
    Postgres(MutexGuard<'a, Held<tokio_postgres::Client>>),
}

impl Conn<'_> {
    fn held_in_transaction(&self) -> bool {
        match self {
            Conn::Sqlite(held) => held.in_transaction,
            Conn::Postgres(held) => held.in_transaction,
        }
    }

    fn set_in_transaction(&mut self, open: bool) {
        match self {
            Conn::Sqlite(held) => held.in_transaction = open,
            Conn::Postgres(held) => held.in_transaction = open,
        }
    }

    async fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(held) => Ok(held.connection.execute_batch(sql)?),
            Conn::Postgres(held) => Ok(held.connection.batch_execute(sql).await?),
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

    /// Commits the transaction.
    pub async fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT").await?;
        self.set_in_transaction(false);
        Ok(())
    }

    /// Runs a statement; returns how many rows it changed.
    pub async fn execute(&mut self, sql: &str, args: &[Arg]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(held) => {
                let sql = sqlite_sql(sql);
                let changed = held
                    .connection
                    .prepare_cached(&sql)?
                    .execute(rusqlite::params_from_iter(args))?;
                Ok(changed as u64)
            }
            Conn::Postgres(held) => {
                let sql = sql.replace("NOW_MS", POSTGRES_NOW);
                Ok(held
                    .connection
                    .execute(&sql, &postgres_params(args))
                    .await?)
            }
        }
    }

    /// Runs a query; returns its rows.
    pub async fn query(&mut self, sql: &str, args: &[Arg]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(held) => {
                let sql = sqlite_sql(sql);
                let mut statement = held.connection.prepare_cached(&sql)?;
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
            Conn::Postgres(held) => {
                use tokio_postgres::types::Type;
                let sql = sql.replace("NOW_MS", POSTGRES_NOW);
                let rows = held.connection.query(&sql, &postgres_params(args)).await?;
                Ok(rows
                    .iter()
                    .map(|row| {
                        Row((0..row.len())
                            .map(|i| match row.columns()[i].type_() {
                                ty if *ty == Type::INT8 => {
                                    row.get::<_, Option<i64>>(i).map_or(Value::Null, Value::Int)
                                }
                                ty if *ty == Type::INT4 => row
                                    .get::<_, Option<i32>>(i)
                                    .map_or(Value::Null, |n| Value::Int(n.into())),
                                _ => row
                                    .get::<_, Option<String>>(i)
                                    .map_or(Value::Null, Value::Text),
                            })
                            .collect())
                    })
                    .collect())
            }
        }
    }
}

/// The parameters as `tokio-postgres` takes them.
fn postgres_params(args: &[Arg]) -> Vec<&(dyn tokio_postgres::types::ToSql + Sync)> {
    args.iter()
        .map(|arg| arg as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect()
}

/// A statement in SQLite's dialect: `?N` parameters and its clock.
fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?").replace("NOW_MS", SQLITE_NOW)
}
