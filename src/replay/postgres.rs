//! [`PostgresLedger`]: a ledger any number of processes on any number of machines share
//! (feature `postgres`), with `tokio-postgres` and no TLS stack. Each transition is one
//! prepared statement, one round trip, on the server's clock; `begin` needs a second only when
//! the key was not taken (a replay, a mismatch, a key in flight).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Row, Statement};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Lease, Ledger, Scope,
    StoredAnswer, new_token, store_settings,
};

/// The table, created at connect if it is missing (under an advisory lock, so processes
/// starting together do not race to create it).
const SCHEMA: &str = "
    BEGIN;
    SELECT pg_advisory_xact_lock(7462020);
    CREATE TABLE IF NOT EXISTS atr_idempotency (
        scope text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        context text NOT NULL,
        claims integer NOT NULL DEFAULT 0,
        owner text,
        lease_until timestamptz,
        completed_at timestamptz,
        refused boolean,
        answer text,
        PRIMARY KEY (scope, key)
    );
    CREATE INDEX IF NOT EXISTS atr_idempotency_completed
        ON atr_idempotency (completed_at) WHERE completed_at IS NOT NULL;
    CREATE INDEX IF NOT EXISTS atr_idempotency_leased
        ON atr_idempotency (lease_until) WHERE completed_at IS NULL;
    COMMIT;";

/// A new key is inserted; an abandoned one (lease expired, no answer, the same request) is
/// taken over; anything else is left as it is, and nothing is returned.
const BEGIN: &str = "
    INSERT INTO atr_idempotency AS t (scope, key, fingerprint, context, owner, lease_until)
    VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6::bigint * interval '1 millisecond')
    ON CONFLICT (scope, key) DO UPDATE
        SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, claims = t.claims + 1
        WHERE t.completed_at IS NULL AND t.lease_until <= clock_timestamp()
            AND t.fingerprint = EXCLUDED.fingerprint
    RETURNING t.claims, t.context, t.lease_until";

const LOOKUP: &str = "
    SELECT fingerprint, refused, answer, lease_until FROM atr_idempotency
    WHERE scope = $1 AND key = $2";

const RENEW: &str = "
    UPDATE atr_idempotency SET lease_until = clock_timestamp() + $4::bigint * interval '1 millisecond'
    WHERE scope = $1 AND key = $2 AND owner = $3 AND completed_at IS NULL
    RETURNING lease_until";

const COMPLETE: &str = "
    UPDATE atr_idempotency SET completed_at = clock_timestamp(), refused = $4, answer = $5,
        owner = NULL, lease_until = NULL
    WHERE scope = $1 AND key = $2 AND owner = $3 AND completed_at IS NULL";

const RELEASE: &str = "
    DELETE FROM atr_idempotency
    WHERE scope = $1 AND key = $2 AND owner = $3 AND completed_at IS NULL";

const ABANDONED: &str = "
    UPDATE atr_idempotency AS t
    SET owner = $1, lease_until = clock_timestamp() + $2::bigint * interval '1 millisecond',
        claims = t.claims + 1
    FROM (SELECT scope, key FROM atr_idempotency
          WHERE completed_at IS NULL AND lease_until <= clock_timestamp()
          ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED) AS s
    WHERE t.scope = s.scope AND t.key = s.key
    RETURNING t.scope, t.key, t.context, t.lease_until";

const PURGE: &str = "
    DELETE FROM atr_idempotency WHERE (scope, key) IN (
        SELECT scope, key FROM atr_idempotency
        WHERE completed_at < clock_timestamp() - $1::bigint * interval '1 millisecond'
        LIMIT $2 FOR UPDATE SKIP LOCKED)";

/// Which of the ledger's two connections a statement goes on.
#[derive(Clone, Copy)]
enum Lane {
    Calls = 0,
    Upkeep = 1,
}

/// One connection and its prepared statements.
struct Connection {
    client: Client,
    begin: Statement,
    lookup: Statement,
    renew: Statement,
    complete: Statement,
    release: Statement,
    abandoned: Statement,
    purge: Statement,
}

/// A ledger in a PostgreSQL database, shared by every process that serves the same
/// principals. It keeps one connection for calls (their statements pipeline on it) and one
/// for `purge` and `abandoned`, and opens a new one when the server drops one; it must be
/// used inside a Tokio runtime, which drives the connections.
///
/// ```no_run
/// use agent_tool_result::replay::PostgresLedger;
/// use std::time::Duration;
///
/// # async fn run() -> Result<(), agent_tool_result::replay::PostgresError> {
/// let ledger = PostgresLedger::connect("postgres://atr@127.0.0.1:5432/atr")
///     .await?
///     .with_lease(Duration::from_secs(60));
/// # Ok(()) }
/// ```
pub struct PostgresLedger {
    config: tokio_postgres::Config,
    /// The connection calls use, and the one `purge` and `abandoned` use, so that a purge's
    /// batch never queues a call's statement behind it.
    connections: [Mutex<Option<Arc<Connection>>>; 2],
    retention: Duration,
    lease: Duration,
}

