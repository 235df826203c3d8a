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
//! a batch of the account's calls at once, as many as it admitted over the last [`HOLD`] or
//! as are waiting to be counted (at least one, at most [`batch_cap`]: a sixteenth of the
//! limit, and no more than 256), and admits its next calls from the batch without touching
//! the row. Once less than half a batch is left, the call that finds so takes the next one
//! (so that a process never holds more than a cap less one) while the account's other calls
//! go on being admitted from what is left: while calls keep coming, none of them waits for
//! another's count. What it has not used [`HOLD`] after taking its latest batch goes back with
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
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{Refusal, RefusalKind};
use agent_tool_result::http::ratelimit::Quota;
use agent_tool_result::registry::Admission;
use std::sync::Mutex;

use tokio::sync::Notify;

use crate::store::Store;
use crate::store::rates::{Returned, Taken};

/// How long a process keeps calls it took and has not used before they go back, and the span
/// over which it measures an account's recent calls to size its next batch.
pub const HOLD: Duration = Duration::from_millis(250);

/// The most calls a process takes at once for an account with `calls` a window: a sixteenth
/// of them (so sixteen processes may hold batches at once and the limit still has room),
/// between one and 256.
pub fn batch_cap(calls: u64) -> u32 {
    u32::try_from((calls / 16).clamp(1, 256)).unwrap_or(1)
}

/// The policy's name in `RateLimit-Policy`.
const POLICY: &str = "per-account";

fn quota(calls: u64, window: Duration) -> Quota {
    Quota::new(POLICY, calls, window)
        .expect("the policy's name is a token and its window a second or more")
}

/// What a process holds of one account's limit.
struct Held {
    /// The account's policy, as its last count found it.
    quota: Quota,
    /// Calls taken and not yet admitted.
    calls: u32,
    /// How long one of them takes to be restored (what handing it back gives back).
    period: Duration,
    /// When the calls taken go back, unused.
    until: Instant,
    /// Calls the shared count had room for at the last count.
    room: u64,
    /// When the quota is whole again, as of the last count.
    whole: Instant,
    /// Unused calls to hand back with the next count.
    owed: Returned,
    /// The account's recent calls to this process.
    recent: Recent,
}

/// An account's calls to one process over the last two spans of [`HOLD`].
struct Recent {
    since: Instant,
    now: u32,
    before: u32,
}

impl Recent {
    fn note(&mut self, at: Instant) {
        let past = at.saturating_duration_since(self.since);
        if past >= HOLD {
            self.before = if past < 2 * HOLD { self.now } else { 0 };
            self.since = at;
            self.now = 0;
        }
        self.now = self.now.saturating_add(1);
    }

    /// How many calls to take: as many as came in the last span (or in this one, if more),
    /// within the cap.
    fn want(&self, cap: u32) -> u32 {
        self.before.max(self.now).clamp(1, cap)
    }
}

/// One account's limit, and what this process holds of it.
struct Limit {
    calls: NonZeroU32,
    window: Duration,
    /// Held only for a few steps, never across a count.
    held: Mutex<Held>,
    /// Whether a call is counting (taking the next batch), with the lock let go.
    counting: AtomicBool,
    /// Told when it is done (the batch in, or not taken, or the call dropped meanwhile).
    counted: Notify,
    /// Calls waiting for a count: it takes enough for them too.
    waiting: AtomicU32,
}

/// What a call does next ([`Limit::step`]).
enum Step<'a> {
    /// Admitted; with the next batch to take, if it is this call's to take.
    Admitted(Standing, Option<(u32, Returned)>),
    /// Another call is counting: wait for it.
    Wait(tokio::sync::futures::Notified<'a>),
    /// Count: take `want` calls, handing back `owed`, as of `now`.
    Count {
        want: u32,
        owed: Returned,
        now: Instant,
    },
}

/// A call waiting for a count, counted in `waiting` until dropped (the count made, or the
/// call dropped itself meanwhile).
struct Waiting<'a>(&'a AtomicU32);

