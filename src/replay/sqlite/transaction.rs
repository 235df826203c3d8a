//! [`SqliteTransaction`]: a tool's effect and its answer in one transaction on the ledger's
//! own file, under the call's lease.

use rusqlite::{Connection, params};

use super::super::done::Done;
use super::super::lease::Lease;
use super::super::ledger::TransactionError;
use super::super::stored::StoredAnswer;
use super::error::SqliteError;
use super::schema::{COMPLETE, NEXT_FENCE};
use crate::guarantee::Answer;

/// Whether the lease `(?1, ?2, ?3)` holds its key: what a fenced transaction checks first,
/// with the file's write lock held from then until its commit.
const FENCE_CHECK: &str = concat!("SELECT 1 FROM atr_idempotency WHERE ", held!());

/// The answer recorded last in a fenced transaction: the write lock has been held since its
/// fence check, so the key is still the lease's, whatever the clock says now.
const RECORD: &str = record!("scope = ?1 AND key = ?2 AND fence = ?3 AND completed_ms IS NULL");

/// Records the answer `stored` under `lease` with `guard`, [`RECORD`] or [`COMPLETE`] (which
/// also checks that the lease has not passed): how many rows it answered, one or none.
fn record(
    connection: &Connection,
    guard: &str,
    lease: &Lease,
    stored: &StoredAnswer,
) -> rusqlite::Result<usize> {
    connection.prepare_cached(guard)?.execute(params![
        lease.scope().as_str(),
        lease.key().as_str(),
        lease.fence().as_i64(),
        stored.is_refusal(),
        stored.json(),
        false
    ])
}

/// Whether the key `(?1, ?2)` was begun: what a transaction that begins its key itself asks
/// first, under the file's write lock.
const KEY_BEGUN: &str = "SELECT 1 FROM atr_idempotency WHERE scope = ?1 AND key = ?2";

/// The key `(?1, ?2)` begun and answered at once, last in the transaction of its call's
/// effect: `?3` its fence, `(?4, ?5)` the fingerprint and context, `(?6, ?7)` the answer.
const BEGIN_AND_RECORD: &str = concat!(
    "INSERT INTO atr_idempotency (scope, key, fence, fingerprint, context, completed_ms, ",
    "refused, answer) VALUES (?1, ?2, ?3, ?4, ?5, ",
    now!(),
    ", ?6, ?7) ON CONFLICT (scope, key) DO NOTHING"
);

/// A transaction on the ledger's own file under a call's lease: the tool's writes and its
/// answer commit together, or neither does. [`SqliteTransaction::begin`] takes the file's
/// write lock (`BEGIN IMMEDIATE`) and checks that the lease still holds its key, so no other
/// process can take the key over until the transaction ends; the tool makes its writes
/// through it (it dereferences to the [`rusqlite::Connection`](Connection), whose statements run inside
/// the transaction); [`SqliteTransaction::commit`]
/// records the tool's typed answer with the key and commits, and hands back what the tool
/// answers the sequence ([`Done::Recorded`]). Dropped without a commit,
/// it rolls back.
///
/// Begin it on the ledger's file: best on the connection the ledger shares with the
/// application ([`SqliteLedger::sharing`](super::SqliteLedger::sharing)), so that the two
/// take turns on one lock; or on a connection of the application's own beside a
/// [`SqliteLedger::open`](super::SqliteLedger::open)ed one (as below). It is synchronous,
/// as `rusqlite` is.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, Impact};
/// use agent_tool_result::replay::{
///     Call, Done, IdempotencyKey, ReplyKind, Sequence, SqliteLedger, SqliteTransaction,
/// };
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("atr-doc-tx-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("app.sqlite");
/// let sequence = Sequence::new(SqliteLedger::open(&path)?);
/// let mut db = rusqlite::Connection::open(&path)?;
/// db.execute_batch("CREATE TABLE IF NOT EXISTS sent (id TEXT PRIMARY KEY)")?;
///
/// let call = Call::of("send_sms", "acct_1", IdempotencyKey::new("k-1")?, &serde_json::json!({}));
/// let reply = sequence
///     .run_recording(call, |lease| {
///         let done = (|| {
///             let tx = SqliteTransaction::begin(&mut db, &lease)?;
///             tx.execute("INSERT INTO sent (id) VALUES ('msg_1')", [])?;
///             tx.commit(GuaranteeResult::<agent_tool_result::JsonObject>::committed_one())
///         })();
///         async move { done.unwrap_or_else(Done::from) }
///     })
///     .await;
/// assert_eq!(reply.kind(), ReplyKind::Ran);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(()) }
/// ```
pub struct SqliteTransaction<'c> {
    /// Held exclusively (not as a `rusqlite::Transaction`, which shares it), so that a
    /// transaction held across an `.await` leaves the future `Send`.
    connection: &'c mut Connection,
    lease: Lease,
    finished: bool,
}

impl std::fmt::Debug for SqliteTransaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTransaction")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl From<rusqlite::Error> for TransactionError<SqliteError> {
    /// A write of the tool's that failed, before the commit: nothing was written.
    fn from(err: rusqlite::Error) -> Self {
        TransactionError::Failed(SqliteError::Sqlite(err))
    }
}

