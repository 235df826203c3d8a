//! Each account's rate limit, counted in the database every process shares: one statement a
//! call, which takes the account's row (so that two processes counting at once count one
//! after the other) and answers whether the call is admitted. Its commit does not wait for a
//! flush ([`crate::db::Conn::query_unflushed`]): the account's next call takes the row as
//! soon as the count is made, and the call's own commit makes the count durable with it.

use std::time::Duration;

use crate::db::error::DbError;

use super::Store;

/// Counts a call: the generic cell rate algorithm on the account's row, by the database's
/// clock (microseconds). `$2` is how long one call takes to be restored (the window over
/// the calls it allows), `$3` the window: a call is admitted when, counted, the account's
/// quota is whole again no later than a window from now; a refused call changes nothing.
const COUNT: &str = "
    INSERT INTO rate_limits AS r (account, tat_us, checked_us, admitted)
    SELECT $1, c.now + $2, c.now, CASE WHEN $2 <= $3 THEN 1 ELSE 0 END
    FROM (SELECT NOW_MS * 1000 AS now) AS c WHERE true
    ON CONFLICT (account) DO UPDATE SET
        admitted = CASE WHEN (CASE WHEN r.tat_us > excluded.checked_us THEN r.tat_us
                                   ELSE excluded.checked_us END) + $2 - excluded.checked_us <= $3
                   THEN 1 ELSE 0 END,
        tat_us = CASE WHEN (CASE WHEN r.tat_us > excluded.checked_us THEN r.tat_us
                                 ELSE excluded.checked_us END) + $2 - excluded.checked_us <= $3
                 THEN (CASE WHEN r.tat_us > excluded.checked_us THEN r.tat_us
                            ELSE excluded.checked_us END) + $2
                 ELSE r.tat_us END,
        checked_us = excluded.checked_us
    RETURNING tat_us, checked_us, admitted";

/// What counting a call came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// Admitted: `remaining` calls may follow at once, and the quota is whole again after
    /// `reset`.
    Admitted {
        /// Calls that may follow at once.
        remaining: u64,
        /// When the quota is whole again.
        reset: Duration,
    },
    /// Over the limit: one call is admitted after `wait`.
    Refused {
        /// When one call is admitted again.
        wait: Duration,
    },
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

fn duration(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

impl Store {
    /// Counts a call of `account`'s, which may make `calls` per `window`, wherever the
    /// account's other calls were counted.
    pub async fn count_call(
        &self,
        account: &str,
        calls: u32,
        window: Duration,
    ) -> Result<Counted, DbError> {
        let window_us = micros(window).max(1);
        let period_us = (window_us / i64::from(calls.max(1))).max(1);
        let rows = self
            .writer()
            .await?
            .query_unflushed(COUNT, &[account.into(), period_us.into(), window_us.into()])
            .await?;
        let row = rows.first().ok_or(DbError::NoRow("rate_limits"))?;
        let (tat, now, admitted) = (row.int(0), row.int(1), row.int(2) == 1);
        Ok(if admitted {
            let ahead = tat - now;
            Counted::Admitted {
                remaining: u64::try_from((window_us - ahead) / period_us).unwrap_or(0),
                reset: duration(ahead),
            }
        } else {
            Counted::Refused {
                wait: duration(tat.max(now) + period_us - now - window_us),
            }
        })
    }
}
