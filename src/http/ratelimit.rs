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
}

impl Quota {
    /// A policy `name` of at most `quota` calls per `window`, counted in whole seconds (a
    /// window's fraction of a second is dropped).
    ///
    /// # Errors
    ///
    /// [`QuotaError`] for a name that is not a short token, or a window under a second.
    pub fn new(name: &str, quota: u64, window: Duration) -> Result<Self, QuotaError> {
        let token = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(token) {
            return Err(QuotaError::Name(name.chars().take(MAX_NAME).collect()));
        }
        let window_secs = window.as_secs();
        if window_secs == 0 {
            return Err(QuotaError::Window);
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
    /// in `reset` (rounded up to whole seconds).
    #[must_use]
    #[allow(clippy::missing_panics_doc, reason = "the name is a checked token")]
    pub fn status(&self, remaining: u64, reset: Duration) -> HeaderValue {
        let reset = reset.as_secs() + u64::from(reset.subsec_nanos() > 0);
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
}
