//! The `RateLimit-Policy` and `RateLimit` fields (the IETF httpapi draft "`RateLimit` header fields"):
//! a [`Quota`] names a policy (so many calls per window), writes it as `RateLimit-Policy`, and
//! writes where a caller stands in it as `RateLimit`. A call over its quota is the
//! [`RateLimited`](crate::guarantee::RefusalKind::RateLimited) refusal: 429 with `Retry-After`
//! over REST, the same problem over MCP.
//!
//! ```
//! use std::time::Duration;
//! use agent_tool_result::http::ratelimit::Quota;
//!
//! let quota = Quota::new("per-account", 10, Duration::from_secs(1))?;
//! let mut headers = http::HeaderMap::new();
//! quota.write(&mut headers, 0, Duration::from_millis(300));
//! assert_eq!(headers["ratelimit-policy"], r#""per-account";q=10;w=1"#);
//! assert_eq!(headers["ratelimit"], r#""per-account";r=0;t=1"#);
//! # Ok::<(), agent_tool_result::http::ratelimit::QuotaError>(())
//! ```

use std::time::Duration;

use ::http::{HeaderMap, HeaderName, HeaderValue};

/// `RateLimit-Policy`: the quota policies a server applies, as an sf-list of items
/// (`"name";q=QUOTA;w=WINDOW`).
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// `RateLimit`: where the caller stands in a policy, as an sf-list of items
/// (`"name";r=REMAINING;t=RESET`).
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The longest policy name a [`Quota`] takes.
const MAX_NAME: usize = 64;

/// The largest integer a structured field value may carry: 15 decimal digits (RFC 9651,
/// section 3.3.1). A parameter past it makes a reader refuse the whole field.
pub const MAX_SF_INTEGER: u64 = 999_999_999_999_999;

/// A quota policy: at most `quota` calls per `window`, under a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quota {
    name: String,
    calls: u64,
    window_secs: u64,
}

/// Why a [`Quota`] cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuotaError {
    /// The name is empty, longer than 64 characters, or not letters, digits, `-`, `_`, `.`.
    #[error("a quota's name is 1 to 64 letters, digits, `-`, `_` or `.`, not `{0}`")]
    Name(String),
    /// The window is shorter than a second (the field counts whole seconds).
    #[error("a quota's window is at least a second")]
    Window,
    /// The quota or the window (in seconds) has more than the 15 digits a structured field's
    /// integer carries ([`MAX_SF_INTEGER`]).
    #[error("a quota's {0} is at most 999999999999999 (15 digits, as RFC 9651 writes integers)")]
    TooLarge(&'static str),
}

impl Quota {
    /// A policy `name` of at most `quota` calls per `window`, counted in whole seconds (a
    /// window's fraction of a second is dropped).
    ///
    /// # Errors
    ///
    /// [`QuotaError`] for a name that is not a short token, a window under a second, or a
    /// quota or window past [`MAX_SF_INTEGER`].
    pub fn new(name: &str, quota: u64, window: Duration) -> Result<Self, QuotaError> {
        let token = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(token) {
            return Err(QuotaError::Name(name.chars().take(MAX_NAME).collect()));
        }
        let window_secs = window.as_secs();
        if window_secs == 0 {
            return Err(QuotaError::Window);
        }
        if quota > MAX_SF_INTEGER {
            return Err(QuotaError::TooLarge("quota"));
        }
        if window_secs > MAX_SF_INTEGER {
            return Err(QuotaError::TooLarge("window"));
        }
        Ok(Quota {
            name: name.to_owned(),
            calls: quota,
            window_secs,
        })
    }

    /// The policy's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The calls a window admits.
    #[must_use]
    pub fn quota(&self) -> u64 {
        self.calls
    }

    /// The window's length.
    #[must_use]
    pub fn window(&self) -> Duration {
        Duration::from_secs(self.window_secs)
    }

    /// The `RateLimit-Policy` value: `"name";q=QUOTA;w=WINDOW`.
    #[must_use]
    #[allow(clippy::missing_panics_doc, reason = "the name is a checked token")]
    pub fn policy(&self) -> HeaderValue {
        let value = format!("\"{}\";q={};w={}", self.name, self.calls, self.window_secs);
        HeaderValue::from_str(&value).expect("a quota's name is a token")
    }

