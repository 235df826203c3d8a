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
    /// No PostgreSQL connection could be had (the pool's reason, and the server's under it).
    #[error("no PostgreSQL connection")]
    Pool(#[source] deadpool_postgres::PoolError),
    /// The server refused a setting the URL makes: which, and what to do.
    #[error("the server refused the connection's `{setting}`: {fix}")]
    Setting {
        /// The setting.
        setting: &'static str,
        /// What to do.
        fix: &'static str,
        /// The refusal.
        #[source]
        source: Box<DbError>,
    },
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
    /// A statement that returns a row returned none.
    #[error("no row came back from {0}")]
    NoRow(&'static str),
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

impl DbError {
    /// Whether the server refused the connection as it started (a startup parameter it does
    /// not take: PgBouncer answers `08P01`, protocol violation).
    pub fn is_startup_refused(&self) -> bool {
        let (DbError::Pool(deadpool_postgres::PoolError::Backend(driver))
        | DbError::Postgres(driver)) = self
        else {
            return false;
        };
        driver.code() == Some(&tokio_postgres::error::SqlState::PROTOCOL_VIOLATION)
    }
}

/// `err` and each of its causes a message before did not already say, joined by `: `: the
/// server's own words come last (PgBouncer's refusal, say).
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut said = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_said = cause.to_string();
        if !said.contains(&cause_said) {
            said.push_str(": ");
            said.push_str(&cause_said);
        }
        source = cause.source();
    }
    said
}