impl std::fmt::Debug for PostgresLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLedger")
            .field("retention", &self.retention)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// An error of the PostgreSQL ledger; the driver's error is its `source()`.
#[derive(Debug, thiserror::Error)]
#[error("the PostgreSQL ledger failed")]
pub struct PostgresError(#[source] tokio_postgres::Error);

impl PostgresError {
    /// Whether the connection to the server was lost (the server restarted, or ended this
    /// session): the call's outcome at the server is not known.
    #[must_use]
    pub fn is_connection_lost(&self) -> bool {
        self.0.is_closed()
    }
}

impl PostgresLedger {
    /// Connects to the database at `url` (a `postgres://` URL or a `key=value` string) and
    /// creates the ledger's table if it is missing.
    ///
    /// # Errors
    ///
    /// [`PostgresError`] when the URL does not parse, the server cannot be reached, or the
    /// table cannot be created.
    pub async fn connect(url: &str) -> Result<Self, PostgresError> {
        let config: tokio_postgres::Config = url.parse().map_err(PostgresError)?;
        let ledger = PostgresLedger {
            config,
            connections: [Mutex::new(None), Mutex::new(None)],
            retention: DEFAULT_RETENTION,
            lease: DEFAULT_LEASE,
        };
        let client = ledger.client().await?;
        client.batch_execute(SCHEMA).await.map_err(PostgresError)?;
        let connection = PostgresLedger::prepared(client).await?;
        *ledger.slot(Lane::Calls) = Some(connection);
        Ok(ledger)
    }

    store_settings!();

    fn slot(&self, lane: Lane) -> std::sync::MutexGuard<'_, Option<Arc<Connection>>> {
        self.connections[lane as usize]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    async fn client(&self) -> Result<Client, PostgresError> {
        let (client, connection) = self.config.connect(NoTls).await.map_err(PostgresError)?;
        tokio::spawn(async move {
            // The connection ends when the server drops it or the client is dropped; the
            // next call opens another.
            let _ = connection.await;
        });
        Ok(client)
    }

    async fn prepared(client: Client) -> Result<Arc<Connection>, PostgresError> {
        let prepare = |sql: &'static str| client.prepare(sql);
        let statements = (
            prepare(BEGIN).await,
            prepare(LOOKUP).await,
            prepare(RENEW).await,
            prepare(COMPLETE).await,
            prepare(RELEASE).await,
            prepare(ABANDONED).await,
            prepare(PURGE).await,
        );
        let (Ok(begin), Ok(lookup), Ok(renew), Ok(complete), Ok(release), Ok(abandoned), Ok(purge)) =
            statements
        else {
            let failed = [
                statements.0.err(),
                statements.1.err(),
                statements.2.err(),
                statements.3.err(),
                statements.4.err(),
                statements.5.err(),
                statements.6.err(),
            ];
            let first = failed.into_iter().flatten().next();
            return Err(PostgresError(first.expect("one statement failed")));
        };
        Ok(Arc::new(Connection {
            client,
            begin,
            lookup,
            renew,
            complete,
            release,
            abandoned,
            purge,
        }))
    }

    /// The lane's connection, opened anew if the last one was lost (or, for upkeep, the
    /// first time it is needed).
    async fn connection(&self, lane: Lane) -> Result<Arc<Connection>, PostgresError> {
        let current = self.slot(lane).clone();
        if let Some(connection) = current
            && !connection.client.is_closed()
        {
            return Ok(connection);
        }
        let connection = PostgresLedger::prepared(self.client().await?).await?;
        *self.slot(lane) = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// Runs one statement, on a new connection once more if the server dropped the first:
    /// every statement is safe to send twice (a `begin` whose first insert did land finds its
    /// own lease and answers "in flight"; the others are guarded by the owner token).
    async fn query(
        &self,
        lane: Lane,
        statement: fn(&Connection) -> &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, PostgresError> {
        let connection = self.connection(lane).await?;
        match connection
            .client
            .query(statement(&connection), params)
            .await
        {
            Err(err) if err.is_closed() || connection.client.is_closed() => {
                let connection = self.connection(lane).await?;
                connection
                    .client
                    .query(statement(&connection), params)
                    .await
                    .map_err(PostgresError)
            }
            other => other.map_err(PostgresError),
        }
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }
}

impl Ledger for PostgresLedger {
    type Error = PostgresError;

    async fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Result<Begin, PostgresError> {
        let print = fingerprint.to_hex();
        let lease_ms = self.lease_ms();
        loop {
            let token = new_token();
            let claimed = self
                .query(
                    Lane::Calls,
                    |c| &c.begin,
                    &[
                        &scope.as_str(),
                        &key.as_str(),
                        &print,
                        &context,
                        &token,
                        &lease_ms,
                    ],
                )
                .await?;
            if let Some(row) = claimed.first() {
                let (claims, stored_context, until): (i32, String, SystemTime) =
                    (row.get(0), row.get(1), row.get(2));
                let lease = Lease::new(scope.clone(), key.clone(), token, until);
                return Ok(if claims == 0 {
                    Begin::Fresh(lease)
                } else {
                    Begin::Abandoned(Abandoned::new(lease, stored_context))
                });
            }
            let rows = self
                .query(
                    Lane::Calls,
                    |c| &c.lookup,
                    &[&scope.as_str(), &key.as_str()],
                )
                .await?;
            // Released since the insert: begin again.
            let Some(row) = rows.first() else { continue };
            let stored_print: String = row.get(0);
            let refused: Option<bool> = row.get(1);
            let answer: Option<String> = row.get(2);
            return Ok(if stored_print != print {
                Begin::Mismatch
            } else if let (Some(refused), Some(answer)) = (refused, answer) {
                Begin::Replay(StoredAnswer::from_stored(refused, answer))
            } else {
                Begin::InFlight {
                    until: row
                        .get::<_, Option<SystemTime>>(3)
                        .unwrap_or_else(SystemTime::now),
                }
            });
        }
    }

    async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, PostgresError> {
        let lease_ms = self.lease_ms();
        let rows = self
            .query(
                Lane::Calls,
                |c| &c.renew,
                &[
                    &lease.scope().as_str(),
                    &lease.key().as_str(),
                    &lease.token(),
                    &lease_ms,
                ],
            )
            .await?;
        Ok(rows.first().map(|row| lease.renewed(row.get(0))))
    }

    async fn complete(
        &self,
        lease: &Lease,
        stored: &StoredAnswer,
    ) -> Result<Completion, PostgresError> {
        let refused = stored.is_refusal();
        let answer = stored.json();
        let connection = self.connection(Lane::Calls).await?;
        let params: [&(dyn ToSql + Sync); 5] = [
            &lease.scope().as_str(),
            &lease.key().as_str(),
            &lease.token(),
            &refused,
            &answer,
        ];
        let (changed, resent) = match connection
            .client
            .execute(&connection.complete, &params)
            .await
        {
            Err(err) if err.is_closed() || connection.client.is_closed() => {
                let connection = self.connection(Lane::Calls).await?;
                let changed = connection
                    .client
                    .execute(&connection.complete, &params)
                    .await;
                (changed, true)
            }
            other => (other, false),
        };
        let changed = changed.map_err(PostgresError)?;
        if changed == 1 {
            return Ok(Completion::Recorded);
        }
        if resent {
            // The first attempt may have landed before the connection was lost: then the key
            // holds this very answer, and it was recorded.
            let rows = self
                .query(
                    Lane::Calls,
                    |c| &c.lookup,
                    &[&lease.scope().as_str(), &lease.key().as_str()],
                )
                .await?;
            if let Some(row) = rows.first()
                && row.get::<_, Option<bool>>(1) == Some(refused)
                && row.get::<_, Option<String>>(2).as_deref() == Some(answer)
            {
                return Ok(Completion::Recorded);
            }
        }
        Ok(Completion::LeaseLost)
    }

    async fn release(&self, lease: &Lease) -> Result<Completion, PostgresError> {
        let connection = self.connection(Lane::Calls).await?;
        let params: [&(dyn ToSql + Sync); 3] = [
            &lease.scope().as_str(),
            &lease.key().as_str(),
            &lease.token(),
        ];
        let changed = connection
            .client
            .execute(&connection.release, &params)
            .await
            .map_err(PostgresError)?;
        Ok(Completion::of_rows_changed(changed))
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, PostgresError> {
        let token = new_token();
        let lease_ms = self.lease_ms();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .query(Lane::Upkeep, |c| &c.abandoned, &[&token, &lease_ms, &limit])
            .await?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let key = IdempotencyKey::new(row.get::<_, String>(1)).ok()?;
                let scope = Scope::principal(row.get::<_, String>(0));
                let lease = Lease::new(scope, key, token.clone(), row.get(3));
                Some(Abandoned::new(lease, row.get(2)))
            })
            .collect())
    }

    async fn purge(&self, limit: usize) -> Result<usize, PostgresError> {
        let retention = i64::try_from(self.retention.as_millis()).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let connection = self.connection(Lane::Upkeep).await?;
        let removed = connection
            .client
            .execute(&connection.purge, &[&retention, &limit])
            .await
            .map_err(PostgresError)?;
        Ok(usize::try_from(removed).unwrap_or(usize::MAX))
    }
}
