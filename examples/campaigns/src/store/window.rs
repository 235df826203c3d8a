//! Each account's send window: how many campaign sends it allows, how long it lasts, when it
//! starts, and the room an account has left in the current one.

use crate::db::error::DbError;
use crate::db::tx::Statements;

/// The per-window cap on one account's campaign sends.
#[derive(Clone, Copy, Debug)]
pub struct SendWindow {
    /// Campaign sends allowed in one window.
    pub cap: u64,
    /// The window's length in milliseconds.
    pub length_ms: i64,
    /// When one window starts, in milliseconds since 1970: windows start every `length_ms`
    /// before and after it (0: at multiples of the length).
    pub origin_ms: i64,
}

impl SendWindow {
    /// When the window holding `now_ms` started.
    fn start(self, now_ms: i64) -> i64 {
        now_ms - (now_ms - self.origin_ms).rem_euclid(self.length_ms)
    }

    /// When the next window starts.
    pub fn next(self, now_ms: i64) -> i64 {
        self.start(now_ms) + self.length_ms
    }
}

/// Campaign sends `principal`'s window still has room for: its cap, less its campaigns'
/// recipients sent in it and those claimed and not yet sent. Each
/// account has a window of its own, so one account's sends never use another's room.
pub(super) async fn room(
    conn: &mut impl Statements,
    window: SendWindow,
    principal: &str,
    now_ms: i64,
) -> Result<u64, DbError> {
    let used = conn
        .query(
            "SELECT COUNT(*) FROM recipients r JOIN campaigns c ON c.id = r.campaign_id \
             WHERE c.principal = $2 AND (r.state = 'sending' \
             OR (r.state = 'sent' AND r.sent_ms >= $1))",
            &[window.start(now_ms).into(), principal.into()],
        )
        .await?[0]
        .int(0);
    Ok(window.cap.saturating_sub(u64::try_from(used).unwrap_or(0)))
}
