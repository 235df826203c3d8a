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
//! let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
//! assert_eq!(
//!     denied.to_json()?,
//!     r#"{"schemaVersion":1,"settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"contact_opted_out"}}"#,
//! );
//!
//! // A batch: 40 sent now, 60 held durably until the window reopens.
//! let retry_at = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
//! let held: GuaranteeResult<serde_json::Value> = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
//!     .with_impact(Impact::new().with_requested(100).with_committed(40).with_deferred(60))?
//!     .with_retry_at(retry_at)?
//!     .with_next_tool("lookup_marketing_campaigns")
//!     .with_fields(serde_json::json!({ "campaignId": "cmp_7f3a" }))?;
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

pub(crate) mod fields;
mod flat;
mod impact;
pub(crate) mod instant;
mod invariant;
mod policy;
pub(crate) mod refusal;
mod result;
mod state;
pub(crate) mod wire;

use std::time::SystemTime;

pub use impact::{Impact, Tally};
pub use invariant::InvariantError;
pub use policy::{Policy, PolicyCode, is_policy_code};
pub use refusal::{
    ABOUT_BLANK, Answer, NotARefusal, POLICY_DENY_TYPE, Refusal, RefusalKind, UnknownRefusalKind,
};
pub use result::{GuaranteeResult, SCHEMA_VERSION};
pub use state::{PolicyDecision, SettlementState, UnknownName};

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
