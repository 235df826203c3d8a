//! Guarantee results: the second contract, for tools with side effects an agent must be able
//! to reason about (`send_sms`, `send_campaign_batch`).
//!
//! A [`GuaranteeResult`] says three things in fixed places, beside the tool's own fields:
//!
//! - `settlement.state` ([`SettlementState`]): did the command take effect? `not_started`,
//!   `committed`, or `unknown`, which means "re-query by id before anything else".
//! - `policy` ([`Policy`]): what policy decided ([`PolicyDecision`]: `allow`, `deny`,
//!   `defer`), why ([`PolicyCode`]) and when to try again (`retryAt`).
//! - `impact` ([`Impact`]): how many recipients were requested, committed, deferred, denied or
//!   failed, each count present only when known; and `recovery.suggestedNextTool`.
//!
//! The invariants hold in the constructors (an invalid result cannot be built) and in reading
//! (an invalid document cannot be read): a deny happens before the provider (`not_started`,
//! nothing committed); a deny or a defer names its code; `retryAt` rides only on a deny or a
//! defer; a partial send with a durable hold is `committed`; counts never exceed `requested`.
//!
//! ```
//! use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode, SettlementState};
//! use std::time::{Duration, UNIX_EPOCH};
//!
//! // send_sms to an opted-out contact: denied before the provider.
//! let denied = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
//! assert_eq!(
//!     denied.to_json()?,
//!     r#"{"schemaVersion":1,"settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"contact_opted_out"}}"#,
//! );
//!
//! // A batch: 40 sent now, 60 held durably until the window reopens.
//! let retry_at = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
//! let held = GuaranteeResult::deferred(
//!     PolicyCode::CAMPAIGN_SEND_WINDOW,
//!     Some(retry_at),
//!     Impact::new().requested(100).committed(40).deferred(60),
//! )?
//! .with_next_tool("lookup_marketing_campaigns")
//! .with_fields(serde_json::json!({ "campaignId": "cmp_7f3a" }))?;
//! assert_eq!(held.settlement(), SettlementState::Committed);
//!
//! // An agent reads settlement first, then policy.
//! let read = GuaranteeResult::<serde_json::Value>::from_json(&held.to_json()?)?;
//! match read.settlement() {
//!     SettlementState::Unknown => println!("re-query by id before anything else"),
//!     _ => println!("{}", read.policy().decision().next_step()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod instant;
mod refusal;
mod state;
pub(crate) mod wire;

use std::time::SystemTime;

use serde::Serialize;

pub use refusal::{ABOUT_BLANK, Answer, NotARefusal, Refusal, RefusalKind, UnknownRefusalKind};
pub use state::{PolicyDecision, SettlementState, UnknownName};

use crate::JsonObject;
use crate::breach::Breach;
use crate::code::InvalidCode;

/// Writes `time` as the contract writes instants (`retryAt`): RFC 3339 in UTC, with
/// milliseconds only when there are some. Use it for a tool's own timestamps (an
/// `updatedAt`), so that one result carries one form of instant.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use agent_tool_result::guarantee::format_instant;
///
/// let at = UNIX_EPOCH + Duration::from_millis(1_796_115_600_250);
/// assert_eq!(format_instant(at), "2026-12-01T09:00:00.25Z");
/// ```
#[must_use]
pub fn format_instant(time: SystemTime) -> String {
    instant::Rfc3339(time).to_string()
}

/// The problem type of a policy deny, by default (REST answers it as a 422 problem).
pub const POLICY_DENY_TYPE: &str = "https://agentsfirst.ai/problems/policy-deny";

/// The one `schemaVersion` this crate reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

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

impl PolicyCode {
    /// A contact has opted out of messages: a `send_sms` deny, before the provider.
    pub const CONTACT_OPTED_OUT: PolicyCode = PolicyCode::from_static("contact_opted_out");
    /// Contact policy (quiet hours, consent, frequency caps) refuses the message.
    pub const CONTACT_POLICY: PolicyCode = PolicyCode::from_static("contact_policy");
    /// A campaign's send window is full: the rest is held durably until it reopens.
    pub const CAMPAIGN_SEND_WINDOW: PolicyCode = PolicyCode::from_static("campaign_send_window");
    /// A campaign is held for review before any send.
    pub const CAMPAIGN_HOLD: PolicyCode = PolicyCode::from_static("campaign_hold");

