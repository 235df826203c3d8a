//! [`PostgresLedger`]: a ledger any number of processes on any number of machines share
//! (feature `postgres`), with `tokio-postgres` and no TLS stack, its connections from a
//! `deadpool-postgres` pool (its own, or the application's). Each transition is one
//! statement, one round trip, on the server's clock; `begin` needs a second only when the key
//! was not taken (a replay, a mismatch, a key in flight). Every call is bounded in time.

use std::time::{Duration, Instant, SystemTime};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{NoTls, Row};

use super::fence::Fence;
use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::lease::Lease;
use super::ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Ledger, store_settings,
};
use super::scope::Scope;
use super::stored::StoredAnswer;
use coalesce::{Begins, Claimed};
use connections::{Connections, PostgresError, Statement};
use durability::Durability;
use schema::{CURRENT, SCHEMA};

const LOOKUP: Statement = Statement {
    types: &[Type::TEXT, Type::TEXT],
    sql: "
    SELECT fingerprint, refused, answer, lease_until, provisional FROM atr_idempotency
    WHERE scope = $1 AND key = $2",
};

/// Whether the lease `($1, $2, $3)` (scope, key, fence) holds its key: the fence is the key's,
/// and the lease has not passed.
macro_rules! held {
    () => {
        "scope = $1 AND key = $2 AND fence = $3 AND completed_at IS NULL \
         AND lease_until > clock_timestamp()"
    };
}

const RENEW: Statement = Statement {
    types: &[Type::TEXT, Type::TEXT, Type::INT8, Type::INT8],
    sql: concat!(
        "UPDATE atr_idempotency SET lease_until = clock_timestamp() + $4::bigint * interval '1 millisecond' WHERE ",
        held!(),
        " RETURNING lease_until"
    ),
};

/// The answer `($4, $5, $6)` (refused, answer, provisional) recorded under the lease
/// `($1, $2, $3)`, which must hold (its lease not passed): one row when it was.
const COMPLETE: Statement = Statement {
    types: &[
        Type::TEXT,
        Type::TEXT,
        Type::INT8,
        Type::BOOL,
        Type::TEXT,
        Type::BOOL,
    ],
    sql: "SELECT 1 WHERE atr_record_v1($1, $2, $3, $4, $5, $6, true) = 1",
};

const RELEASE: Statement = Statement {
    types: &[Type::TEXT, Type::TEXT, Type::INT8],
    sql: concat!(
        "DELETE FROM atr_idempotency WHERE ",
        held!(),
        " RETURNING 1"
    ),
};

/// A provisional answer of a key taken over after the lease `($1, $2, $3)`, replaced by the
/// truth `($4, $5)`.
const RESOLVE: Statement = Statement {
    types: &[Type::TEXT, Type::TEXT, Type::INT8, Type::BOOL, Type::TEXT],
    sql: "
    UPDATE atr_idempotency SET completed_at = clock_timestamp(), refused = $4, answer = $5,
        provisional = false
    WHERE scope = $1 AND key = $2 AND fence > $3 AND provisional AND completed_at IS NOT NULL
    RETURNING 1",
};

/// A provisional answer of a key taken over after the lease `($1, $2, $3)`, forgotten: the
/// call did nothing.
const RESOLVE_RELEASE: Statement = Statement {
    types: &[Type::TEXT, Type::TEXT, Type::INT8],
    sql: "
    DELETE FROM atr_idempotency
    WHERE scope = $1 AND key = $2 AND fence > $3 AND provisional AND completed_at IS NOT NULL
    RETURNING 1",
};

const ABANDONED: Statement = Statement {
    types: &[Type::INT8, Type::INT8],
    sql: "
    UPDATE atr_idempotency AS t
    SET fence = nextval('atr_fence'),
        lease_until = clock_timestamp() + $1::bigint * interval '1 millisecond',
        claims = t.claims + 1
    FROM (SELECT scope, key FROM atr_idempotency
          WHERE completed_at IS NULL AND lease_until <= clock_timestamp()
          ORDER BY lease_until LIMIT $2 FOR UPDATE SKIP LOCKED) AS s
    WHERE t.scope = s.scope AND t.key = s.key
    RETURNING t.scope, t.key, t.context, t.lease_until, t.fence",
};

