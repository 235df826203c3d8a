//! [`Begins`]: the begins of one process, coalesced. Every call begins its key with a write
//! and a commit on the server, as heavy as a small tool's own; under load, the keys that
//! calls begin while one statement is at the server go together in the next, one row each,
//! so the server takes a round trip and a commit for many of them. A lone call waits for no
//! one: its statement goes at once. Each key is still taken atomically on its own row, under
//! a fence of its own; a statement that fails fails every begin in it, which answers
//! `unavailable` and takes nothing.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::SystemTime;

use tokio::sync::{mpsc, oneshot};

use tokio_postgres::types::Type;

use super::connections::{Connections, PostgresError, Statement};

/// Keys new in their scope are inserted, abandoned ones (lease expired, no answer, the same
/// request) taken over, each under a fence of its own; anything else is left as it is, and
/// nothing is returned for it. The keys come as arrays, one row per key (distinct keys,
/// taken in one order by every process, so two statements never wait on each other). The
/// insert is the ledger's function `atr_begin_v1`, whose plan each server session keeps.
const BEGIN: Statement = Statement {
    types: &[
        Type::TEXT_ARRAY,
        Type::TEXT_ARRAY,
        Type::TEXT_ARRAY,
        Type::TEXT_ARRAY,
        Type::INT8,
    ],
    sql: "SELECT scope, key, claims, context, lease_until, fence \
          FROM atr_begin_v1($1, $2, $3, $4, $5)",
};

/// How many keys one statement takes at most.
const MOST: usize = 128;

/// A key taken: how many times it was taken before (0 for a new one), the context stored at
/// its first begin, its lease's expiry and its fence.
#[derive(Debug)]
pub(super) struct Claimed {
    pub(super) claims: i32,
    pub(super) context: String,
    pub(super) until: SystemTime,
    pub(super) fence: i64,
}

/// What a begin waits for: its key taken, not taken (`None`: a replay, a mismatch, a key in
/// flight), or the statement's error.
type Answer = Result<Option<Claimed>, Arc<PostgresError>>;

/// One begin waiting for the next statement.
struct Waiting {
    scope: String,
    key: String,
    print: String,
    context: String,
    reply: oneshot::Sender<Answer>,
}

/// The process's begins, sent to the server by one task, together while they queue.
pub(super) struct Begins {
    queue: mpsc::UnboundedSender<Waiting>,
    connections: Connections,
    lease_ms: i64,
}

impl Begins {
    /// Starts the task on the current Tokio runtime.
    pub(super) fn start(connections: Connections, lease_ms: i64) -> Self {
        let (queue, waiting) = mpsc::unbounded_channel();
        tokio::spawn(run(waiting, connections.clone(), lease_ms));
        Begins {
            queue,
            connections,
            lease_ms,
        }
    }

    /// Takes `key` in `scope` if it is new or abandoned, with the next statement.
    pub(super) async fn claim(
        &self,
        scope: &str,
        key: &str,
        print: &str,
        context: &str,
    ) -> Result<Option<Claimed>, PostgresError> {
        let (reply, answer) = oneshot::channel();
        let waiting = Waiting {
            scope: scope.to_owned(),
            key: key.to_owned(),
            print: print.to_owned(),
            context: context.to_owned(),
            reply,
        };
        if let Err(mpsc::error::SendError(waiting)) = self.queue.send(waiting) {
            // The task is gone (its runtime ended): this begin goes alone.
            let taken = take(&self.connections, self.lease_ms, vec![waiting]).await;
            return match taken {
                Ok(mut taken) => Ok(taken.pop().and_then(|(_, claimed)| claimed)),
                Err((_, err)) => Err(err),
            };
        }
        match answer.await {
            Ok(Ok(claimed)) => Ok(claimed),
            Ok(Err(shared)) => Err(PostgresError::shared(shared)),
            Err(_) => Err(PostgresError::stopped()),
        }
    }
}

/// The task: takes what queued, at most [`MOST`] distinct keys (a key begun twice meanwhile
/// waits for the next statement, which finds it taken), in one statement, and answers each.
async fn run(mut queue: mpsc::UnboundedReceiver<Waiting>, connections: Connections, lease_ms: i64) {
    let mut next: VecDeque<Waiting> = VecDeque::new();
    loop {
        let first = match next.pop_front() {
            Some(waiting) => waiting,
            None => match queue.recv().await {
                Some(waiting) => waiting,
                None => return,
            },
        };
        let mut keys = HashSet::from([(first.scope.clone(), first.key.clone())]);
        let mut batch = vec![first];
        let mut later = Vec::new();
        while batch.len() < MOST {
            let Some(waiting) = next.pop_front().or_else(|| queue.try_recv().ok()) else {
                break;
            };
            if keys.insert((waiting.scope.clone(), waiting.key.clone())) {
                batch.push(waiting);
            } else {
                later.push(waiting);
            }
        }
        next.extend(later);
        match take(&connections, lease_ms, batch).await {
            Ok(answered) => {
                for (reply, claimed) in answered {
                    let _ = reply.send(Ok(claimed));
                }
            }
            Err((replies, err)) => {
                let err = Arc::new(err);
                for reply in replies {
                    let _ = reply.send(Err(Arc::clone(&err)));
                }
            }
        }
    }
}

/// Sends `batch` as one statement: each begin's reply with what its key came to, or every
/// reply with the error.
async fn take(
    connections: &Connections,
    lease_ms: i64,
    batch: Vec<Waiting>,
) -> Result<
    Vec<(oneshot::Sender<Answer>, Option<Claimed>)>,
    (Vec<oneshot::Sender<Answer>>, PostgresError),
> {
    let mut columns: [Vec<&str>; 4] = Default::default();
    for waiting in &batch {
        columns[0].push(&waiting.scope);
        columns[1].push(&waiting.key);
        columns[2].push(&waiting.print);
        columns[3].push(&waiting.context);
    }
    let [scopes, keys, prints, contexts] = &columns;
    let rows = connections
        .query(&BEGIN, &[scopes, keys, prints, contexts, &lease_ms])
        .await;
    let rows = match rows {
        Ok((rows, _)) => rows,
        Err(err) => {
            drop(columns);
            return Err((batch.into_iter().map(|w| w.reply).collect(), err));
        }
    };
    let mut taken: HashMap<(String, String), Claimed> = rows
        .iter()
        .map(|row| {
            (
                (row.get(0), row.get(1)),
                Claimed {
                    claims: row.get(2),
                    context: row.get(3),
                    until: row.get(4),
                    fence: row.get(5),
                },
            )
        })
        .collect();
    drop(columns);
    Ok(batch
        .into_iter()
        .map(|waiting| {
            let claimed = taken.remove(&(waiting.scope, waiting.key));
            (waiting.reply, claimed)
        })
        .collect())
}