    /// The `RateLimit` value of a caller with `remaining` calls left, whose quota is restored
    /// in `reset` (rounded up to whole seconds). Each is written at most [`MAX_SF_INTEGER`]
    /// (remaining calls past it are as good as unlimited; a reset past it, some thirty million
    /// years, as good as never), and the rounding never wraps.
    #[must_use]
    #[allow(clippy::missing_panics_doc, reason = "the name is a checked token")]
    pub fn status(&self, remaining: u64, reset: Duration) -> HeaderValue {
        let remaining = remaining.min(MAX_SF_INTEGER);
        let reset = reset
            .as_secs()
            .saturating_add(u64::from(reset.subsec_nanos() > 0))
            .min(MAX_SF_INTEGER);
        let value = format!("\"{}\";r={remaining};t={reset}", self.name);
        HeaderValue::from_str(&value).expect("a quota's name is a token")
    }

    /// Writes both fields into `headers`, replacing any there.
    pub fn write(&self, headers: &mut HeaderMap, remaining: u64, reset: Duration) {
        headers.insert(RATELIMIT_POLICY, self.policy());
        headers.insert(RATELIMIT, self.status(remaining, reset));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_short_token() {
        for bad in ["", "a b", "a\"b", "a\\b", "ä", &"x".repeat(65)] {
            assert!(
                matches!(
                    Quota::new(bad, 1, Duration::from_secs(1)),
                    Err(QuotaError::Name(_))
                ),
                "{bad:?}"
            );
        }
        assert!(Quota::new(&"x".repeat(64), 1, Duration::from_secs(1)).is_ok());
        assert_eq!(
            Quota::new("a", 1, Duration::from_millis(999)),
            Err(QuotaError::Window)
        );
    }

    #[test]
    fn the_reset_rounds_up_to_whole_seconds() {
        let quota = Quota::new("q", 5, Duration::from_millis(2500)).unwrap();
        assert_eq!(quota.policy(), r#""q";q=5;w=2"#);
        assert_eq!(quota.status(5, Duration::ZERO), r#""q";r=5;t=0"#);
        assert_eq!(quota.status(4, Duration::from_millis(1)), r#""q";r=4;t=1"#);
        assert_eq!(quota.status(0, Duration::from_secs(2)), r#""q";r=0;t=2"#);
    }

    /// Whether `value` is an sf-list of one item whose parameters are all sf-integers (RFC
    /// 9651: at most 15 digits).
    fn integers_fit(value: &HeaderValue) -> bool {
        let text = value.to_str().unwrap();
        text.split(';').skip(1).all(|parameter| {
            let (_, number) = parameter.split_once('=').unwrap();
            !number.is_empty() && number.len() <= 15 && number.bytes().all(|b| b.is_ascii_digit())
        })
    }

    /// Every parameter the two fields write, `q`, `w`, `r` and `t`, at and past the bound: a
    /// quota or window past it is refused, remaining calls and a reset are clamped, and the
    /// reset's rounding up never wraps, `Duration::MAX` included.
    #[test]
    fn every_integer_written_is_an_sf_integer() {
        let second = Duration::from_secs(1);
        assert!(Quota::new("q", MAX_SF_INTEGER, second).is_ok());
        assert_eq!(
            Quota::new("q", MAX_SF_INTEGER + 1, second),
            Err(QuotaError::TooLarge("quota"))
        );
        assert_eq!(
            Quota::new("q", 1, Duration::from_secs(MAX_SF_INTEGER + 1)),
            Err(QuotaError::TooLarge("window"))
        );
        let widest = Quota::new("q", MAX_SF_INTEGER, Duration::from_secs(MAX_SF_INTEGER)).unwrap();
        assert!(integers_fit(&widest.policy()), "{:?}", widest.policy());
        for remaining in [0, 1, MAX_SF_INTEGER, MAX_SF_INTEGER + 1, u64::MAX] {
            for reset in [
                Duration::ZERO,
                Duration::from_nanos(1),
                Duration::from_secs(MAX_SF_INTEGER),
                Duration::from_secs(MAX_SF_INTEGER) + Duration::from_nanos(1),
                Duration::from_secs(u64::MAX),
                Duration::MAX,
            ] {
                let status = widest.status(remaining, reset);
                assert!(integers_fit(&status), "{status:?}");
            }
        }
        let never = Quota::new("q", 1, second).unwrap().status(0, Duration::MAX);
        assert_eq!(
            never, r#""q";r=0;t=999999999999999"#,
            "not `t=0`: it does not reset now"
        );
        assert_eq!(
            Quota::new("q", 1, second)
                .unwrap()
                .status(0, Duration::from_nanos(1)),
            r#""q";r=0;t=1"#
        );
    }
}