impl<'c> SqliteTransaction<'c> {
    /// Begins an immediate transaction on `connection` (a connection to the ledger's file)
    /// and checks that `lease` holds its key.
    ///
    /// # Errors
    ///
    /// [`TransactionError::Fenced`] when the lease no longer holds its key (nothing is
    /// written); [`TransactionError::Failed`] when SQLite fails.
    pub fn begin(
        connection: &'c mut Connection,
        lease: &Lease,
    ) -> Result<Self, TransactionError<SqliteError>> {
        connection.execute_batch("BEGIN IMMEDIATE")?;
        let transaction = SqliteTransaction {
            connection,
            lease: lease.clone(),
            finished: false,
        };
        let held = if lease.key_to_begin().is_some() {
            // A key not begun yet: found, it is another call's.
            !transaction
                .connection
                .prepare_cached(KEY_BEGUN)?
                .exists(params![lease.scope().as_str(), lease.key().as_str()])?
        } else {
            transaction
                .connection
                .prepare_cached(FENCE_CHECK)?
                .exists(params![
                    lease.scope().as_str(),
                    lease.key().as_str(),
                    lease.fence().as_i64()
                ])?
        };
        if !held {
            return Err(TransactionError::Fenced);
        }
        Ok(transaction)
    }

    /// Records `answer` with the key and commits: the tool's writes and the answer together.
    /// What it returns is what the tool answers the sequence.
    ///
    /// # Errors
    ///
    /// [`TransactionError::Failed`] when the answer does not serialize to an object, or
    /// SQLite fails before the commit (nothing was written); [`TransactionError::Unsure`]
    /// when the commit itself fails.
    pub fn commit<F: serde::Serialize>(
        self,
        answer: impl Into<Answer<F>>,
    ) -> Result<Done<F>, TransactionError<SqliteError>> {
        let stored = StoredAnswer::of(&answer.into())
            .map_err(|err| TransactionError::Failed(SqliteError::Answer(err)))?;
        let (scope, key) = (self.lease.scope().as_str(), self.lease.key().as_str());
        let recorded = match self.lease.key_to_begin() {
            Some(to_begin) => {
                let fence: i64 = self
                    .connection
                    .prepare_cached(NEXT_FENCE)?
                    .query_row([], |row| row.get(0))?;
                self.connection
                    .prepare_cached(BEGIN_AND_RECORD)?
                    .execute(params![
                        scope,
                        key,
                        fence,
                        to_begin.fingerprint.to_hex(),
                        to_begin.context,
                        stored.is_refusal(),
                        stored.json()
                    ])?
            }
            None => record(self.connection, RECORD, &self.lease, &stored)?,
        };
        if recorded != 1 {
            return Err(TransactionError::Fenced);
        }
        self.finish(stored)
    }

    /// Commits, the answer `stored` recorded.
    fn finish<F>(mut self, stored: StoredAnswer) -> Result<Done<F>, TransactionError<SqliteError>> {
        self.finished = true;
        if let Err(err) = self.connection.execute_batch("COMMIT") {
            // SQLite keeps the transaction open after a failed COMMIT (a busy reader, say):
            // end it, so the connection is usable again.
            let _ = self.connection.execute_batch("ROLLBACK");
            return Err(TransactionError::Unsure(SqliteError::Sqlite(err)));
        }
        Ok(Done::Recorded(stored))
    }

    /// The tool's one write, `statement` with `params`, and `answer` recorded under `lease`,
    /// in one transaction on `connection` with no check of its own before them: the record
    /// checks that the lease still holds its key (and has not passed) as it writes the
    /// answer, and the effect follows it; so the file's write lock is held for the two
    /// writes and the commit alone. For a call whose key is begun in its transaction
    /// ([`Call::with_effect_in_ledger`]), it is [`SqliteTransaction::begin`] and
    /// [`SqliteTransaction::commit_with`].
    ///
    /// [`Call::with_effect_in_ledger`]: crate::replay::Call::with_effect_in_ledger
    ///
    /// # Errors
    ///
    /// As [`SqliteTransaction::commit_with`]: [`TransactionError::Fenced`] when the lease no
    /// longer holds its key, [`TransactionError::Failed`] when the answer does not serialize
    /// or a write fails (nothing was written), [`TransactionError::Unsure`] when the commit
    /// fails.
    pub fn commit_one<F: serde::Serialize>(
        connection: &'c mut Connection,
        lease: &Lease,
        statement: &str,
        params: impl rusqlite::Params,
        answer: impl Into<Answer<F>>,
    ) -> Result<Done<F>, TransactionError<SqliteError>> {
        if lease.key_to_begin().is_some() {
            return SqliteTransaction::begin(connection, lease)?
                .commit_with(statement, params, answer);
        }
        let stored = StoredAnswer::of(&answer.into())
            .map_err(|err| TransactionError::Failed(SqliteError::Answer(err)))?;
        connection.execute_batch("BEGIN IMMEDIATE")?;
        let transaction = SqliteTransaction {
            connection,
            lease: lease.clone(),
            finished: false,
        };
        if record(transaction.connection, COMPLETE, lease, &stored)? != 1 {
            return Err(TransactionError::Fenced);
        }
        transaction
            .connection
            .prepare_cached(statement)?
            .execute(params)?;
        transaction.finish(stored)
    }
}

impl SqliteTransaction<'_> {
    /// [`SqliteTransaction::commit`] after the tool's last write, `statement` with `params`
    /// (what `PostgresTransaction::commit_with` makes one statement with the record; here, a
    /// local step before it).
    ///
    /// # Errors
    ///
    /// As [`SqliteTransaction::commit`]; a write that fails is
    /// [`TransactionError::Failed`] (nothing was written).
    pub fn commit_with<F: serde::Serialize>(
        self,
        statement: &str,
        params: impl rusqlite::Params,
        answer: impl Into<Answer<F>>,
    ) -> Result<Done<F>, TransactionError<SqliteError>> {
        self.connection.prepare_cached(statement)?.execute(params)?;
        self.commit(answer)
    }
}

impl std::ops::Deref for SqliteTransaction<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.connection
    }
}

impl Drop for SqliteTransaction<'_> {
    /// Rolls back a transaction that was not committed.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }
}
