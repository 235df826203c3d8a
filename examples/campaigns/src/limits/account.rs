//! [`Limit`]: one account's limit in one process, what the process holds of it, and how a
//! call is admitted from it or counted in the shared database, to a [`Standing`]; with the
//! batches' sizes ([`HOLD`], [`batch_cap`]). The parent module says what they promise.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{Refusal, RefusalKind};
use agent_tool_result::http::ratelimit::Quota;
use agent_tool_result::registry::Admission;
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

/// An account's calls to one process in its current span of [`HOLD`] and in the last span
/// that had any: after a quiet spell, a burst's first count is sized by how fast the account
/// called when it last called, not one call at a time while its calls queue behind counts.
struct Recent {
    since: Instant,
    now: u32,
    before: u32,
}

impl Recent {
    fn note(&mut self, at: Instant) {
        if at.saturating_duration_since(self.since) >= HOLD {
            // A span is only started by a call, so the one ending had some.
            self.before = self.now;
            self.since = at;
            self.now = 0;
        }
        self.now = self.now.saturating_add(1);
    }

    /// How many calls to take: as many as came in the last span that had any (or in this
    /// one, if more), within the cap.
    fn want(&self, cap: u32) -> u32 {
        self.before.max(self.now).clamp(1, cap)
    }
}

/// One account's limit, and what this process holds of it.
pub(super) struct Limit {
    /// Calls a window, unless the account's run-time setting says otherwise.
    pub(super) calls: NonZeroU32,
    /// The window.
    pub(super) window: Duration,
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
    pub(super) fn new(calls: NonZeroU32, window: Duration) -> Self {
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

    /// Takes the next batch of `principal`'s calls, `want` of them, handing back `owed`, in
    /// `store`, in a task of its own; the calls held meanwhile go on being admitted. The limit
    /// is marked as counting until the batch is in (or the task is dropped: what it was to
    /// hand back is then lost, and the limit admits less for a while, never more).
    fn refill(self: &Arc<Self>, store: &Store, principal: &str, want: u32, owed: Returned) {
        let (limit, store, principal) = (Arc::clone(self), store.clone(), principal.to_owned());
        tokio::spawn(async move {
            let counting = Counting(&limit);
            let taken = store
                .take_calls(&principal, limit.calls.get(), limit.window, want, owed)
                .await;
            limit.refilled(&principal, taken);
            drop(counting);
        });
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

impl Limit {
    /// Counts a call of `principal`'s: admitted from what this process holds of the account's
    /// limit, else from a batch taken in `store`, or refused with when to call again.
    pub(super) async fn admit(self: &Arc<Self>, store: &Store, principal: &str) -> Standing {
        self.lock().recent.note(Instant::now());
        loop {
            // Decided with the lock held, which no count is made under.
            let step = {
                let mut held = self.lock();
                self.step(&mut held)
            };
            let (want, owed, now) = match step {
                Step::Admitted(standing, None) => return standing,
                Step::Admitted(standing, Some((want, owed))) => {
                    // Under half a batch left while calls come: the next is taken in a task
                    // of its own, and this call, admitted already, does not wait for it.
                    self.refill(store, principal, want, owed);
                    return standing;
                }
                Step::Wait(done) => {
                    // Another call is counting: wait for it, then look again.
                    let waiting = Waiting::new(&self.waiting);
                    done.await;
                    drop(waiting);
                    continue;
                }
                Step::Count { want, owed, now } => (want, owed, now),
            };
            let counting = Counting(self);
            let taken = store
                .take_calls(principal, self.calls.get(), self.window, want, owed)
                .await;
            let standing = match taken {
                Ok(taken) => counted(principal, self.window, &mut self.lock(), now, &taken),
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
