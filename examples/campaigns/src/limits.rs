//! Each account's rate limit on the guarantee tools: so many calls per window, counted per
//! account (one account's calls never refuse another's) in the database every process of the
//! service shares ([`Store::take_calls`]), so the limit is the account's wherever its calls
//! land: three processes each started with `--rate-limit 4` admit 4 calls of an account
//! between them, not 12. A call over its account's limit is refused before the replay
//! sequence begins it (nothing ran, the key is not used): the `rate-limited` refusal, 429 with
//! `Retry-After` over REST and the same problem over MCP. REST also writes `RateLimit-Policy`
//! and `RateLimit` on every guarantee call of a limited account. When the database cannot
//! count the call, it is refused `unavailable` (503, `Retry-After`): nothing ran.
//!
//! # No hot row
//!
//! An account whose calls come fast would queue them all on its one row. So a process takes
//! a batch of the account's calls at once, as many as came to it in the last span of [`HOLD`]
//! that had any (a burst after a quiet spell is sized by the rate the account last called
//! at, not taken one call at a time while its calls queue behind the counts) or as are
//! waiting to be counted (at least one, at most [`batch_cap`]: a sixteenth of the limit, and
//! no more than 256), and admits its next calls from the batch without touching the row. Once less than half a batch is left, the call that finds so starts taking the next
//! one in the background (so that a process never holds more than a cap less one) and is
//! answered at once, while the account's other calls go on being admitted from what is left:
//! while calls keep coming, none of them waits for a count. What it has not used [`HOLD`] after taking its latest batch goes back with
//! its next count. So:
//! - **never more than the limit**: every call admitted was counted in the shared row first;
//!   a call admitted from what a process holds is admitted within [`HOLD`] of its latest
//!   count.
//! - **under-admission, bounded**: calls one process holds unused are calls another process
//!   may be refused; each process holds at most [`batch_cap`] less one of an account's calls,
//!   for at most [`HOLD`] while calls keep coming to it (its next count hands them back), or,
//!   when none comes, until the limit restores them on its own (a batch takes at most a
//!   sixteenth of the window to restore). A limit below 32 calls a window has batches of one:
//!   no call is held, and the count is exact, call by call.
//! - **a changed limit**: an account's limit set while the service runs (the `rate_settings`
//!   table, over the flags) is read by each count, so every call a process admits more than
//!   [`HOLD`] after the change is counted under it.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use crate::store::Store;

mod account;

use account::Limit;
pub use account::{HOLD, Standing, batch_cap};

/// Every account's rate limit (counted in the shared database).
pub struct RateLimits {
    accounts: HashMap<String, Arc<Limit>>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.accounts
                    .iter()
                    .map(|(name, limit)| (name, (limit.calls, limit.window))),
            )
            .finish()
    }
}