    /// A code from a string literal, checked at compile time in a `const`.
    ///
    /// # Panics
    ///
    /// If `code` is not a policy code; in a `const` that is a compile error.
    ///
    /// ```
    /// use agent_tool_result::guarantee::PolicyCode;
    ///
    /// const QUIET_HOURS: PolicyCode = PolicyCode::from_static("quiet_hours");
    /// assert_eq!(QUIET_HOURS.as_str(), "quiet_hours");
    /// ```
    ///
    /// ```compile_fail,E0080
    /// use agent_tool_result::guarantee::PolicyCode;
    ///
    /// const SHOUTED: PolicyCode = PolicyCode::from_static("Quiet Hours");
    /// let _ = SHOUTED;
    /// ```
    #[must_use]
    pub const fn from_static(code: &'static str) -> Self {
        assert!(
            is_policy_code(code),
            "policy codes are lowercase words joined by _ or -"
        );
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    decision: PolicyDecision,
    code: Option<PolicyCode>,
    retry_at: Option<SystemTime>,
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

/// The counts of a command's recipients, each present only when known.
///
/// ```
/// use agent_tool_result::guarantee::Impact;
///
/// let impact = Impact::new().requested(100).committed(40).deferred(60);
/// assert_eq!(impact.get_committed(), Some(40));
/// assert_eq!(impact.get_failed(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Impact {
    requested: Option<u64>,
    committed: Option<u64>,
    deferred: Option<u64>,
    denied: Option<u64>,
    failed: Option<u64>,
}

macro_rules! counts {
    ($($field:ident, $getter:ident, $doc:literal;)+) => {
        impl Impact {
            $(
                #[doc = concat!("Sets how many recipients ", $doc, ".")]
                #[must_use]
                pub fn $field(mut self, count: u64) -> Self {
                    self.$field = Some(count);
                    self
                }

                #[doc = concat!("How many recipients ", $doc, ", if known.")]
                #[must_use]
                pub fn $getter(&self) -> Option<u64> {
                    self.$field
                }
            )+
        }
    };
}

counts! {
    requested, get_requested, "the command asked for";
    committed, get_committed, "were handed to the provider";
    deferred, get_deferred, "are held durably for later";
    denied, get_denied, "policy refused";
    failed, get_failed, "failed at the provider";
}

impl Impact {
    /// No counts known.
    #[must_use]
    pub fn new() -> Self {
        Impact::default()
    }

    fn is_empty(&self) -> bool {
        *self == Impact::default()
    }

    /// Committed, deferred, denied and failed, added up (absent counts as 0).
    fn accounted(&self) -> u128 {
        [self.committed, self.deferred, self.denied, self.failed]
            .iter()
            .map(|c| u128::from(c.unwrap_or(0)))
            .sum()
    }
}

/// What the agent may call next: `{ suggestedNextTool? }`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    suggested_next_tool: Option<String>,
}

impl Recovery {
    /// The tool to call next (often `lookup_marketing_campaigns` after a defer).
    #[must_use]
    pub fn suggested_next_tool(&self) -> Option<&str> {
        self.suggested_next_tool.as_deref()
    }
}

/// A guarantee tool's result: `{ schemaVersion: 1, settlement, policy, impact?, recovery?,
/// ...the tool's own fields }`.
///
/// `T` is the tool's own fields (a struct, or `JsonObject`), written at the top level beside
/// the contract's; it must serialize to an object and name none of `schemaVersion`,
/// `settlement`, `policy`, `impact` and `recovery`.
#[derive(Clone, Debug, PartialEq)]
pub struct GuaranteeResult<T = JsonObject> {
    settlement: SettlementState,
    policy: Policy,
    impact: Impact,
    recovery: Recovery,
    fields: T,
}

/// Why a guarantee result cannot be built: the invariant it would break.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvariantError {
    rule: crate::Rule,
    message: String,
}

impl InvariantError {
    /// The invariant's rule.
    #[must_use]
    pub fn rule(&self) -> crate::Rule {
        self.rule
    }

    pub(crate) fn of(breach: Breach<'_>) -> Self {
        InvariantError {
            rule: breach.rule(),
            message: breach.to_string(),
        }
    }
}

impl GuaranteeResult<JsonObject> {
    /// Allowed and done: `committed`, with the counts.
    ///
    /// # Errors
    ///
    /// [`InvariantError`] when the counts exceed `requested`.
    pub fn committed(impact: Impact) -> Result<Self, InvariantError> {
        GuaranteeResult::checked(
            SettlementState::Committed,
            PolicyDecision::Allow,
            None,
            None,
            impact,
        )
    }

    /// Denied by policy before the provider: `not_started`, nothing committed.
    #[must_use]
    pub fn denied(code: PolicyCode) -> Self {
        GuaranteeResult::build(
            SettlementState::NotStarted,
            PolicyDecision::Deny,
            Some(code),
            None,
            Impact::new(),
        )
    }

    /// Denied by policy until `retry_at`.
    #[must_use]
    pub fn denied_until(code: PolicyCode, retry_at: SystemTime) -> Self {
        GuaranteeResult::build(
            SettlementState::NotStarted,
            PolicyDecision::Deny,
            Some(code),
            Some(retry_at),
            Impact::new(),
        )
    }

    /// Deferred by policy, maybe with part sent now: `committed` when anything was sent or is
    /// held durably (the command took effect), `not_started` otherwise.
    ///
    /// # Errors
    ///
    /// [`InvariantError`] when the counts exceed `requested`.
    pub fn deferred(
        code: PolicyCode,
        retry_at: Option<SystemTime>,
        impact: Impact,
    ) -> Result<Self, InvariantError> {
        let took_effect = impact.committed.unwrap_or(0) > 0 || impact.deferred.unwrap_or(0) > 0;
        let settlement = if took_effect {
            SettlementState::Committed
        } else {
            SettlementState::NotStarted
        };
        GuaranteeResult::checked(
            settlement,
            PolicyDecision::Defer,
            Some(code),
            retry_at,
            impact,
        )
    }

