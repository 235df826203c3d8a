//! Each account's rate limit on the guarantee tools: so many calls per window, counted per
//! account (one account's calls never refuse another's) in the database every process of the
//! service shares ([`Store::count_call`]), so the limit is the account's wherever its calls
//! land: three processes each started with `--rate-limit 4` admit 4 calls of an account
//! between them, not 12. A call over its account's limit is refused before the replay
//! sequence begins it (nothing ran, the key is not used): the `rate-limited` refusal, 429 with
//! `Retry-After` over REST and the same problem over MCP. REST also writes `RateLimit-Policy`
//! and `RateLimit` on every guarantee call of a limited account. When the database cannot
//! count the call, it is refused `unavailable` (503, `Retry-After`): nothing ran.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::time::Duration;

use agent_tool_result::guarantee::{Refusal, RefusalKind};
use agent_tool_result::http::ratelimit::Quota;
use agent_tool_result::registry::Admission;

use crate::store::Store;
use crate::store::rates::Counted;

/// One account's limit: the policy its fields name, and the calls it allows per window.
struct Limit {
    quota: Quota,
    calls: NonZeroU32,
    window: Duration,
}

impl Limit {
    fn new(calls: NonZeroU32, window: Duration) -> Self {
        let quota = Quota::new("per-account", u64::from(calls.get()), window)
            .expect("the policy's name is a token and its window a second or more");
        Limit {
            quota,
            calls,
            window,
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
    /// The call could not be counted (the database failed): the `unavailable` refusal.
    Unavailable(Refusal),
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
                    .map(|(name, limit)| (name, &limit.quota)),
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

    /// Counts a call of `principal`'s in `store`: admitted, or refused with when to call
    /// again.
    pub async fn admit(&self, store: &Store, principal: &str) -> Standing<'_> {
        let Some(limit) = self.accounts.get(principal) else {
            return Standing::Unlimited;
        };
        let quota = &limit.quota;
        match store
            .count_call(principal, limit.calls.get(), limit.window)
            .await
        {
            Ok(Counted::Admitted { remaining, reset }) => Standing::Admitted {
                quota,
                remaining,
                reset,
            },
            Ok(Counted::Refused { wait }) => {
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
                // Retry-After counts whole seconds: never earlier than the limit admits.
                .with_retry_after(Duration::from_secs(wait.as_secs() + 1));
                Standing::Refused {
                    quota,
                    refusal,
                    wait,
                }
            }
            Err(err) => {
                tracing::warn!(%principal, error = %err, "the rate limit could not be counted");
                Standing::Unavailable(
                    Refusal::new(
                        RefusalKind::Unavailable,
                        "the account's rate limit could not be counted: the database did not \
                         answer; nothing ran: send the same request with the same key after \
                         retryAt",
                    )
                    .with_retry_after(Duration::from_secs(1)),
                )
            }
        }
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
}