impl RateLimits {
    /// Limits for `principals`: `default` calls per `window` each, or their own in `own`;
    /// no limit for an account without either.
    pub fn new<'a>(
        principals: impl IntoIterator<Item = &'a str>,
        default: Option<NonZeroU32>,
        own: &HashMap<String, NonZeroU32>,
        window: Duration,
    ) -> Self {
        let window = window.max(Duration::from_secs(1));
        let accounts = principals
            .into_iter()
            .filter_map(|principal| {
                let calls = own.get(principal).copied().or(default)?;
                Some((principal.to_owned(), Arc::new(Limit::new(calls, window))))
            })
            .collect();
        RateLimits { accounts }
    }

    /// Counts a call of `principal`'s: admitted from what this process holds of the account's
    /// limit, else from a batch taken in `store`, or refused with when to call again.
    pub async fn admit(&self, store: &Store, principal: &str) -> Standing {
        match self.accounts.get(principal) {
            Some(limit) => limit.admit(store, principal).await,
            None => Standing::Unlimited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Target;
    use crate::store::rates::Returned;
    use agent_tool_result::guarantee::RefusalKind;

    /// Limits for accounts a, b and c, and two processes' stores on one scratch file.
    async fn limits(
        name: &str,
        default: Option<u32>,
        own: &[(&str, u32)],
    ) -> (RateLimits, Store, Store, std::path::PathBuf) {
        let own = own
            .iter()
            .map(|(name, calls)| ((*name).to_owned(), NonZeroU32::new(*calls).unwrap()))
            .collect();
        let limits = RateLimits::new(
            ["a", "b", "c"],
            default.and_then(NonZeroU32::new),
            &own,
            Duration::from_secs(60),
        );
        let dir =
            std::env::temp_dir().join(format!("campaigns-rates-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = Target::Sqlite(dir.join("store.sqlite"));
        let open = || Store::open(&target, Duration::from_secs(5), 1, Duration::from_secs(5));
        let (one, two) = (open().await.unwrap(), open().await.unwrap());
        (limits, one, two, dir)
    }

    /// Of ten calls of `principal`'s, alternately through each store, how many were admitted.
    async fn admitted(limits: &RateLimits, stores: [&Store; 2], principal: &str) -> usize {
        let mut admitted = 0;
        for call in 0..10 {
            let standing = limits.admit(stores[call % 2], principal).await;
            if !matches!(standing, Standing::Refused { .. }) {
                admitted += 1;
            }
        }
        admitted
    }

    #[tokio::test]
    async fn each_account_counts_its_own_calls_across_processes() {
        let (limits, one, two, dir) = limits("own", Some(3), &[("b", 5)]).await;
        assert_eq!(admitted(&limits, [&one, &two], "a").await, 3);
        // a's calls took nothing from b's or c's.
        assert_eq!(admitted(&limits, [&two, &one], "b").await, 5);
        assert_eq!(admitted(&limits, [&one, &two], "c").await, 3);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn without_a_default_only_accounts_given_a_limit_are_limited() {
        let (limits, one, two, dir) = limits("default", None, &[("a", 2)]).await;
        assert_eq!(admitted(&limits, [&one, &two], "a").await, 2);
        assert_eq!(admitted(&limits, [&one, &two], "b").await, 10);
        assert!(matches!(limits.admit(&one, "b").await, Standing::Unlimited));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_refusal_says_when_to_call_again() {
        let (limits, one, two, dir) = limits("refusal", Some(1), &[]).await;
        let Standing::Admitted {
            remaining, reset, ..
        } = limits.admit(&one, "a").await
        else {
            panic!("the first call is admitted");
        };
        assert_eq!(remaining, 0);
        assert!(reset > Duration::from_secs(59) && reset <= Duration::from_secs(60));
        let Standing::Refused { refusal, wait, .. } = limits.admit(&two, "a").await else {
            panic!("the second call is over the limit, in the other process too");
        };
        assert_eq!(refusal.kind(), RefusalKind::RateLimited);
        assert!(wait > Duration::from_secs(50) && wait <= Duration::from_secs(60));
        let mut headers = http::HeaderMap::new();
        limits.admit(&one, "a").await.write(&mut headers);
        assert_eq!(headers["ratelimit-policy"], r#""per-account";q=1;w=60"#);
        assert!(
            headers["ratelimit"]
                .to_str()
                .unwrap()
                .starts_with(r#""per-account";r=0;t="#)
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A call of a's that waits for a count, kept to be awaited later.
    type Waiting<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Standing> + 'a>>;

    /// `calls` calls of a's through `store`, each polled once: whether each was answered at
    /// once (and admitted), and those that wait.
    fn polled_once<'a>(
        limits: &'a RateLimits,
        store: &'a Store,
        calls: usize,
    ) -> (Vec<bool>, Vec<Waiting<'a>>) {
        use std::task::{Context, Poll, Waker};
        let (mut answered, mut waiting) = (Vec::new(), Vec::new());
        for _ in 0..calls {
            let mut call: Waiting<'a> = Box::pin(limits.admit(store, "a"));
            match call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                Poll::Ready(standing) => {
                    assert!(matches!(standing, Standing::Admitted { .. }));
                    answered.push(true);
                }
                Poll::Pending => {
                    answered.push(false);
                    waiting.push(call);
                }
            }
        }
        (answered, waiting)
    }

    /// A busy account (calls a millisecond apart) holds a batch; then the store's connection
    /// is held elsewhere, so no count can be made. Each call is polled once (and kept): the
    /// calls the process holds are all answered at once, the one that starts taking the next
    /// batch included (it does not wait for the count), and only once they run out do calls
    /// wait. The connection let go, the batch comes in and the calls waiting are admitted.
    #[tokio::test]
    async fn a_call_that_takes_the_next_batch_does_not_wait_for_it() {
        let (limits, one, _two, dir) = limits("background", Some(6400), &[]).await;
        for _ in 0..60 {
            assert!(matches!(
                limits.admit(&one, "a").await,
                Standing::Admitted { .. }
            ));
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        let held = one.db().conn().await.unwrap();
        let (answered, waiting) = polled_once(&limits, &one, 300);
        let first_waiting = answered.iter().position(|answered| !answered).unwrap();
        assert!(
            first_waiting >= 2,
            "{first_waiting} answered from the batch"
        );
        assert!(
            answered[first_waiting..].iter().all(|answered| !answered),
            "a call waited for a count while calls were held: {answered:?}"
        );
        drop(held);
        for call in waiting {
            assert!(matches!(call.await, Standing::Admitted { .. }));
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// 100 calls of a busy account, then a quiet spell of two spans of HOLD: the burst's first
    /// call takes a batch for the rate the account last called at, so with the store's
    /// connection then held elsewhere (no count can be made), the calls that follow are
    /// answered from it at once instead of waiting for counts one call at a time.
    #[tokio::test]
    async fn a_burst_after_a_quiet_spell_is_counted_for_the_last_rate() {
        let (limits, one, _two, dir) = limits("burst", Some(6400), &[]).await;
        for _ in 0..100 {
            limits.admit(&one, "a").await;
        }
        tokio::time::sleep(2 * HOLD + Duration::from_millis(50)).await;
        assert!(matches!(
            limits.admit(&one, "a").await,
            Standing::Admitted { .. }
        ));
        let held = one.db().conn().await.unwrap();
        let (answered, waiting) = polled_once(&limits, &one, 100);
        let answered = answered.iter().filter(|answered| **answered).count();
        assert!(
            answered >= 50,
            "{answered} answered from the burst's first batch"
        );
        drop(held);
        for call in waiting {
            assert!(matches!(call.await, Standing::Admitted { .. }));
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Two processes each take 60 of a's 1,000 calls a window and make 20; the limit is
    /// lowered to 30 (40 made: over it). Each hands back its 40 unused with its next count:
    /// the first, still counted by the old limit, gives them back; the second, once the count
    /// has moved to the new limit (and dropped what lay beyond a window), keeps them counted.
    /// Neither count admits a call, whichever hands back first, and as many hand-backs as may
    /// come admit none either.
    #[tokio::test]
    async fn calls_handed_back_after_the_limit_was_lowered_admit_nothing_more() {
        for first in [0, 1] {
            let name = format!("lowered-{first}");
            let (_, one, two, dir) = limits(&name, None, &[]).await;
            let stores = [&one, &two];
            let window = Duration::from_secs(72_000);
            let mut taken = Vec::new();
            for store in stores {
                let took = store
                    .take_calls("a", 1000, window, 60, Returned::default())
                    .await
                    .unwrap();
                assert_eq!(took.granted, 60);
                taken.push(took.period);
            }
            let mut conn = one.db().conn().await.unwrap();
            let lowered = "INSERT INTO rate_settings (account, calls) VALUES ('a', 30)";
            conn.execute(lowered, &[]).await.unwrap();
            drop(conn);
            for i in [first, 1 - first] {
                let back = Returned::default().and(40, taken[i]);
                let count = stores[i]
                    .take_calls("a", 1000, window, 1, back)
                    .await
                    .unwrap();
                assert_eq!((count.granted, count.calls), (0, 30), "{name}: store {i}");
            }
            for store in stores {
                let count = store
                    .take_calls("a", 1000, window, 1, Returned::default().and(40, taken[0]))
                    .await
                    .unwrap();
                assert_eq!(count.granted, 0, "{name}");
            }
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