const PURGE: Statement = Statement {
    types: &[Type::INT8, Type::INT8],
    sql: "
    DELETE FROM atr_idempotency WHERE (scope, key) IN (
        SELECT scope, key FROM atr_idempotency
        WHERE completed_at < clock_timestamp() - $1::bigint * interval '1 millisecond'
        LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING 1",
};

/// The server's replication settings: `synchronous_commit`, `synchronous_standby_names`, and
/// how many standbys stream synchronously (NULL when the role may not see them).
const DURABILITY: Statement = Statement {
    types: &[],
    sql: "
    SELECT current_setting('synchronous_commit'), current_setting('synchronous_standby_names'),
        (SELECT CASE WHEN bool_and(sync_state IS NOT NULL) OR count(*) = 0
                     THEN count(*) FILTER (WHERE sync_state IN ('sync', 'quorum')) END
         FROM pg_stat_replication)",
};

mod coalesce;
pub(super) mod connections;
pub(super) mod durability;
mod schema;
pub(super) mod settings;
pub(super) mod transaction;

/// How long one call of the ledger may take by default, waiting for a connection included:
/// past it the call fails ([`PostgresError::is_timeout`]) rather than hang while the server is
/// down or cut off.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A ledger in a PostgreSQL database, shared by every process that serves the same
/// principals. Its connections come from a `deadpool-postgres` pool, which replaces a
/// connection the server dropped (a restart, a terminated backend) with a new one; the pool
/// can be the application's own ([`PostgresLedger::from_pool`]), so a service holds one.
/// Every call is bounded ([`PostgresLedger::with_timeout`]); a connection that did not answer
/// in time is taken out of the pool, never handed to the next call. It must be used inside a
/// Tokio runtime.
///
/// ```no_run
/// use agent_tool_result::replay::PostgresLedger;
/// use std::time::Duration;
///
/// # async fn run() -> Result<(), agent_tool_result::replay::PostgresError> {
/// let ledger = PostgresLedger::connect("postgres://atr@127.0.0.1:5432/atr")
///     .await?
///     .with_lease(Duration::from_secs(60))
///     .with_timeout(Duration::from_secs(2));
/// # Ok(()) }
/// ```
pub struct PostgresLedger {
    connections: Connections,
    retention: Duration,
    lease: Duration,
    /// Begins of this process, coalesced: started at the first begin, on its runtime.
    begins: std::sync::OnceLock<Begins>,
}

impl std::fmt::Debug for PostgresLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLedger")
            .field("retention", &self.retention)
            .field("lease", &self.lease)
            .field("timeout", &self.connections.timeout)
            .finish_non_exhaustive()
    }
}

impl PostgresLedger {
    /// What [`PostgresLedger::connect`] runs when the ledger's table, sequence, indexes or
    /// functions are missing or from an earlier release: one transaction, under an advisory
    /// lock, that makes what is missing and brings an earlier release's table up to date. Run
    /// it from a migration as the role that is to own the table, and grant the role the
    /// service connects as no more than reading and writing it:
    ///
    /// ```sql
    /// GRANT SELECT, INSERT, UPDATE, DELETE ON atr_idempotency TO app;
    /// GRANT USAGE ON SEQUENCE atr_fence TO app;
    /// ```
    ///
    /// (the functions run with the caller's rights, and every role may call them unless
    /// `EXECUTE` was revoked). A connect then writes nothing. Run it again after an upgrade
    /// that changes it; until then, the upgraded service's connect fails, saying why.
    pub const SCHEMA: &'static str = SCHEMA;

    /// Connects to the database at `url` (a `postgres://` URL or a `key=value` string) with a
    /// pool of its own ([`PostgresLedger::pool`], 4 connections), and creates the ledger's
    /// table and functions if they are missing.
    ///
    /// # Errors
    ///
    /// [`PostgresError`] when the URL does not parse, the server cannot be reached, or the
    /// table or functions cannot be created.
    pub async fn connect(url: &str) -> Result<Self, PostgresError> {
        PostgresLedger::from_pool(PostgresLedger::pool(url, 4, DEFAULT_TIMEOUT)?).await
    }

    /// A pool of `size` connections to `url`, as the ledger wants one and as an application
    /// can share with it: connections are checked for being closed before reuse and replaced
    /// when they are; waiting for a connection, opening one and checking one are each bounded
    /// by `timeout`; TCP keepalives find a peer that went away.
    ///
    /// # Errors
    ///
    /// [`PostgresError`] when the URL does not parse.
    pub fn pool(url: &str, size: usize, timeout: Duration) -> Result<Pool, PostgresError> {
        PostgresLedger::pool_for(url.parse()?, size, timeout)
    }

