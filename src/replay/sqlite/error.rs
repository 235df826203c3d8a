//! [`SqliteError`], and which of SQLite's failures are another connection's lock.

/// An error of the SQLite ledger.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteError {
    /// SQLite failed; its error is the `source()`.
    #[error("the SQLite ledger failed")]
    Sqlite(#[source] rusqlite::Error),
    /// The ledger's thread could not start, or stopped.
    #[error("the SQLite ledger's thread is not running")]
    Stopped(#[source] Option<std::io::Error>),
    /// A tool's answer did not serialize to an object, so nothing was recorded.
    #[error("the answer does not serialize to an object")]
    Answer(#[source] serde_json::Error),
}

impl From<rusqlite::Error> for SqliteError {
    fn from(err: rusqlite::Error) -> Self {
        SqliteError::Sqlite(err)
    }
}

/// Whether SQLite failed for another connection's lock on the file.
pub(super) fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(err, _) if matches!(
            err.code,
            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
        )
    )
}