    /// The outcome is not known (the process stopped between the provider and the record):
    /// re-query by id before anything else.
    #[must_use]
    pub fn unknown() -> Self {
        GuaranteeResult::build(
            SettlementState::Unknown,
            PolicyDecision::Allow,
            None,
            None,
            Impact::new(),
        )
    }

    fn checked(
        settlement: SettlementState,
        decision: PolicyDecision,
        code: Option<PolicyCode>,
        retry_at: Option<SystemTime>,
        impact: Impact,
    ) -> Result<Self, InvariantError> {
        let result = GuaranteeResult::build(settlement, decision, code, retry_at, impact);
        match result.breach() {
            Some(breach) => Err(InvariantError::of(breach)),
            None => Ok(result),
        }
    }

    fn build(
        settlement: SettlementState,
        decision: PolicyDecision,
        code: Option<PolicyCode>,
        retry_at: Option<SystemTime>,
        impact: Impact,
    ) -> Self {
        GuaranteeResult {
            settlement,
            policy: Policy {
                decision,
                code,
                retry_at,
            },
            impact,
            recovery: Recovery::default(),
            fields: JsonObject::new(),
        }
    }
}

impl<T> GuaranteeResult<T> {
    /// Sets `recovery.suggestedNextTool`.
    #[must_use]
    pub fn with_next_tool(mut self, tool: impl Into<String>) -> Self {
        self.recovery.suggested_next_tool = Some(tool.into());
        self
    }

    /// Sets the tool's own fields (`campaignId`, ...), checked to serialize to an object that
    /// names none of the contract's fields (`schemaVersion`, `settlement`, `policy`, `impact`,
    /// `recovery`) and none of the members a policy deny's RFC 9457 problem takes for itself
    /// (`type`, `title`, `status`, `detail`, `instance`), so that every transport carries them
    /// all.
    ///
    /// # Errors
    ///
    /// [`InvariantError`] when they do not.
    pub fn with_fields<U: Serialize>(
        self,
        fields: U,
    ) -> Result<GuaranteeResult<U>, InvariantError> {
        wire::check_fields(&fields, true)?;
        Ok(GuaranteeResult {
            settlement: self.settlement,
            policy: self.policy,
            impact: self.impact,
            recovery: self.recovery,
            fields,
        })
    }

    /// The settlement: read it first.
    #[must_use]
    pub fn settlement(&self) -> SettlementState {
        self.settlement
    }

    /// What policy decided.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The counts, if any are known.
    #[must_use]
    pub fn impact(&self) -> Option<&Impact> {
        (!self.impact.is_empty()).then_some(&self.impact)
    }

    /// What to call next, if anything is suggested.
    #[must_use]
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery
            .suggested_next_tool
            .is_some()
            .then_some(&self.recovery)
    }

    /// The tool's own fields.
    #[must_use]
    pub fn fields(&self) -> &T {
        &self.fields
    }

    /// Whether the result is a policy deny: `isError` over MCP, 422 over REST.
    #[must_use]
    pub fn is_deny(&self) -> bool {
        self.policy.decision == PolicyDecision::Deny
    }

    /// The first invariant the result breaks, if any.
    pub(crate) fn breach(&self) -> Option<Breach<'static>> {
        let (decision, state, impact) = (self.policy.decision, self.settlement, &self.impact);
        let committed = impact.committed.unwrap_or(0);
        if decision == PolicyDecision::Deny
            && (state != SettlementState::NotStarted || committed > 0)
        {
            return Some(Breach::DenyAfterProvider);
        }
        if decision != PolicyDecision::Allow && self.policy.code.is_none() {
            return Some(Breach::DecisionWithoutCode);
        }
        if decision == PolicyDecision::Allow && self.policy.retry_at.is_some() {
            return Some(Breach::RetryAtOnAllow);
        }
        if decision == PolicyDecision::Defer && committed > 0 && state != SettlementState::Committed
        {
            return Some(Breach::HoldNotCommitted);
        }
        if state == SettlementState::NotStarted && committed > 0 {
            return Some(Breach::NotStartedCommitted);
        }
        if let Some(requested) = impact.requested
            && impact.accounted() > u128::from(requested)
        {
            return Some(Breach::ImpactOverRequested);
        }
        None
    }

    /// Whether the counts leave requested recipients unaccounted for under a committed
    /// settlement (a lint: the result is valid, but probably incomplete).
    #[must_use]
    pub fn has_unaccounted_recipients(&self) -> bool {
        self.settlement == SettlementState::Committed
            && self
                .impact
                .requested
                .is_some_and(|requested| self.impact.accounted() < u128::from(requested))
    }
}