    /// [`PostgresLedger::pool`] for a driver configuration the application made (with session
    /// options of its own, say), its connect timeout and keepalives set as there.
    ///
    /// # Errors
    ///
    /// [`PostgresError`] when the pool cannot be built.
    pub fn pool_for(
        mut config: tokio_postgres::Config,
        size: usize,
        timeout: Duration,
    ) -> Result<Pool, PostgresError> {
        config
            .connect_timeout(timeout)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3);
        #[cfg(target_os = "linux")]
        config.tcp_user_timeout(timeout.max(Duration::from_secs(1)) * 2);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        Ok(Pool::builder(manager)
            .max_size(size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(timeout))
            .create_timeout(Some(timeout))
            .recycle_timeout(Some(timeout))
            .build()?)
    }

    /// The ledger on an application's own `pool` (one from [`PostgresLedger::pool`], or any
    /// `deadpool-postgres` pool on a Tokio runtime), creating its table and functions if they
    /// are missing (the table `atr_idempotency`, the sequence `atr_fence`, the functions
    /// `atr_begin_v1` and `atr_record_v1`, in the connection's current schema): a
    /// service then holds one pool for its tables and its ledger, and its own writes can check
    /// a lease's fence in the same transaction (see [`crate::replay`]).
    ///
    /// When they are there, as this release makes them, nothing is written: a role that may
    /// only read and write the table connects once the role that owns it has made it (with
    /// [`PostgresLedger::SCHEMA`], say).
    ///
    /// # Errors
    ///
    /// [`PostgresError`] when no connection can be had, or the table or functions are missing
    /// (or from an earlier release) and cannot be made: the role may not create in the
    /// schema, or does not own the table (its source says which).
    pub async fn from_pool(pool: Pool) -> Result<Self, PostgresError> {
        let ledger = PostgresLedger {
            connections: Connections {
                pool,
                timeout: DEFAULT_TIMEOUT,
            },
            retention: DEFAULT_RETENTION,
            lease: DEFAULT_LEASE,
            begins: std::sync::OnceLock::new(),
        };
        ledger
            .connections
            .bounded(async |client: &Object| {
                // Typed, so its parse, bind and run go as one (a pooler in transaction mode
                // may send the next message to another server session).
                let rows = client.query_typed(CURRENT, &[]).await?;
                if !rows.first().is_some_and(|row| row.get::<_, bool>(0)) {
                    client.batch_execute(SCHEMA).await?;
                }
                Ok(())
            })
            .await?;
        Ok(ledger)
    }

    store_settings!();

    /// The ledger with another bound on each call (5 seconds by default), waiting for a
    /// connection included.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.connections.timeout = timeout;
        self
    }

    /// The pool the ledger takes its connections from.
    #[must_use]
    pub fn connections(&self) -> &Pool {
        &self.connections.pool
    }

    /// Whether a commit the server acknowledges waited for a synchronous standby, as the
    /// server the pool reaches now (the primary, with `target_session_attrs=read-write`) is
    /// set: a failover then loses no call answered `committed`. Ask at start, and again from
    /// time to time (a failover may promote a server set otherwise). With the `metrics`
    /// feature, each answer sets the gauge `atr_ledger_synchronous_standby` (1 or 0).
    ///
    /// # Errors
    ///
    /// [`PostgresError`] when the server does not answer.
    pub async fn durability(&self) -> Result<Durability, PostgresError> {
        let (rows, _) = self.query(&DURABILITY, &[]).await?;
        let row = &rows[0];
        let streaming: Option<i64> = row.get(2);
        let durability = Durability::new(
            row.get(0),
            row.get(1),
            streaming.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        );
        #[cfg(feature = "metrics")]
        metrics::gauge!("atr_ledger_synchronous_standby").set(if durability.survives_failover() {
            1.0
        } else {
            0.0
        });
        Ok(durability)
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }

    fn lease(
        &self,
        scope: Scope,
        key: IdempotencyKey,
        row: &Row,
        at: usize,
        asked: Instant,
    ) -> Lease {
        Lease::new(
            scope,
            key,
            Fence::from_i64(row.get(at + 1)),
            row.get(at),
            asked,
            self.lease,
        )
    }

    async fn query(
        &self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<(Vec<Row>, bool), PostgresError> {
        self.connections.query(statement, params).await
    }

    /// Takes `key` if it is new or abandoned, as one row of a statement that takes every key
    /// this process begins meanwhile (see [`Begins`]).
    async fn claim(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        print: &str,
        context: &str,
    ) -> Result<Option<Claimed>, PostgresError> {
        let begins = self
            .begins
            .get_or_init(|| Begins::start(self.connections.clone(), self.lease_ms()));
        begins
            .claim(scope.as_str(), key.as_str(), print, context)
            .await
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
        loop {
            let asked = Instant::now();
            if let Some(claimed) = self.claim(scope, key, &print, context).await? {
                let lease = Lease::new(
                    scope.clone(),
                    key.clone(),
                    Fence::from_i64(claimed.fence),
                    claimed.until,
                    asked,
                    self.lease,
                );
                return Ok(if claimed.claims == 0 {
                    Begin::Fresh(lease)
                } else {
                    Begin::Abandoned(Abandoned::new(lease, claimed.context))
                });
            }
            let (rows, _) = self
                .query(&LOOKUP, &[&scope.as_str(), &key.as_str()])
                .await?;
            // Released since the insert: begin again.
            let Some(row) = rows.first() else { continue };
            let stored_print: String = row.get(0);
            let refused: Option<bool> = row.get(1);
            let answer: Option<String> = row.get(2);
            return Ok(if stored_print != print {
                Begin::Mismatch
            } else if let (Some(refused), Some(answer)) = (refused, answer) {
                Begin::Replay(
                    StoredAnswer::from_stored(refused, answer).with_provisional(row.get(4)),
                )
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
        let asked = Instant::now();
        let (rows, _) = self
            .query(
                &RENEW,
                &[
                    &lease.scope().as_str(),
                    &lease.key().as_str(),
                    &lease.fence().as_i64(),
                    &lease_ms,
                ],
            )
            .await?;
        Ok(rows
            .first()
            .map(|row| lease.renewed(row.get(0), asked, self.lease)))
    }

    async fn complete(
        &self,
        lease: &Lease,
        stored: &StoredAnswer,
    ) -> Result<Completion, PostgresError> {
        let refused = stored.is_refusal();
        let answer = stored.json();
        let (changed, resent) = self
            .query(
                &COMPLETE,
                &[
                    &lease.scope().as_str(),
                    &lease.key().as_str(),
                    &lease.fence().as_i64(),
                    &refused,
                    &answer,
                    &stored.is_provisional(),
                ],
            )
            .await?;
        if changed.len() == 1 {
            return Ok(Completion::Recorded);
        }
        if resent {
            // The first attempt may have landed before the connection was lost: then the key
            // holds this very answer, and it was recorded.
            let (rows, _) = self
                .query(&LOOKUP, &[&lease.scope().as_str(), &lease.key().as_str()])
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
        let (rows, resent) = self
            .query(
                &RELEASE,
                &[
                    &lease.scope().as_str(),
                    &lease.key().as_str(),
                    &lease.fence().as_i64(),
                ],
            )
            .await?;
        if rows.is_empty() && resent {
            // The first attempt may have landed: then the key is gone, or begun anew by
            // another request under a greater fence.
            let (rows, _) = self
                .query(&LOOKUP, &[&lease.scope().as_str(), &lease.key().as_str()])
                .await?;
            if rows.is_empty() {
                return Ok(Completion::Recorded);
            }
        }
        Ok(Completion::of_rows_changed(rows.len() as u64))
    }

    async fn resolve(
        &self,
        lease: &Lease,
        truth: Option<&StoredAnswer>,
    ) -> Result<Completion, PostgresError> {
        let (scope, key, fence) = (
            lease.scope().as_str(),
            lease.key().as_str(),
            lease.fence().as_i64(),
        );
        let (rows, resent) = match truth {
            Some(truth) => {
                let (refused, answer) = (truth.is_refusal(), truth.json());
                self.query(&RESOLVE, &[&scope, &key, &fence, &refused, &answer])
                    .await?
            }
            None => {
                self.query(&RESOLVE_RELEASE, &[&scope, &key, &fence])
                    .await?
            }
        };
        if rows.is_empty() && resent {
            // The first attempt may have landed: then the key holds this very truth, or is
            // gone.
            let (rows, _) = self.query(&LOOKUP, &[&scope, &key]).await?;
            let landed = match (rows.first(), truth) {
                (None, None) => true,
                (Some(row), Some(truth)) => {
                    !row.get::<_, bool>(4)
                        && row.get::<_, Option<String>>(2).as_deref() == Some(truth.json())
                }
                _ => false,
            };
            if landed {
                return Ok(Completion::Recorded);
            }
        }
        Ok(Completion::of_rows_changed(rows.len() as u64))
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, PostgresError> {
        let lease_ms = self.lease_ms();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let asked = Instant::now();
        let (rows, _) = self.query(&ABANDONED, &[&lease_ms, &limit]).await?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let key = IdempotencyKey::new(row.get::<_, String>(1)).ok()?;
                let scope = Scope::principal(row.get::<_, String>(0));
                let lease = self.lease(scope, key, row, 3, asked);
                Some(Abandoned::new(lease, row.get(2)))
            })
            .collect())
    }

    async fn purge(&self, limit: usize) -> Result<usize, PostgresError> {
        let retention = i64::try_from(self.retention.as_millis()).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (removed, _) = self.query(&PURGE, &[&retention, &limit]).await?;
        Ok(removed.len())
    }
}
