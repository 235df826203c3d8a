//! The service's idempotency ledger: the crate's SQLite or PostgreSQL ledger, in the same
//! database as the service's tables (on SQLite on the same connection, on PostgreSQL on the
//! same pool), behind the same [`Guard`] (a replaced SQLite file fails everything).

use std::sync::Arc;

use agent_tool_result::replay::PostgresError;
use agent_tool_result::replay::{
    Abandoned, Begin, Completion, Durability, Fingerprint, IdempotencyKey, Lease, Ledger,
    PostgresLedger, Scope, SqliteError, SqliteLedger, StoredAnswer,
};

use crate::db::Db;
use crate::db::error::DbError;
use crate::db::guard::Guard;
use crate::store::Store as Tables;

/// The ledger's store.
enum Store {
    Sqlite(SqliteLedger),
    Postgres(Box<PostgresLedger>),
}

/// A failure of the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The SQLite ledger.
    #[error(transparent)]
    Sqlite(#[from] SqliteError),
    /// The PostgreSQL ledger.
    #[error(transparent)]
    Postgres(#[from] PostgresError),
    /// The database (an injected fault, or a replaced file).
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The crate's ledger for `--db`, behind the service's guard.
pub struct ServiceLedger {
    store: Store,
    guard: Arc<Guard>,
}

impl ServiceLedger {
    /// Opens the ledger beside `tables`, holding keys for `lease`: on SQLite on the tables'
    /// one connection (the ledger's statements and the service's take turns on it), on
    /// PostgreSQL on connections from the tables' pool, each call bounded by `timeout`.
    pub async fn open(
        tables: &Tables,
        lease: std::time::Duration,
        timeout: std::time::Duration,
    ) -> Result<Self, LedgerError> {
        let store = match tables.db() {
            Db::Sqlite(connection) => Store::Sqlite(
                SqliteLedger::sharing(Arc::clone(connection))
                    .await?
                    .with_lease(lease),
            ),
            Db::Postgres { pool, .. } => Store::Postgres(Box::new(
                PostgresLedger::from_pool(pool.clone())
                    .await?
                    .with_lease(lease)
                    .with_timeout(timeout),
            )),
        };
        Ok(ServiceLedger {
            store,
            guard: tables.guard(),
        })
    }
}

impl ServiceLedger {
    /// Whether a commit the PostgreSQL server acknowledges waited for a synchronous standby
    /// (`None` on SQLite, which has no standby).
    pub async fn durability(&self) -> Result<Option<Durability>, LedgerError> {
        match &self.store {
            Store::Sqlite(_) => Ok(None),
            Store::Postgres(ledger) => Ok(Some(ledger.durability().await?)),
        }
    }
}

/// Runs `$call` on whichever store the ledger has.
macro_rules! on_store {
    ($self:ident, $ledger:ident => $call:expr) => {
        match &$self.store {
            Store::Sqlite($ledger) => Ok($call.await?),
            Store::Postgres($ledger) => Ok($call.await?),
        }
    };
}

impl Ledger for ServiceLedger {
    type Error = LedgerError;

    async fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Result<Begin, LedgerError> {
        self.guard.may_write()?;
        on_store!(self, ledger => ledger.begin(scope, key, fingerprint, context))
    }

    async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, LedgerError> {
        self.guard.may_write()?;
        on_store!(self, ledger => ledger.renew(lease))
    }

    async fn complete(
        &self,
        lease: &Lease,
        answer: &StoredAnswer,
    ) -> Result<Completion, LedgerError> {
        self.guard.may_write()?;
        on_store!(self, ledger => ledger.complete(lease, answer))
    }

    async fn release(&self, lease: &Lease) -> Result<Completion, LedgerError> {
        self.guard.may_write()?;
        on_store!(self, ledger => ledger.release(lease))
    }

    async fn resolve(
        &self,
        lease: &Lease,
        truth: Option<&StoredAnswer>,
    ) -> Result<Completion, LedgerError> {
        self.guard.may_write()?;
        on_store!(self, ledger => ledger.resolve(lease, truth))
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, LedgerError> {
        self.guard.check()?;
        on_store!(self, ledger => ledger.abandoned(limit))
    }

    async fn purge(&self, limit: usize) -> Result<usize, LedgerError> {
        self.guard.check()?;
        on_store!(self, ledger => ledger.purge(limit))
    }
}
