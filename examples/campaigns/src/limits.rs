//! Each account's rate limit on the guarantee tools: so many calls per window, counted per
//! account (one account's calls never refuse another's) by `governor`'s GCRA limiter, one per
//! account, in this process. A call over its account's limit is refused before the replay
//! sequence begins it (nothing ran, the key is not used): the `rate-limited` refusal, 429 with
//! `Retry-After` over REST and the same problem over MCP. REST also writes `RateLimit-Policy`
//! and `RateLimit` on every guarantee call of a limited account.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::time::Duration;

use agent_tool_result::guarantee::{Refusal, RefusalKind};
use agent_tool_result::http::ratelimit::Quota;
use agent_tool_result::registry::Admission;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota as Gcra, RateLimiter};

/// One account's limiter, with the policy its fields name.
struct Limiter {
    quota: Quota,
    /// How long one call takes to be restored.
    period: Duration,
    gcra: RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>,
}

impl Limiter {
    fn new(calls: NonZeroU32, window: Duration) -> Self {
        let quota = Quota::new("per-account", u64::from(calls.get()), window)
            .expect("the policy's name is a token and its window a second or more");
        // `calls` at once, each restored after `window / calls`: no more than `calls` in any
        // window.
        let period = (window / calls.get()).max(Duration::from_nanos(1));
        let gcra = Gcra::with_period(period)
            .expect("the period is positive")
            .allow_burst(calls);
        Limiter {
            quota,
            period,
            gcra: RateLimiter::direct(gcra).with_middleware(),
        }
    }
}

/// Where a call stands in its account's limit.
#[derive(Debug)]
pub enum Standing<'a> {
    /// The account has no limit.
    Unlimited,
    /// The call is admitted: `remaining` more may follow at once, and the quota is whole again
    /// after `reset`.
    Admitted {
        /// The account's policy.
        quota: &'a Quota,
        /// How many calls may follow at once.
        remaining: u64,
        /// When the quota is whole again.
        reset: Duration,
    },
    /// The call is over the limit: the refusal to answer, after which a call is admitted.
    Refused {
        /// The account's policy.
        quota: &'a Quota,
        /// The `rate-limited` refusal, its `retryAt` set.
        refusal: Refusal,
        /// When one call is admitted again.
        wait: Duration,
    },
}

impl Standing<'_> {
    /// The standing as the tools' registry takes it: admitted or refused, with the account's
    /// `RateLimit` fields when it is limited.
    pub fn admission(self) -> Admission {
        match self {
            Standing::Unlimited => Admission::admitted(),
            Standing::Admitted {
                quota,
                remaining,
                reset,
            } => Admission::admitted().with_rate_limit(quota, remaining, reset),
            Standing::Refused {
                quota,
                refusal,
                wait,
            } => Admission::refused(refusal).with_rate_limit(quota, 0, wait),
        }
    }

    /// The `RateLimit-Policy` and `RateLimit` fields of the standing, if limited.
    pub fn write(&self, headers: &mut http::HeaderMap) {
        match self {
            Standing::Unlimited => {}
            Standing::Admitted {
                quota,
                remaining,
                reset,
            } => quota.write(headers, *remaining, *reset),
            Standing::Refused { quota, wait, .. } => quota.write(headers, 0, *wait),
        }
    }
}

/// Every account's rate limit, in this process.
pub struct RateLimits {
    accounts: HashMap<String, Limiter>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.accounts
                    .iter()
                    .map(|(name, limiter)| (name, &limiter.quota)),
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
                Some((principal.to_owned(), Limiter::new(calls, window)))
            })
            .collect();
        RateLimits { accounts }
    }

    /// Counts a call of `principal`'s: admitted, or refused with when to call again.
    pub fn admit(&self, principal: &str) -> Standing<'_> {
        let Some(limiter) = self.accounts.get(principal) else {
            return Standing::Unlimited;
        };
        let quota = &limiter.quota;
        match limiter.gcra.check() {
            Ok(snapshot) => {
                let remaining = u64::from(snapshot.remaining_burst_capacity());
                let used = u32::try_from(quota.quota().saturating_sub(remaining)).unwrap_or(0);
                Standing::Admitted {
                    quota,
                    remaining,
                    reset: limiter.period * used,
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let refusal = Refusal::new(
                    RefusalKind::RateLimited,
                    format!(
                        "account {principal} may make {} guarantee calls per {} s and has made \
                         them; nothing ran: send the same request with the same key after \
                         retryAt",
                        quota.quota(),
                        quota.window().as_secs()
                    ),
                )
                // Retry-After counts whole seconds: never earlier than the limiter admits.
                .with_retry_after(Duration::from_secs(wait.as_secs() + 1));
                Standing::Refused {
                    quota,
                    refusal,
                    wait,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(default: Option<u32>, own: &[(&str, u32)]) -> RateLimits {
        let own = own
            .iter()
            .map(|(name, calls)| ((*name).to_owned(), NonZeroU32::new(*calls).unwrap()))
            .collect();
        RateLimits::new(
            ["a", "b", "c"],
            default.and_then(NonZeroU32::new),
            &own,
            Duration::from_secs(60),
        )
    }

    fn admitted(limits: &RateLimits, principal: &str) -> usize {
        (0..10)
            .filter(|_| !matches!(limits.admit(principal), Standing::Refused { .. }))
            .count()
    }

    #[test]
    fn each_account_counts_its_own_calls() {
        let limits = limits(Some(3), &[("b", 5)]);
        assert_eq!(admitted(&limits, "a"), 3);
        // a's calls took nothing from b's or c's.
        assert_eq!(admitted(&limits, "b"), 5);
        assert_eq!(admitted(&limits, "c"), 3);
    }

    #[test]
    fn without_a_default_only_accounts_given_a_limit_are_limited() {
        let limits = limits(None, &[("a", 2)]);
        assert_eq!(admitted(&limits, "a"), 2);
        assert_eq!(admitted(&limits, "b"), 10);
        assert!(matches!(limits.admit("b"), Standing::Unlimited));
    }

    #[test]
    fn a_refusal_says_when_to_call_again() {
        let limits = limits(Some(1), &[]);
        let Standing::Admitted { remaining, .. } = limits.admit("a") else {
            panic!("the first call is admitted");
        };
        assert_eq!(remaining, 0);
        let Standing::Refused { refusal, wait, .. } = limits.admit("a") else {
            panic!("the second call is over the limit");
        };
        assert_eq!(refusal.kind(), RefusalKind::RateLimited);
        assert!(wait > Duration::from_secs(50) && wait <= Duration::from_secs(60));
        let mut headers = http::HeaderMap::new();
        limits.admit("a").write(&mut headers);
        assert_eq!(headers["ratelimit-policy"], r#""per-account";q=1;w=60"#);
        assert!(
            headers["ratelimit"]
                .to_str()
                .unwrap()
                .starts_with(r#""per-account";r=0;t="#)
        );
    }
}
