//! [`Begins`]: the begins of one SQLite ledger, coalesced. A begin is a write transaction of
//! its own (a fence taken, the key's row inserted, a commit), as heavy as a small tool's
//! effect, and a turn on the connection the application shares. So the first begin queued
//! (the queue was empty) leads: it waits for the connection, and the begins queued behind it
//! meanwhile wait for their answers, not for the connection; once it has the connection, it
//! makes every begin queued in one transaction: one fence update for all of them and one
//! commit. A lone begin waits for no one. Each key is still taken on its own row under a
//! fence of its own, and gets the answer it would have got alone (two begins of one key in one
//! batch: the second finds the first's in flight). A batch that fails is made again one begin
//! at a time, so that each gets its own answer or error.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use tokio::sync::oneshot;

use super::super::fence::Fence;
use super::super::key::IdempotencyKey;
use super::super::lease::Lease;
use super::super::ledger::{Abandoned, Begin};
use super::super::scope::Scope;
use super::super::stored::StoredAnswer;
use super::error::{SqliteError, is_busy};
use super::schema::{BEGIN, LOOKUP, NEXT_FENCES, instant};

/// What a begin is answered.
type Answer = Result<Begin, SqliteError>;

/// One begin waiting for the connection.
struct Waiting {
    /// Which begin it is, to withdraw it.
    id: u64,
    scope: Scope,
    key: IdempotencyKey,
    fingerprint: String,
    context: String,
    /// When it was asked: its lease runs from then.
    asked: Instant,
    reply: oneshot::Sender<Answer>,
}

/// A begin in the queue. Dropped there (its caller stopped waiting), it is withdrawn: no
/// batch begins a key that nobody will run. One a batch took already is begun all the same,
/// and its key, unanswered, is recovered once its lease passes.
pub(super) struct Queued<'a> {
    begins: &'a Begins,
    id: u64,
    leads: bool,
}

impl Queued<'_> {
    /// Whether the begin was queued first: it takes the connection for every begin queued
    /// until then, and they wait on it.
    pub(super) fn leads(&self) -> bool {
        self.leads
    }

    /// Takes the begin out of the queue; whether it was still there (not yet taken by a
    /// batch, which answers it).
    pub(super) fn withdraw(&self) -> bool {
        self.begins.withdraw(self.id)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.begins.withdraw(self.id);
    }
}

/// The begins waiting for the ledger's connection.
#[derive(Default)]
pub(super) struct Begins {
    waiting: Mutex<(u64, Vec<Waiting>)>,
}

impl Begins {
    /// Queues a begin of `key` in `scope`; returns it in the queue (withdrawn if dropped
    /// there) and where its answer will come.
    pub(super) fn queue(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: String,
        context: &str,
    ) -> (Queued<'_>, oneshot::Receiver<Answer>) {
        let (reply, answer) = oneshot::channel();
        let mut waiting = self.lock();
        let leads = waiting.1.is_empty();
        waiting.0 += 1;
        let id = waiting.0;
        waiting.1.push(Waiting {
            id,
            scope: scope.clone(),
            key: key.clone(),
            fingerprint,
            context: context.to_owned(),
            asked: Instant::now(),
            reply,
        });
        (
            Queued {
                begins: self,
                id,
                leads,
            },
            answer,
        )
    }

    /// Takes the begin `id` out of the queue; whether it was still there (not yet taken by a
    /// batch, which answers it).
    fn withdraw(&self, id: u64) -> bool {
        let mut waiting = self.lock();
        let before = waiting.1.len();
        waiting.1.retain(|begin| begin.id != id);
        waiting.1.len() < before
    }

