//! The service's own tables, in the database it shares with the idempotency ledger (SQLite or
//! PostgreSQL, see [`crate::db`]): opted-out contacts, campaigns and their recipients, single
//! messages. The provider is an outside service ([`crate::provider`]).
//!
//! Every campaign and message belongs to the principal whose call created it; a lookup by
//! another principal finds nothing.
//!
//! A recipient is `sending` from the moment it is claimed until the provider's send is
//! recorded as `sent`. A claim carries a fence from the database (the recipient's claim
//! count, one more at every claim) and an expiry by the database's clock; the recipient is
//! marked sent only under its claim's current fence ([`Store::mark_sent`]). Every send of one
//! recipient of one campaign carries one effect key, which the provider takes once, so a
//! process paused or cut off past its claim, whose send may reach the provider late, sends
//! nobody twice. A process that stops leaves claims that expire; any live process then holds
//! their recipients again, due now ([`Store::reconcile`]), so nobody is dropped.
//!
//! A message and a campaign are created under the fence of the idempotency key of the call
//! that creates them, checked in the same transaction ([`Conn::effect`]): once another
//! process has taken the key over, the first call creates nothing, so whether the operation
//! took effect is a lookup by its id (each tool's recovery).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::db::error::DbError;
use crate::db::guard::Guard;
use crate::db::{Conn, Db, Target};

/// The tables, as `schema.sql` writes them.
const SCHEMA: &str = include_str!("schema.sql");

/// The service's tables. A clone shares the same connections.
#[derive(Clone)]
pub struct Store {
    db: Db,
    guard: Arc<Guard>,
    /// How long a claim holds.
    lease_ms: i64,
}

/// An instant the database wrote, in milliseconds since 1970.
pub fn instant(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The database's clock, in milliseconds.
async fn now(conn: &mut Conn<'_>) -> Result<i64, DbError> {
    Ok(conn.query("SELECT NOW_MS", &[]).await?[0].int(0))
}

impl Store {
    /// Opens (and creates, if need be) the tables at `target`; a PostgreSQL database gets a
    /// pool of `connections`, each statement bounded by `timeout`.
    pub async fn open(
        target: &Target,
        lease: Duration,
        connections: usize,
        timeout: Duration,
    ) -> Result<Self, DbError> {
        let db = Db::open(target, SCHEMA, connections, timeout).await?;
        // Once the file exists: it is the one to tell a replacement from.
        let guard = Arc::new(Guard::new(target));
        Ok(Store {
            db,
            guard,
            lease_ms: i64::try_from(lease.as_millis()).unwrap_or(i64::MAX),
        })
    }

    /// The checks every statement makes, shared with the ledger beside it.
    pub fn guard(&self) -> Arc<Guard> {
        Arc::clone(&self.guard)
    }

    /// The database, whose pool the ledger shares.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// A connection, once the file is checked.
    pub(crate) async fn conn(&self) -> Result<Conn<'_>, DbError> {
        self.guard.check()?;
        self.db.conn().await
    }

    /// A connection for a write of the service's own (a tool's effect, say).
    pub(crate) async fn writer(&self) -> Result<Conn<'_>, DbError> {
        self.guard.may_write()?;
        self.db.conn().await
    }

    /// Records that `phone` opted out of messages.
    pub async fn opt_out(&self, phone: &str) -> Result<(), DbError> {
        let sql = "INSERT INTO opt_outs (phone) VALUES ($1) ON CONFLICT DO NOTHING";
        self.writer().await?.execute(sql, &[phone.into()]).await?;
        Ok(())
    }

    /// Whether `phone` opted out.
    pub async fn is_opted_out(&self, phone: &str) -> Result<bool, DbError> {
        let sql = "SELECT 1 FROM opt_outs WHERE phone = $1";
        Ok(!self
            .conn()
            .await?
            .query(sql, &[phone.into()])
            .await?
            .is_empty())
    }
}

pub mod campaigns;
pub mod claims;
pub mod messages;
pub mod rates;
#[cfg(test)]
mod tests;
pub mod window;
