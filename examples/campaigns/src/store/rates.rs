//! Each account's rate limit, counted in the database every process shares: the generic cell
//! rate algorithm on the account's row, a batch of calls at a time. One statement takes up to
//! so many of the account's calls at once (and hands back, in the same statement, those a
//! process took and did not use), so that a process admits its next calls from what it took
//! without touching the row ([`crate::limits`] decides how many to take). Its commit does not
//! wait for a flush ([`crate::db::Conn::query_unflushed`]): the account's next count takes the
//! row as soon as this one is made, and the call's own commit makes the count durable with it.
//!
//! The limit a count goes by is the account's in `rate_settings` when an operator set one
//! while the service runs, else the process's own: a changed limit reaches every process at
//! its next count. Calls counted under one limit count under the next as whole calls, so a
//! lowered limit admits nothing until what was already admitted fits under it (a window at
//! most: calls beyond the new limit are not carried further). Calls a process hands back are
//! given back only under the limit they were taken by: once the count has moved to another
//! (and may have dropped what lay beyond a window), they are kept, which admits less for a
//! while and never more.

use std::sync::LazyLock;
use std::time::Duration;

use crate::db::error::DbError;

use super::Store;

/// The count, on the account's row (`r`) and the statement's own values (`s`: the database's
/// clock in microseconds, the limit and the microseconds one call takes to be restored). `$1`
/// is the account, `$2` the process's limit (calls per window), `$3` the window in
/// microseconds, `$4` how many calls to take, `$5` the microseconds of calls handed back and
/// `$6` the microseconds one of them took to be restored when it was taken (given back only
/// if the row still counts by it).
/// Granted: as many as `$4` of the calls the quota has room for now; a count that grants none
/// changes nothing but the calls handed back.
///
/// The server parses and plans it at every count, so each step is written once: `GREATEST`
/// and `LEAST` where a `CASE` would repeat its operand, and `s` computed once (its `LIMIT 1`,
/// a no-op on its one row, keeps PostgreSQL from copying its expressions, the limit's
/// sub-select with them, into every place that names them). Written with nested `CASE`s, the
/// statement was 6.5 kB and planned 73 sub-selects, 3.7 ms of the server's time a count in the
/// bench; now it is 1.5 kB with two, about 0.15 ms.
static TAKE: LazyLock<String> = LazyLock::new(|| {
    // How far ahead of now the account's quota is whole again, in microseconds of the limit
    // it was counted by, once the handed-back calls are given back.
    let back = "CASE WHEN r.period_us = $6 THEN $5 ELSE 0 END";
    let ahead = format!("GREATEST(r.tat_us - {back} - s.now_us, 0)");
    // The same under the limit counted by now: each call begun, a whole one of the new limit,
    // and never more than a window ahead (a lowered limit refuses calls for a window at most).
    let converted = format!(
        "LEAST(CASE WHEN r.period_us = s.period THEN {ahead} \
         ELSE ({ahead} + r.period_us - 1) / r.period_us * s.period END, $3)"
    );
    let granted = format!("LEAST(($3 - {converted}) / s.period, $4)");
    format!(
        "UPDATE rate_counts AS r SET granted = {granted},
             tat_us = s.now_us + {converted} + {granted} * s.period,
             checked_us = s.now_us, calls = s.limit_calls, period_us = s.period
         FROM (SELECT n.now_us, c.limit_calls, GREATEST($3 / c.limit_calls, 1) AS period
               FROM (SELECT NOW_MS * 1000 AS now_us) AS n,
                    (SELECT COALESCE((SELECT calls FROM rate_settings WHERE account = $1), $2)
                        AS limit_calls) AS c
               LIMIT 1) AS s
         WHERE r.account = $1
         RETURNING tat_us, checked_us, granted, calls, period_us"
    )
});

/// The account's row before its first count: its quota whole.
const FIRST: &str = "INSERT INTO rate_counts (account, tat_us, checked_us, granted, calls, period_us) \
                     VALUES ($1, 0, 0, 0, $2, 1) ON CONFLICT (account) DO NOTHING";

/// Calls a process took and did not use, handed back with its next count: their restoring
/// time, and how long one of them took to be restored when they were taken (the limit they
/// were counted by).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Returned {
    /// The restoring time of them all.
    pub time: Duration,
    /// One's restoring time when they were taken.
    pub period: Duration,
}

impl Returned {
    /// These and `calls` more taken with a restoring time of `period` each. Calls taken by
    /// another limit than these are dropped (kept counted: less admitted, never more).
    #[must_use]
    pub fn and(self, calls: u32, period: Duration) -> Returned {
        let earlier = if self.period == period {
            self.time
        } else {
            Duration::ZERO
        };
        Returned {
            time: earlier + period * calls,
            period,
        }
    }
}

/// What one count came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// Calls granted (none: over the limit).
    pub granted: u32,
    /// The limit counted by: calls per window (the run-time setting's, or the process's).
    pub calls: u64,
    /// How long one call takes to be restored under it.
    pub period: Duration,
    /// Calls the quota has room for after this count.
    pub room: u64,
    /// When the quota is whole again.
    pub reset: Duration,
    /// When one call has room again (zero when this count granted some).
    pub wait: Duration,
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

fn duration(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

impl Store {
    /// Takes up to `want` calls of `account`'s, which may make `calls` per `window` unless
    /// the account's run-time setting says otherwise, wherever its other calls were counted;
    /// `returned` are calls this process took before and did not use (they go back in the
    /// same statement, if the count still goes by the limit they were taken by).
    pub async fn take_calls(
        &self,
        account: &str,
        calls: u32,
        window: Duration,
        want: u32,
        returned: Returned,
    ) -> Result<Taken, DbError> {
        let window_us = micros(window).max(1);
        let args = [
            account.into(),
            i64::from(calls.max(1)).into(),
            window_us.into(),
            i64::from(want.max(1)).into(),
            micros(returned.time).into(),
            micros(returned.period).into(),
        ];
        let mut conn = self.writer().await?;
        let mut rows = conn.query_unflushed(&TAKE, &args).await?;
        if rows.is_empty() {
            // The account's first count anywhere: its row, then the count.
            conn.execute(FIRST, &args[..2]).await?;
            rows = conn.query_unflushed(&TAKE, &args).await?;
        }
        let row = rows.first().ok_or(DbError::NoRow("rate_counts"))?;
        let (tat, now, granted) = (row.int(0), row.int(1), row.int(2));
        let (calls, period) = (row.int(3), row.int(4).max(1));
        let ahead = (tat - now).max(0);
        Ok(Taken {
            granted: u32::try_from(granted).unwrap_or(0),
            calls: u64::try_from(calls).unwrap_or(1),
            period: duration(period),
            room: u64::try_from((window_us - ahead) / period).unwrap_or(0),
            reset: duration(ahead),
            wait: if granted > 0 {
                Duration::ZERO
            } else {
                duration(ahead + period - window_us)
            },
        })
    }
}