    /// Makes every waiting begin on `connection` (no transaction open on it), together, and
    /// answers each. When another process holds the file (`SQLITE_BUSY`) and SQLite may not
    /// wait here (`may_wait` false), the begins that could not be made go back to the queue
    /// and the error is returned, for the caller to make them where it may wait; where it
    /// may, each begin is answered, an error included, and none goes back.
    pub(super) fn begin_waiting(
        &self,
        connection: &mut Connection,
        lease_ms: i64,
        may_wait: bool,
    ) -> Result<(), rusqlite::Error> {
        let batch = std::mem::take(&mut self.lock().1);
        if batch.is_empty() {
            return Ok(());
        }
        if batch.len() > 1
            && let Ok(begun) = begin_together(connection, &batch, lease_ms)
        {
            for (waiting, begun) in batch.into_iter().zip(begun) {
                // A caller that stopped waiting once the batch took its begin: see `Queued`.
                let _ = waiting.reply.send(Ok(begun));
            }
            return Ok(());
        }
        let mut busy = None;
        for waiting in batch {
            match begin_together(connection, std::slice::from_ref(&waiting), lease_ms) {
                Err(err) if !may_wait && is_busy(&err) => {
                    self.lock().1.push(waiting);
                    busy = Some(err);
                }
                begun => {
                    let answer = begun
                        .map(|mut begun| begun.remove(0))
                        .map_err(SqliteError::Sqlite);
                    let _ = waiting.reply.send(answer);
                }
            }
        }
        busy.map_or(Ok(()), Err)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, Vec<Waiting>)> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Begins `batch` in one transaction, in its order: its fences taken at once, each key
/// inserted (or taken over, if abandoned), or else read.
fn begin_together(
    connection: &mut Connection,
    batch: &[Waiting],
    lease_ms: i64,
) -> Result<Vec<Begin>, rusqlite::Error> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let count = i64::try_from(batch.len()).unwrap_or(i64::MAX);
    let last: i64 = transaction
        .prepare_cached(NEXT_FENCES)?
        .query_row([count], |row| row.get(0))?;
    let begun = (last - count + 1..)
        .zip(batch)
        .map(|(fence, waiting)| begin_one(&transaction, waiting, fence, lease_ms))
        .collect::<Result<Vec<_>, _>>()?;
    transaction.commit()?;
    Ok(begun)
}

/// A key's row as a begin reads it when it could not take it: its fingerprint, whether its
/// answer is a refusal, the answer, its lease's expiry, and whether the answer is
/// provisional.
type Row = (String, Option<bool>, Option<String>, Option<i64>, bool);

/// Begins one key in `transaction` under `fence`.
fn begin_one(
    transaction: &Transaction<'_>,
    waiting: &Waiting,
    fence: i64,
    lease_ms: i64,
) -> Result<Begin, rusqlite::Error> {
    let (scope, key) = (waiting.scope.as_str(), waiting.key.as_str());
    loop {
        let claimed: Option<(i64, String, i64)> = transaction
            .prepare_cached(BEGIN)?
            .query_row(
                params![
                    scope,
                    key,
                    waiting.fingerprint,
                    waiting.context,
                    fence,
                    lease_ms
                ],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()?;
        if let Some((claims, context, until)) = claimed {
            let lease = Lease::new(
                waiting.scope.clone(),
                waiting.key.clone(),
                Fence::from_i64(fence),
                instant(until),
                waiting.asked,
                Duration::from_millis(u64::try_from(lease_ms).unwrap_or(0)),
            );
            return Ok(if claims == 0 {
                Begin::Fresh(lease)
            } else {
                Begin::Abandoned(Abandoned::new(lease, context))
            });
        }
        let row: Option<Row> = transaction
            .prepare_cached(LOOKUP)?
            .query_row(params![scope, key], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })
            .optional()?;
        return Ok(match row {
            // Not inserted, and not there: the insert again.
            None => continue,
            Some((stored_print, ..)) if stored_print != waiting.fingerprint => Begin::Mismatch,
            Some((_, Some(refused), Some(answer), _, provisional)) => Begin::Replay(
                StoredAnswer::from_stored(refused, answer).with_provisional(provisional),
            ),
            Some((_, _, _, until, _)) => Begin::InFlight {
                until: instant(until.unwrap_or(0)),
            },
        });
    }
}
