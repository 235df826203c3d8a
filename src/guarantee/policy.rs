//! `policy`: what policy decided ([`PolicyDecision`](super::PolicyDecision)), why
//! ([`PolicyCode`]) and when to try again.

use std::time::SystemTime;

use super::state::PolicyDecision;
use crate::code::InvalidCode;

/// A policy code: lowercase words of letters and digits joined by `_` or `-`
/// (`contact_opted_out`). Open, like error codes: agents fall back to the decision.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PolicyCode(std::borrow::Cow<'static, str>);

/// Whether `s` is a policy code: `^[a-z0-9]+([_-][a-z0-9]+)*$`.
#[must_use]
pub const fn is_policy_code(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    let mut after_separator = true;
    while i < bytes.len() {
        match bytes[i] {
            b'a'..=b'z' | b'0'..=b'9' => after_separator = false,
            b'_' | b'-' if !after_separator => after_separator = true,
            _ => return false,
        }
        i += 1;
    }
    !after_separator
}

/// Declares the well-known policy codes: one row each, with the decision it comes with.
macro_rules! policy_codes {
    ($( $(#[doc = $doc:literal])* $name:ident = $wire:literal, $decision:ident; )+) => {
        impl PolicyCode {
            $( $(#[doc = $doc])* pub const $name: PolicyCode = PolicyCode::known($wire); )+

            /// Every well-known policy code, in table order. Codes stay open: a producer may
            /// send any other, and an agent that does not know one acts on the decision.
            pub const WELL_KNOWN: [PolicyCode; [$($wire),+].len()] = [$(PolicyCode::$name),+];

            /// For a well-known code, the decision it comes with and what it means; `None`
            /// for any other code.
            ///
            /// ```
            /// use agent_tool_result::guarantee::{PolicyCode, PolicyDecision};
            ///
            /// let (decision, meaning) = PolicyCode::CONTACT_OPTED_OUT.describe().unwrap();
            /// assert_eq!(decision, PolicyDecision::Deny);
            /// assert!(meaning.starts_with("A contact has opted out"));
            /// assert!(PolicyCode::new("quiet_hours").unwrap().describe().is_none());
            /// ```
            #[must_use]
            pub fn describe(&self) -> Option<(PolicyDecision, &'static str)> {
                match self.as_str() {
                    $( $wire => Some((
                        PolicyDecision::$decision,
                        crate::rule::doc_text(concat!($($doc),*)),
                    )), )+
                    _ => None,
                }
            }
        }
    };
}

policy_codes! {
    /// A contact has opted out of messages: a `send_sms` deny, before the provider.
    CONTACT_OPTED_OUT = "contact_opted_out", Deny;
    /// Contact policy (quiet hours, consent, frequency caps) refuses the message.
    CONTACT_POLICY = "contact_policy", Deny;
    /// A campaign's send window is full: the rest is held durably until it reopens.
    CAMPAIGN_SEND_WINDOW = "campaign_send_window", Defer;
    /// A campaign is held for review before any send.
    CAMPAIGN_HOLD = "campaign_hold", Defer;
}

impl PolicyCode {
    /// A well-known code of the table above.
    const fn known(code: &'static str) -> Self {
        assert!(is_policy_code(code));
        PolicyCode(std::borrow::Cow::Borrowed(code))
    }

    /// Not public API: [`policy_code!`](crate::policy_code)'s constructor, for a literal it
    /// checked.
    #[doc(hidden)]
    #[must_use]
    pub const fn __from_checked(code: &'static str) -> Self {
        PolicyCode(std::borrow::Cow::Borrowed(code))
    }

    /// A code from any string.
    ///
    /// # Errors
    ///
    /// [`InvalidCode`] when it is not lowercase words joined by `_` or `-`.
    pub fn new(code: impl Into<std::borrow::Cow<'static, str>>) -> Result<Self, InvalidCode> {
        let code = code.into();
        if is_policy_code(&code) {
            Ok(PolicyCode(code))
        } else {
            Err(InvalidCode::policy(&code))
        }
    }

    /// The code as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A [`PolicyCode`] from a string literal, checked when it compiles: the macro runs in a
/// `const`, so a literal that is not lowercase words joined by `_` or `-` is a compile error
/// that names it, and nothing is checked at run time.
///
/// ```
/// use agent_tool_result::guarantee::PolicyCode;
/// use agent_tool_result::policy_code;
///
/// const QUIET_HOURS: PolicyCode = policy_code!("quiet_hours");
/// assert_eq!(QUIET_HOURS.as_str(), "quiet_hours");
/// ```
///
/// ```compile_fail,E0080
/// let shouted = agent_tool_result::policy_code!("Quiet Hours");
/// ```
#[macro_export]
macro_rules! policy_code {
    ($code:literal) => {
        const {
            if !$crate::guarantee::is_policy_code($code) {
                ::core::panic!(::core::concat!(
                    "policy code \"",
                    $code,
                    "\" is not lowercase letters and digits in words joined by `_` or `-`, as \
                     in \"quiet_hours\""
                ));
            }
            $crate::guarantee::PolicyCode::__from_checked($code)
        }
    };
}

impl std::fmt::Display for PolicyCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for PolicyCode {
    type Err = InvalidCode;

    fn from_str(s: &str) -> Result<Self, InvalidCode> {
        PolicyCode::new(s.to_owned())
    }
}

/// What policy decided: `{ decision, code?, retryAt? }`.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, PolicyDecision};
/// use std::time::{Duration, UNIX_EPOCH};
///
/// let at = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
/// let held = GuaranteeResult::<agent_tool_result::JsonObject>::deferred(PolicyCode::CAMPAIGN_HOLD)
///     .with_retry_at(at)?;
/// let policy = held.policy();
/// assert_eq!(policy.decision(), PolicyDecision::Defer);
/// assert_eq!(policy.code(), Some(&PolicyCode::CAMPAIGN_HOLD));
/// assert_eq!(policy.retry_at(), Some(at));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    pub(super) decision: PolicyDecision,
    pub(super) code: Option<PolicyCode>,
    pub(super) retry_at: Option<SystemTime>,
}

impl Policy {
    /// The decision.
    #[must_use]
    pub fn decision(&self) -> PolicyDecision {
        self.decision
    }

    /// Why: present on every deny and defer.
    #[must_use]
    pub fn code(&self) -> Option<&PolicyCode> {
        self.code.as_ref()
    }

    /// When to try again, if known (a deny or a defer only).
    #[must_use]
    pub fn retry_at(&self) -> Option<SystemTime> {
        self.retry_at
    }
}
