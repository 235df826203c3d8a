//! [`Tx`]: the transaction of a call's effect, under its lease's fence (the crate's typed
//! transaction, which commits the effect with the call's answer), or plain outside the replay
//! sequence; and [`Statements`], what runs the service's statements, a connection or a
//! transaction.

use std::time::Duration;

use agent_tool_result::guarantee::Answer;
use agent_tool_result::replay::{
    Done, Lease, PostgresTransaction, SqliteTransaction, TransactionError,
};

use crate::db::error::DbError;
use crate::db::sql::{
    Arg, POSTGRES_NOW, Row, bounded, off_executor, pg_execute, pg_query, postgres_params,
    sqlite_execute, sqlite_query, sqlite_sql,
};
use crate::db::{Conn, PgConn};

impl<'a> Conn<'a> {
    /// Begins the transaction of an effect: under `lease`'s fence when the call has one (the
    /// crate's typed transaction, which commits the effect with the call's answer), a plain
    /// one when it has none (outside the replay sequence: the benchmark's baseline).
    pub async fn effect(
        &mut self,
        lease: Option<&Lease>,
    ) -> Result<Tx<'_, 'a>, TransactionError<DbError>> {
        let failed = |err: DbError| TransactionError::Failed(err);
        match (self, lease) {
            (Conn::Sqlite(connection), Some(lease)) => {
                off_executor(|| SqliteTransaction::begin(connection, lease))
                    .map(Tx::Sqlite)
                    .map_err(|err| map_tx(err, DbError::Ledger))
            }
            (Conn::Postgres(conn), Some(lease)) => {
                let PgConn {
                    client,
                    unsure,
                    timeout,
                    settings,
                } = &mut **conn;
                let client = client.as_mut().expect("a connection until dropped");
                // Until it commits, the connection's state is not known.
                *unsure = true;
                let begun = tokio::time::timeout(
                    *timeout,
                    PostgresTransaction::begin_with(client, lease, settings),
                )
                .await
                .map_err(|_| failed(DbError::TimedOut(*timeout)))?;
                match begun {
                    Ok(tx) => Ok(Tx::Postgres {
                        tx,
                        unsure,
                        timeout: *timeout,
                    }),
                    // The server answered (the key is another's, or in flight) and the
                    // transaction is rolled back: the connection serves the next call, so a
                    // replay costs no new connection.
                    Err(err @ (TransactionError::Fenced | TransactionError::InFlight)) => {
                        *unsure = false;
                        Err(map_tx(err, DbError::Setup))
                    }
                    Err(err) => Err(map_tx(err, DbError::Setup)),
                }
            }
            (conn, None) => {
                conn.begin().await.map_err(failed)?;
                Ok(Tx::Plain(conn))
            }
        }
    }

    /// An effect of one statement, `sql` with `args`, committed with `answer` under
    /// `lease`'s fence: on PostgreSQL a single statement that is its own transaction (the
    /// crate's one-statement transaction: one round trip, no transaction left open); on
    /// SQLite the crate's one-write transaction (the record checks the fence as it writes),
    /// in one stretch off the executor;
    /// without a lease, [`Conn::effect`] and [`Tx::commit_with`].
    pub async fn commit_one<F: serde::Serialize>(
        &mut self,
        lease: Option<&Lease>,
        sql: &str,
        args: &[Arg],
        answer: Answer<F>,
    ) -> Done<F> {
        let (conn, Some(lease)) = (&mut *self, lease) else {
            return match self.effect(lease).await {
                Ok(tx) => tx.commit_with(sql, args, answer).await,
                Err(err) => Done::from(err),
            };
        };
        let conn = match conn {
            Conn::Postgres(conn) => conn,
            Conn::Sqlite(connection) => {
                let committed = off_executor(|| {
                    let params = rusqlite::params_from_iter(args);
                    SqliteTransaction::commit_one(
                        connection,
                        lease,
                        &sqlite_sql(sql),
                        params,
                        answer,
                    )
                });
                return committed
                    .map_err(|err| map_tx(err, DbError::Ledger))
                    .unwrap_or_else(Done::from);
            }
        };
        let PgConn {
            client,
            unsure,
            timeout,
            ..
        } = &mut **conn;
        let client = client.as_mut().expect("a connection until dropped");
        let sql = sql.replace("NOW_MS", POSTGRES_NOW);
        let params = postgres_params(args);
        // Until the server answers, the connection's state is not known.
        *unsure = true;
        let committed = tokio::time::timeout(
            *timeout,
            PostgresTransaction::commit_one(client, lease, &sql, &params, answer),
        )
        .await;
        let committed = match committed {
            Ok(Ok(done)) => Ok(done),
            Ok(Err(err)) => Err(map_tx(err, DbError::Setup)),
            Err(_) => Err(TransactionError::Unsure(DbError::TimedOut(*timeout))),
        };
        // The server answered (recorded, or refused with nothing written): no transaction
        // is left open, and the connection serves the next call.
        if !matches!(committed, Err(TransactionError::Unsure(_))) {
            *unsure = false;
        }
        committed.unwrap_or_else(Done::from)
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
                let done = off_executor(|| {
                    if sql.is_empty() {
                        tx.commit(answer)
                    } else {
                        tx.commit_with(&sqlite_sql(sql), rusqlite::params_from_iter(args), answer)
                    }
                });
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