impl<'a> Waiting<'a> {
    fn new(waiting: &'a AtomicU32) -> Self {
        waiting.fetch_add(1, Ordering::Relaxed);
        Waiting(waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Marks the count made when dropped, however the call making it ends: a call dropped
/// meanwhile (its client gone) leaves no one waiting for it.
struct Counting<'a>(&'a Limit);

impl Drop for Counting<'_> {
    fn drop(&mut self) {
        self.0.counting.store(false, Ordering::Release);
        self.0.counted.notify_waiters();
    }
}

impl Limit {
    fn new(calls: NonZeroU32, window: Duration) -> Self {
        let now = Instant::now();
        Limit {
            calls,
            window,
            counting: AtomicBool::new(false),
            counted: Notify::new(),
            waiting: AtomicU32::new(0),
            held: Mutex::new(Held {
                quota: quota(u64::from(calls.get()), window),
                calls: 0,
                period: Duration::ZERO,
                until: now,
                room: 0,
                whole: now,
                owed: Returned::default(),
                recent: Recent {
                    since: now,
                    now: 0,
                    before: 0,
                },
            }),
        }
    }
}

impl Limit {
    /// What a call does next, from what this process holds (`held`): admitted from it (and,
    /// with less than half a batch left, taking the next: how many, and the calls handed
    /// back), or waiting for another call's count, or counting itself (how many to take, the
    /// calls handed back, and when). Counting or taking the next, it is marked as counting.
    fn step<'a>(&'a self, held: &mut Held) -> Step<'a> {
        let now = Instant::now();
        if held.calls > 0 && now >= held.until {
            // Held too long: they go back with the next count.
            held.owed = held.owed.and(held.calls, held.period);
            held.calls = 0;
        }
        let cap = batch_cap(held.quota.quota());
        let want = held.recent.want(cap);
        if held.calls > 0 {
            held.calls -= 1;
            let standing = Standing::Admitted {
                quota: held.quota.clone(),
                remaining: held.room + u64::from(held.calls),
                reset: held.whole.saturating_duration_since(now),
            };
            let next =
                (held.calls < want / 2 && !self.counting.swap(true, Ordering::AcqRel)).then(|| {
                    let want = want.min(cap - 1 - held.calls);
                    (want, std::mem::take(&mut held.owed))
                });
            return Step::Admitted(standing, next);
        }
        // Told of the count under way from here on, even if it ends before this waits.
        let done = self.counted.notified();
        if self.counting.swap(true, Ordering::AcqRel) {
            return Step::Wait(done);
        }
        // As many as came over the last span, or as are waiting now if more (a burst after
        // a quiet spell): one count for all of them.
        let queued = self.waiting.load(Ordering::Relaxed).saturating_add(1);
        Step::Count {
            want: want.max(queued.min(cap)),
            // Handed back with this count whatever comes of it: handed back twice, they
            // would let the limit admit more than it allows; lost, it admits less for a
            // while.
            owed: std::mem::take(&mut held.owed),
            now,
        }
    }

    /// What this process holds of the limit.
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds the next batch of `principal`'s calls, `taken` while the calls held so far went
    /// on being admitted.
    fn refilled(&self, principal: &str, taken: Result<Taken, crate::db::error::DbError>) {
        let mut held = self.lock();
        match taken {
            Ok(taken) => {
                let now = Instant::now();
                if held.quota.quota() != taken.calls {
                    held.quota = quota(taken.calls, self.window);
                }
                held.room = taken.room;
                held.whole = now + taken.reset;
                if taken.granted > 0 {
                    held.calls += taken.granted;
                    held.period = taken.period;
                    held.until = now + HOLD;
                }
            }
            // Nothing taken: the calls left are admitted, and the next count is made when
            // they run out.
            Err(err) => {
                tracing::warn!(%principal, error = %err, "the rate limit could not be counted");
            }
        }
    }
}

/// Where a call stands in its account's limit.
#[derive(Debug)]
pub enum Standing {
    /// The account has no limit.
    Unlimited,
    /// The call is admitted: `remaining` more may follow at once, and the quota is whole again
    /// after `reset`.
    Admitted {
        /// The account's policy.
        quota: Quota,
        /// How many calls may follow at once.
        remaining: u64,
        /// When the quota is whole again.
        reset: Duration,
    },
    /// The call could not be counted (the database failed): the `unavailable` refusal.
    Unavailable(Refusal),
    /// The call is over the limit: the refusal to answer, after which a call is admitted.
    Refused {
        /// The account's policy.
        quota: Quota,
        /// The `rate-limited` refusal, its `retryAt` set.
        refusal: Refusal,
        /// When one call is admitted again.
        wait: Duration,
    },
}

