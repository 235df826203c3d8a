//! [`PostgresTransaction`]: a tool's effect and its answer in one transaction on the ledger's
//! own database, under the call's lease.

use std::future::Future as _;

use tokio_postgres::Client;

use super::super::done::Done;
use super::super::lease::Lease;
use super::super::ledger::TransactionError;
use super::super::stored::StoredAnswer;
use super::PostgresError;
use super::settings::TransactionSettings;
use crate::guarantee::Answer;

/// A statement's parameter, with its type.
type Param<'a> = (
    &'a (dyn tokio_postgres::types::ToSql + Sync),
    tokio_postgres::types::Type,
);

/// Whether the lease `($1, $2, $3)` holds its key, locking the key's row until the
/// transaction ends: what a fenced transaction checks first. A process that would take the
/// key over waits for the lock, so it finds the transaction's writes committed or never made.
const FENCE_CHECK: &str = concat!(
    "SELECT 1 FROM atr_idempotency WHERE ",
    held!(),
    " FOR UPDATE"
);

/// The statement that records a call's answer last in the transaction of its effect (its
/// COMMIT sent right behind it), or as a transaction of its own (`alone`), its parameters
/// numbered from `$first`: for a key not begun yet (`begins_key`), the key inserted with its
/// answer (scope, key, fingerprint, context, refused, answer); else the answer recorded under
/// the lease (scope, key, fence, refused, answer) by the ledger's function `atr_record_v1`,
/// whose update's plan each server session keeps. In a transaction, the lease's key row has
/// been locked since the transaction's fence check, so it is still the lease's whatever the
/// clock says now; alone, with no check before it, the record checks that the lease has not
/// passed as well. A key not begun yet waits, on its unique entry, for any other call that
/// began it meanwhile. `effect`, the tool's own last write, runs in the same statement. Should
/// nothing be recorded (the key is another's), the statement fails (a division by the zero
/// rows recorded), which aborts the transaction, so the effect rolls back instead of
/// committing without its answer.
fn recording(begins_key: bool, first: usize, effect: Option<&str>, alone: bool) -> String {
    let n = |i: usize| first + i;
    let effect = effect.map_or(String::new(), |effect| format!("atr_effect AS ({effect})"));
    if begins_key {
        let key = format!(
            "atr_key AS (INSERT INTO atr_idempotency (scope, key, fingerprint, context, fence, \
             completed_at, refused, answer) VALUES (${}, ${}, ${}, ${}, 0, clock_timestamp(), \
             ${}, ${}) ON CONFLICT (scope, key) DO NOTHING RETURNING 1)",
            n(0),
            n(1),
            n(2),
            n(3),
            n(4),
            n(5)
        );
        let effect = if effect.is_empty() {
            effect
        } else {
            format!(", {effect}")
        };
        return format!("WITH {key}{effect} SELECT 1 / count(*)::int FROM atr_key");
    }
    let record = format!(
        "SELECT 1 / atr_record_v1(${}, ${}, ${}, ${}, ${}, false, {alone})",
        n(0),
        n(1),
        n(2),
        n(3),
        n(4)
    );
    if effect.is_empty() {
        record
    } else {
        format!("WITH {effect} {record}")
    }
}

/// Whether the key `($1, $2)` is begun: a transaction that would begin it finds it is
/// another call's.
const KEY_BEGUN: &str = "SELECT 1 FROM atr_idempotency WHERE scope = $1 AND key = $2";

/// What a transaction that begins its key itself (its effect in the ledger) sends as it begins, in
/// the same message as its `BEGIN`: a transaction-scoped advisory lock on the key (seen by
/// every session at once, and kept by a pooler in transaction mode), so that a second such
/// transaction for the key while this one is open is refused as in flight. The lock's number
/// is [`advisory_lock`] of the key, written as a literal (a number this process computed, so
/// nothing of the caller's reaches the statement's text). Whether the key was begun already
/// is found at the commit, whose insert then fails and rolls the effect back.
fn begin_with_key(begin: &str, scope: &str, key: &str) -> String {
    format!(
        "{begin}; SELECT pg_try_advisory_xact_lock({})",
        advisory_lock(scope, key)
    )
}

