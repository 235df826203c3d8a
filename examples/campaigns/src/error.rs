//! [`DbError`]: a failure of the service's database, whichever backend, and of what runs on
//! it (the crate's typed transactions, an injected fault).

use std::time::Duration;

use agent_tool_result::replay::{PostgresError, SqliteError};

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