impl Standing {
    /// The standing as the tools' registry takes it: admitted or refused, with the account's
    /// `RateLimit` fields when it is limited.
    pub fn admission(self) -> Admission {
        match self {
            Standing::Unlimited => Admission::admitted(),
            Standing::Admitted {
                quota,
                remaining,
                reset,
            } => Admission::admitted().with_rate_limit(&quota, remaining, reset),
            Standing::Refused {
                quota,
                refusal,
                wait,
            } => Admission::refused(refusal).with_rate_limit(&quota, 0, wait),
            Standing::Unavailable(refusal) => Admission::refused(refusal),
        }
    }

    /// The `RateLimit-Policy` and `RateLimit` fields of the standing, if limited.
    pub fn write(&self, headers: &mut http::HeaderMap) {
        match self {
            Standing::Unlimited | Standing::Unavailable(_) => {}
            Standing::Admitted {
                quota,
                remaining,
                reset,
            } => quota.write(headers, *remaining, *reset),
            Standing::Refused { quota, wait, .. } => quota.write(headers, 0, *wait),
        }
    }
}

/// Every account's rate limit (counted in the shared database).
pub struct RateLimits {
    accounts: HashMap<String, Limit>,
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
                Some((principal.to_owned(), Limit::new(calls, window)))
            })
            .collect();
        RateLimits { accounts }
    }

    /// Counts a call of `principal`'s: admitted from what this process holds of the account's
    /// limit, else from a batch taken in `store`, or refused with when to call again.
    pub async fn admit(&self, store: &Store, principal: &str) -> Standing {
        let Some(limit) = self.accounts.get(principal) else {
            return Standing::Unlimited;
        };
        limit.lock().recent.note(Instant::now());
        loop {
            // Decided with the lock held, which no count is made under.
            let step = {
                let mut held = limit.lock();
                limit.step(&mut held)
            };
            let (want, owed, now) = match step {
                Step::Admitted(standing, None) => return standing,
                Step::Admitted(standing, Some((want, owed))) => {
                    // Under half a batch left while calls come: this call takes the next.
                    let counting = Counting(limit);
                    let taken = store
                        .take_calls(principal, limit.calls.get(), limit.window, want, owed)
                        .await;
                    limit.refilled(principal, taken);
                    drop(counting);
                    return standing;
                }
                Step::Wait(done) => {
                    // Another call is counting: wait for it, then look again.
                    let waiting = Waiting::new(&limit.waiting);
                    done.await;
                    drop(waiting);
                    continue;
                }
                Step::Count { want, owed, now } => (want, owed, now),
            };
            let counting = Counting(limit);
            let taken = store
                .take_calls(principal, limit.calls.get(), limit.window, want, owed)
                .await;
            let standing = match taken {
                Ok(taken) => counted(principal, limit.window, &mut limit.lock(), now, &taken),
                Err(err) => {
                    tracing::warn!(%principal, error = %err, "the rate limit could not be counted");
                    Standing::Unavailable(
                        Refusal::new(
                            RefusalKind::Unavailable,
                            "the account's rate limit could not be counted: the database did \
                             not answer; nothing ran: send the same request with the same key \
                             after retryAt",
                        )
                        .with_retry_after(Duration::from_secs(1)),
                    )
                }
            };
            drop(counting);
            return standing;
        }
    }
}

/// What a count of `principal`'s calls (per `window`) that came to `taken` at `now` means for
/// this call, and what the process holds after it.
fn counted(
    principal: &str,
    window: Duration,
    held: &mut Held,
    now: Instant,
    taken: &Taken,
) -> Standing {
    if held.quota.quota() != taken.calls {
        held.quota = quota(taken.calls, window);
    }
    held.room = taken.room;
    held.whole = now + taken.reset;
    if taken.granted == 0 {
        let quota = held.quota.clone();
        let refusal = Refusal::new(
            RefusalKind::RateLimited,
            format!(
                "account {principal} may make {} guarantee calls per {} s and has made them; \
                 nothing ran: send the same request with the same key after retryAt",
                quota.quota(),
                quota.window().as_secs()
            ),
        )
        // Retry-After counts whole seconds: never earlier than the limit admits.
        .with_retry_after(Duration::from_secs(taken.wait.as_secs() + 1));
        return Standing::Refused {
            quota,
            refusal,
            wait: taken.wait,
        };
    }
    // One for this call; the rest held for the next ones.
    held.calls = taken.granted - 1;
    held.period = taken.period;
    held.until = now + HOLD;
    Standing::Admitted {
        quota: held.quota.clone(),
        remaining: held.room + u64::from(held.calls),
        reset: taken.reset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Target;

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