/// The advisory lock's number for the key `key` in `scope`: 64 bits of a SHA-256 over both,
/// the same in every process.
fn advisory_lock(scope: &str, key: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(b"atr-key-lock");
    for part in [scope, key] {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(head)
}

/// A transaction on the ledger's own database under a call's lease: the tool's writes and
/// its answer commit together, or neither does. [`PostgresTransaction::begin`] opens the
/// transaction and checks that the lease still holds its key, locking the key's row so that
/// no other process takes the key over until the transaction ends (one round trip: the check
/// goes right behind the `BEGIN`); the tool makes its writes through it (it dereferences to
/// the [`tokio_postgres::Client`](Client), whose statements run inside the transaction);
/// [`PostgresTransaction::commit`] records the tool's typed answer with the key and commits
/// (one round trip again), and hands back what the tool answers the sequence
/// ([`Done::Recorded`]). Dropped without a commit, it rolls back. A tool whose effect is one
/// write makes it and records its answer in one statement, with no transaction to open:
/// [`PostgresTransaction::commit_one`].
///
/// Take the connection from the ledger's pool ([`PostgresLedger::connections`](super::PostgresLedger::connections)) or any
/// connection to the same database. Nothing in it relies on session state or named prepared
/// statements: it works through a pooler in transaction mode.
///
/// ```no_run
/// use agent_tool_result::guarantee::GuaranteeResult;
/// use agent_tool_result::replay::{
///     Call, Done, IdempotencyKey, PostgresLedger, PostgresTransaction, Sequence,
/// };
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let sequence = Sequence::new(PostgresLedger::connect("postgres://atr@127.0.0.1/atr").await?);
/// let call = Call::of("send_sms", "acct_1", IdempotencyKey::new("k-1")?, &serde_json::json!({}));
/// let reply = sequence
///     .run_recording(call, async |lease| {
///         let send = async {
///             let mut client = sequence.ledger().connections().get().await.map_err(|err| {
///                 agent_tool_result::replay::TransactionError::Failed(err.into())
///             })?;
///             let tx = PostgresTransaction::begin(&mut client, &lease).await?;
///             tx.execute("INSERT INTO sent (id) VALUES ('msg_1')", &[]).await?;
///             tx.commit(GuaranteeResult::<agent_tool_result::JsonObject>::committed_one()).await
///         };
///         send.await.unwrap_or_else(Done::from)
///     })
///     .await;
/// # Ok(()) }
/// ```
pub struct PostgresTransaction<'c> {
    client: &'c Client,
    lease: Lease,
    finished: bool,
}

impl std::fmt::Debug for PostgresTransaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTransaction")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl From<tokio_postgres::Error> for TransactionError<PostgresError> {
    /// A write of the tool's that failed, before the commit: nothing was written.
    fn from(err: tokio_postgres::Error) -> Self {
        TransactionError::Failed(err.into())
    }
}

/// The parameters of the lease `($1, $2, $3)`, with their types.
fn lease_params(lease: &Lease) -> (String, String, i64) {
    (
        lease.scope().as_str().to_owned(),
        lease.key().as_str().to_owned(),
        lease.fence().as_i64(),
    )
}

impl<'c> PostgresTransaction<'c> {
    /// Begins a transaction on `client` (a connection to the ledger's database) and checks
    /// that `lease` holds its key.
    ///
    /// # Errors
    ///
    /// [`TransactionError::Fenced`] when the lease no longer holds its key, or, for a call
    /// whose effect is in the ledger, when its key is begun already (a replay: nothing is
    /// written, and the call's answer is the key's); [`TransactionError::InFlight`] when such
    /// a key's transaction is open elsewhere; [`TransactionError::Failed`] when the server
    /// fails. On each of these the connection is left usable: the transaction is rolled back.
    pub async fn begin(
        client: &'c mut Client,
        lease: &Lease,
    ) -> Result<Self, TransactionError<PostgresError>> {
        PostgresTransaction::begin_with(client, lease, &TransactionSettings::new()).await
    }

