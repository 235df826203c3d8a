//! The PostgreSQL ledger's connections: a `deadpool-postgres` pool and a bound on every call
//! made on it, and the ledger's error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::{Object, Pool};
use tokio_postgres::Row;
use tokio_postgres::types::{ToSql, Type};

/// One of the ledger's statements: its text and the types of its parameters `$1`.., so that
/// it goes to the server as one unnamed statement, parsed, bound and run in one message.
/// Nothing is kept on the connection between statements: no named prepared statement, which
/// a pooler in transaction mode (PgBouncer) would lose when it hands the next statement to
/// another server connection. The statements that run on every call and would cost the
/// server most to plan each time (a key's begin and its record) call the ledger's functions,
/// whose plans each server session keeps.
pub(super) struct Statement {
    pub(super) sql: &'static str,
    pub(super) types: &'static [Type],
}

/// The pool, and how long a call on it may take.
#[derive(Clone)]
pub(super) struct Connections {
    pub(super) pool: Pool,
    pub(super) timeout: Duration,
}

/// An error of the PostgreSQL ledger: the driver's or the pool's error is its `source()`.
#[derive(Debug, thiserror::Error)]
#[error("the PostgreSQL ledger failed{}", match .0 { Failure::Timeout(_) => " (timed out)", _ => "" })]
pub struct PostgresError(#[source] Failure);

/// What failed.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("the server")]
    Driver(#[from] tokio_postgres::Error),
    #[error("the connection pool")]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("the URL or the pool's settings")]
    Build(#[from] deadpool_postgres::BuildError),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The error of a statement that began several keys, this one among them.
    #[error("a statement that began several keys")]
    Shared(#[source] Arc<PostgresError>),
    #[error("the task that begins keys stopped")]
    Stopped,
    #[error("the answer does not serialize to an object")]
    Answer(#[source] serde_json::Error),
}

impl<E: Into<Failure>> From<E> for PostgresError {
    fn from(err: E) -> Self {
        PostgresError(err.into())
    }
}

impl PostgresError {
    /// The error of a statement that began several keys, for one of them.
    pub(super) fn shared(err: Arc<PostgresError>) -> Self {
        PostgresError(Failure::Shared(err))
    }

    /// A tool's answer that does not serialize to an object.
    pub(super) fn answer(err: serde_json::Error) -> Self {
        PostgresError(Failure::Answer(err))
    }

    /// The task that begins keys stopped (its runtime ended).
    pub(super) fn stopped() -> Self {
        PostgresError(Failure::Stopped)
    }

    /// Whether the connection to the server was lost (the server restarted, or ended this
    /// session): the call's outcome at the server is not known.
    #[must_use]
    pub fn is_connection_lost(&self) -> bool {
        match &self.0 {
            Failure::Shared(err) => err.is_connection_lost(),
            Failure::Driver(err) | Failure::Pool(deadpool_postgres::PoolError::Backend(err)) => {
                err.is_closed()
            }
            _ => false,
        }
    }

    /// Whether the call took longer than the ledger's timeout (the server was down, cut off,
    /// or too busy): the call's outcome at the server is not known.
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        match &self.0 {
            Failure::Shared(err) => err.is_timeout(),
            Failure::Timeout(_) | Failure::Pool(deadpool_postgres::PoolError::Timeout(_)) => true,
            _ => false,
        }
    }
}

impl Connections {
    /// Runs `work` on a connection of the pool, within the ledger's timeout. A connection
    /// that did not answer in time is taken out of the pool (its session's state is not
    /// known); one the server closed is replaced by the pool at its next use.
    pub(super) async fn bounded<T>(
        &self,
        work: impl AsyncFnOnce(&Object) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, PostgresError> {
        let started = Instant::now();
        let client = tokio::time::timeout(self.timeout, self.pool.get())
            .await
            .map_err(|_| Failure::Timeout(self.timeout))??;
        let left = self.timeout.saturating_sub(started.elapsed());
        if let Ok(done) = tokio::time::timeout(left, work(&client)).await {
            Ok(done?)
        } else {
            drop(Object::take(client));
            Err(Failure::Timeout(self.timeout).into())
        }
    }

    /// Runs one statement, on a new connection once more if the server dropped the first:
    /// every statement is safe to send twice (a `begin` whose first insert did land finds its
    /// own lease and answers "in flight"; the others are guarded by the fence).
    pub(super) async fn query(
        &self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<(Vec<Row>, bool), PostgresError> {
        debug_assert_eq!(params.len(), statement.types.len(), "{}", statement.sql);
        let typed: Vec<(&(dyn ToSql + Sync), Type)> = params
            .iter()
            .zip(statement.types)
            .map(|(param, ty)| (*param, ty.clone()))
            .collect();
        let run = async |client: &Object| client.query_typed(statement.sql, &typed).await;
        match self.bounded(run).await {
            Err(err) if err.is_connection_lost() => Ok((self.bounded(run).await?, true)),
            other => other.map(|rows| (rows, false)),
        }
    }
}