    /// [`PostgresTransaction::begin`] with `settings` for the transaction (its lock and idle
    /// timeouts, say), set in the message that begins it: no round trip more, and kept by a
    /// pooler in transaction mode.
    ///
    /// # Errors
    ///
    /// As [`PostgresTransaction::begin`].
    pub async fn begin_with(
        client: &'c mut Client,
        lease: &Lease,
        settings: &TransactionSettings,
    ) -> Result<Self, TransactionError<PostgresError>> {
        use tokio_postgres::types::Type;
        let client: &'c Client = client;
        let mut transaction = PostgresTransaction {
            client,
            lease: lease.clone(),
            finished: false,
        };
        let (scope, key, fence) = lease_params(lease);
        if lease.key_to_begin().is_some() {
            // Sent together, one round trip: the transaction and the key's lock, then whether
            // the key is begun already (a replay, most often), read inside the transaction.
            let params: [(&(dyn tokio_postgres::types::ToSql + Sync), Type); 2] =
                [(&scope, Type::TEXT), (&key, Type::TEXT)];
            let (answered, begun) = super::super::join::both(
                client.simple_query(&begin_with_key(settings.begin(), &scope, &key)),
                client.query_typed(KEY_BEGUN, &params),
            )
            .await;
            // Whether the BEGIN ran is not known: the drop rolls back, to be sure.
            let answered = answered.map_err(|err| TransactionError::Failed(err.into()))?;
            let locked = answered.iter().find_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0),
                _ => None,
            });
            if locked != Some("t") {
                return Err(TransactionError::InFlight);
            }
            // Begun already: the key is another call's, which the call's answer is. Found
            // here, before the tool's work, as SQLite's begin finds it; the commit's guard
            // still catches a key begun meanwhile.
            if !begun?.is_empty() {
                return Err(TransactionError::Fenced);
            }
            return Ok(transaction);
        }
        // Sent together: the check runs inside the transaction, one round trip for both.
        let params: [(&(dyn tokio_postgres::types::ToSql + Sync), Type); 3] = [
            (&scope, Type::TEXT),
            (&key, Type::TEXT),
            (&fence, Type::INT8),
        ];
        let check = client.query_typed(FENCE_CHECK, &params);
        let (began, held) =
            super::super::join::both(client.batch_execute(settings.begin()), check).await;
        if let Err(err) = began {
            // Nothing began: there is nothing to roll back.
            transaction.finished = true;
            return Err(err.into());
        }
        if held?.is_empty() {
            return Err(TransactionError::Fenced);
        }
        Ok(transaction)
    }

    /// Records `answer` with the key and commits: the tool's writes and the answer together.
    /// What it returns is what the tool answers the sequence.
    ///
    /// # Errors
    ///
    /// [`TransactionError::Failed`] when the answer does not serialize to an object, or the
    /// record fails (nothing was written); [`TransactionError::Fenced`] when the key is
    /// another's (nothing was written); [`TransactionError::Unsure`] when the commit fails,
    /// so whether it committed is not known.
    pub async fn commit<F: serde::Serialize>(
        self,
        answer: impl Into<Answer<F>>,
    ) -> Result<Done<F>, TransactionError<PostgresError>> {
        self.commit_with("", &[], answer).await
    }

    /// [`PostgresTransaction::commit`] with the tool's last write (an `INSERT`, `UPDATE` or
    /// `DELETE` with its parameters `$1`.. and their types, and no `WITH` of its own) made in
    /// the same statement as the record: one statement fewer for the server. An empty
    /// `statement` is no write.
    ///
    /// # Errors
    ///
    /// As [`PostgresTransaction::commit`]; a write that fails is
    /// [`TransactionError::Failed`] (nothing was written).
    pub async fn commit_with<F: serde::Serialize>(
        mut self,
        statement: &str,
        params: &[Param<'_>],
        answer: impl Into<Answer<F>>,
    ) -> Result<Done<F>, TransactionError<PostgresError>> {
        let record = Record::of(&self.lease, answer)?;
        let (sql, all) = record.statement(false, statement, params);
        // Sent together: a record that fails aborts the transaction, and the COMMIT behind
        // it then rolls back.
        let (recorded, committed) = super::super::join::both(
            self.client.query_typed(&sql, &all),
            self.client.batch_execute("COMMIT"),
        )
        .await;
        self.finished = true;
        match (recorded, committed) {
            (Ok(_), Ok(())) => Ok(Done::Recorded(record.stored)),
            (Err(err), _) => Err(record_failed(err)),
            (Ok(_), Err(err)) => Err(TransactionError::Unsure(err.into())),
        }
    }

    /// A transaction of one statement: the tool's one write (as for
    /// [`PostgresTransaction::commit_with`]; an empty `statement` is none) and `answer`,
    /// recorded under `lease` in a single statement with no `BEGIN`, which the server runs as a
    /// transaction of its own. Where [`PostgresTransaction::begin`] and a commit take two
    /// round trips and six statements, it takes one of each, and never leaves a transaction
    /// open on the connection. The lease's fence is checked by the statement's own update of
    /// the key's row, which takes the row's lock: a process that would take the key over
    /// waits for it, as it waits for a transaction's fence check.
    ///
    /// For a call whose key is begun in its transaction ([`Call::with_effect_in_ledger`]),
    /// where whether the key is begun must be known before anything is written, it is
    /// [`PostgresTransaction::begin`] and [`PostgresTransaction::commit_with`].
    ///
    /// [`Call::with_effect_in_ledger`]: crate::replay::Call::with_effect_in_ledger
    ///
    /// ```no_run
    /// use agent_tool_result::guarantee::{GuaranteeResult, Tally};
    /// use agent_tool_result::replay::{Lease, PostgresTransaction, TransactionError};
    /// use tokio_postgres::types::Type;
    ///
    /// # async fn record(client: &mut tokio_postgres::Client, lease: &Lease)
    /// # -> Result<(), TransactionError<agent_tool_result::replay::PostgresError>> {
    /// let id = "msg_1";
    /// let done = PostgresTransaction::commit_one(
    ///     client,
    ///     lease,
    ///     "INSERT INTO sent (id) VALUES ($1) ON CONFLICT (id) DO NOTHING",
    ///     &[(&id, Type::TEXT)],
    ///     GuaranteeResult::<agent_tool_result::JsonObject>::committed_with(
    ///         Tally::sent(1),
    ///         serde_json::Map::new(),
    ///     ),
    /// )
    /// .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`PostgresTransaction::commit_with`]: [`TransactionError::Fenced`] when the lease no
    /// longer holds its key (nothing was written), [`TransactionError::Failed`] when the
    /// statement fails (nothing was written), [`TransactionError::Unsure`] when the connection
    /// is lost with the statement sent; and, for a key begun in the transaction, as
    /// [`PostgresTransaction::begin`].
    pub async fn commit_one<F: serde::Serialize>(
        client: &'c mut Client,
        lease: &Lease,
        statement: &str,
        params: &[Param<'_>],
        answer: impl Into<Answer<F>>,
    ) -> Result<Done<F>, TransactionError<PostgresError>> {
        if lease.key_to_begin().is_some() {
            return PostgresTransaction::begin(client, lease)
                .await?
                .commit_with(statement, params, answer)
                .await;
        }
        let record = Record::of(lease, answer)?;
        let (sql, all) = record.statement(true, statement, params);
        match client.query_typed(&sql, &all).await {
            Ok(_) => Ok(Done::Recorded(record.stored)),
            Err(err) => Err(record_failed(err)),
        }
    }
}

/// The record statement's values: the lease's key and fence (or, for a key to begin, its
/// fingerprint and context) and the answer in its stored form.
struct Record {
    stored: StoredAnswer,
    scope: String,
    key: String,
    fence: i64,
    /// For a key to begin: its fingerprint (hex) and context.
    to_begin: Option<(String, String)>,
    refused: bool,
}

impl Record {
    /// The record of `answer` under `lease`.
    fn of<F: serde::Serialize>(
        lease: &Lease,
        answer: impl Into<Answer<F>>,
    ) -> Result<Record, TransactionError<PostgresError>> {
        let stored = StoredAnswer::of(&answer.into())
            .map_err(|err| TransactionError::Failed(PostgresError::answer(err)))?;
        let (scope, key, fence) = lease_params(lease);
        Ok(Record {
            refused: stored.is_refusal(),
            stored,
            scope,
            key,
            fence,
            to_begin: lease
                .key_to_begin()
                .map(|to_begin| (to_begin.fingerprint.to_hex(), to_begin.context.clone())),
        })
    }

    /// The record statement with the tool's last write `statement` (empty: none) and its
    /// `params`, which come first; `alone` when it is a transaction of its own.
    fn statement<'a>(
        &'a self,
        alone: bool,
        statement: &str,
        params: &[Param<'a>],
    ) -> (String, Vec<Param<'a>>) {
        use tokio_postgres::types::Type;
        let mut all = params.to_vec();
        all.extend([(&self.scope as _, Type::TEXT), (&self.key as _, Type::TEXT)]);
        match &self.to_begin {
            Some((print, context)) => {
                all.extend([(print as _, Type::TEXT), (context as _, Type::TEXT)]);
            }
            None => all.push((&self.fence as _, Type::INT8)),
        }
        all.extend([
            (&self.refused as _, Type::BOOL),
            (self.stored.json_string() as _, Type::TEXT),
        ]);
        let effect = (!statement.is_empty()).then_some(statement);
        let sql = recording(self.to_begin.is_some(), params.len() + 1, effect, alone);
        (sql, all)
    }
}

/// What a record statement's failure means: the record's guard (the key is another's) or
/// a failure reported by the server, either way with nothing written; a lost connection,
/// which leaves it unknown.
fn record_failed(err: tokio_postgres::Error) -> TransactionError<PostgresError> {
    if err.code() == Some(&tokio_postgres::error::SqlState::DIVISION_BY_ZERO) {
        TransactionError::Fenced
    } else if err.is_closed() {
        TransactionError::Unsure(err.into())
    } else {
        TransactionError::Failed(err.into())
    }
}

impl std::ops::Deref for PostgresTransaction<'_> {
    type Target = Client;

    fn deref(&self) -> &Self::Target {
        self.client
    }
}

impl Drop for PostgresTransaction<'_> {
    /// Rolls back a transaction that was not committed. The `ROLLBACK` is queued on the
    /// connection at once (the driver sends a statement when its future is first polled),
    /// ahead of anything the connection runs next.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let rollback = std::pin::pin!(self.client.batch_execute("ROLLBACK"));
        let _ = rollback.poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
    }
}
