//! [`GuaranteeResult`]: the contract's fixed places (settlement, policy, impact, recovery)
//! beside the tool's own fields, built only in states that keep the invariants.

use std::time::SystemTime;

use serde::Serialize;

use super::fields::check_fields;
use super::impact::{Impact, Tally};
use super::instant;
use super::invariant::InvariantError;
use super::policy::{Policy, PolicyCode};
use super::state::{PolicyDecision, SettlementState};
use crate::JsonObject;
use crate::breach::Breach;

/// The one `schemaVersion` this crate reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

/// What the agent may call next: `{ suggestedNextTool? }`, read through
/// [`GuaranteeResult::suggested_next_tool`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Recovery {
    pub(super) suggested_next_tool: Option<String>,
}

/// A guarantee tool's result: `{ schemaVersion: 1, settlement, policy, impact?, recovery?,
/// ...the tool's own fields }`.
///
/// `T` is the tool's own fields (a struct, or `JsonObject`), written at the top level beside
/// the contract's; it must serialize to an object and name none of `schemaVersion`,
/// `settlement`, `policy`, `impact` and `recovery`. A result of any decision has the type of
/// the tool's fields, and holds them only where the decision has them: a deny happens before
/// anything is created, so it has none, while a committed result names what it created. One
/// tool function thus returns every decision as one type:
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
/// use serde::Serialize;
///
/// #[derive(Serialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Sent {
///     message_id: String,
/// }
///
/// fn send_sms(opted_out: bool) -> GuaranteeResult<Sent> {
///     if opted_out {
///         return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
///     }
///     GuaranteeResult::committed()
///         .with_fields(Sent { message_id: "msg_1".into() })
///         .expect("no contract field is named")
/// }
///
/// assert!(send_sms(true).fields().is_none());
/// assert_eq!(send_sms(false).fields().map(|sent| sent.message_id.as_str()), Some("msg_1"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GuaranteeResult<T = JsonObject> {
    pub(super) settlement: SettlementState,
    pub(super) policy: Policy,
    pub(super) impact: Impact,
    pub(super) recovery: Recovery,
    pub(super) fields: Option<T>,
}

/// The constructors name the decision and take only what it needs; what a result may carry
/// besides is added with a `with_*` builder, and every builder that could break an invariant
/// checks it. A result starts without the tool's fields, of whatever type they have.
impl<T> GuaranteeResult<T> {
    /// Allowed and done: `committed`. Add the counts with [`with_impact`](Self::with_impact)
    /// and what was created with [`with_fields`](Self::with_fields).
    #[must_use]
    pub fn committed() -> Self {
        GuaranteeResult::build(SettlementState::Committed, PolicyDecision::Allow, None)
    }

    /// One of one, done: `committed` with `impact` `{ requested: 1, committed: 1 }`, the
    /// result a tool that makes one thing (a message sent, say) answers most.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{GuaranteeResult, SettlementState};
    ///
    /// let sent: GuaranteeResult = GuaranteeResult::committed_one();
    /// assert_eq!(sent.settlement(), SettlementState::Committed);
    /// assert_eq!(sent.impact().and_then(|i| i.committed()), Some(1));
    /// ```
    #[must_use]
    pub fn committed_one() -> Self {
        let mut one = GuaranteeResult::committed();
        one.impact = Impact::new().with_requested(1).with_committed(1);
        one
    }

    /// Denied by policy before the provider: `not_started`, nothing committed, nothing
    /// created. Add when to try again with [`with_retry_at`](Self::with_retry_at), and the
    /// counts (requested, denied) with [`with_impact`](Self::with_impact).
    #[must_use]
    pub fn denied(code: PolicyCode) -> Self {
        GuaranteeResult::build(
            SettlementState::NotStarted,
            PolicyDecision::Deny,
            Some(code),
        )
    }

    /// Deferred by policy: `not_started` until [`with_impact`](Self::with_impact) counts a
    /// part sent now or held durably, which makes it `committed` (the command took effect).
    /// Add when the hold is released with [`with_retry_at`](Self::with_retry_at).
    #[must_use]
    pub fn deferred(code: PolicyCode) -> Self {
        GuaranteeResult::build(
            SettlementState::NotStarted,
            PolicyDecision::Defer,
            Some(code),
        )
    }

    /// The outcome is not known (contact was lost between the provider and the record):
    /// re-query by id before anything else. Add what was counted before contact was lost with
    /// [`with_impact`](Self::with_impact).
    #[must_use]
    pub fn unknown() -> Self {
        GuaranteeResult::build(SettlementState::Unknown, PolicyDecision::Allow, None)
    }

    /// Done, with its counts and the tool's fields: `committed`, `requested` the tally's sum.
    /// It cannot fail: the counts add up by construction, and the fields' names are checked
    /// once for their type where the tool is registered (`registry::Registry::guarantee`);
    /// fields that name a contract field anyway do not serialize, and the replay sequence
    /// answers such a result as a lost one (`unknown`).
    ///
    /// ```
    /// use agent_tool_result::guarantee::{GuaranteeResult, SettlementState, Tally};
    /// use serde_json::json;
    ///
    /// let sent = GuaranteeResult::committed_with(Tally::sent(1), json!({ "messageId": "msg_1" }));
    /// assert_eq!(sent.settlement(), SettlementState::Committed);
    /// assert_eq!(sent.impact().and_then(|i| i.requested()), Some(1));
    /// assert_eq!(sent.field("messageId"), Some(&json!("msg_1")));
    /// ```
    #[must_use]
    pub fn committed_with(tally: Tally, fields: T) -> Self {
        let mut result = GuaranteeResult::committed();
        result.impact = tally.into();
        result.fields = Some(fields);
        result
    }

    /// Deferred by policy `code` with its retry: the tally (what was sent now, what is held
    /// durably until `retry_at`, taken into the years 0000 to 9999 the contract writes), and
    /// the tool's fields. `committed` when anything was sent or held (the command took effect),
    /// `not_started` otherwise; it cannot fail, as [`committed_with`](Self::committed_with).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, SettlementState, Tally};
    /// use serde_json::json;
    ///
    /// let later = SystemTime::now() + Duration::from_secs(3600);
    /// let held = GuaranteeResult::deferred_with(
    ///     PolicyCode::CAMPAIGN_SEND_WINDOW, later, Tally::sent(5).with_held(95), json!({ "campaignId": "cmp_1" }),
    /// );
    /// assert_eq!(held.settlement(), SettlementState::Committed);
    /// assert_eq!(held.impact().and_then(|i| i.deferred()), Some(95));
    /// ```
    #[must_use]
    pub fn deferred_with(code: PolicyCode, retry_at: SystemTime, tally: Tally, fields: T) -> Self {
        let mut result = GuaranteeResult::deferred(code);
        result.impact = tally.into();
        if tally.committed() > 0 || tally.held() > 0 {
            result.settlement = SettlementState::Committed;
        }
        result.policy.retry_at = Some(instant::clamped(retry_at));
        result.fields = Some(fields);
        result
    }

    /// Denied by policy `code`, to try again at `retry_at` (taken into the years 0000 to
    /// 9999): [`denied`](Self::denied) with its retry, which cannot fail.
    #[must_use]
    pub fn denied_until(code: PolicyCode, retry_at: SystemTime) -> Self {
        let mut result = GuaranteeResult::denied(code);
        result.policy.retry_at = Some(instant::clamped(retry_at));
        result
    }

    fn build(
        settlement: SettlementState,
        decision: PolicyDecision,
        code: Option<PolicyCode>,
    ) -> Self {
        GuaranteeResult {
            settlement,
            policy: Policy {
                decision,
                code,
                retry_at: None,
            },
            impact: Impact::new(),
            recovery: Recovery::default(),
            fields: None,
        }
    }
}

impl GuaranteeResult<JsonObject> {
    /// The tool's own field `name`, if the result has it.
    ///
    /// ```
    /// use agent_tool_result::guarantee::GuaranteeResult;
    /// use serde_json::json;
    ///
    /// let sent: GuaranteeResult = GuaranteeResult::committed()
    ///     .with_fields(json!({ "messageId": "msg_1" }).as_object().unwrap().clone())?;
    /// assert_eq!(sent.field("messageId"), Some(&json!("msg_1")));
    /// assert_eq!(sent.field("campaignId"), None);
    /// # Ok::<(), agent_tool_result::guarantee::InvariantError>(())
    /// ```
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&serde_json::Value> {
        self.fields.as_ref().and_then(|fields| fields.get(name))
    }
}

impl GuaranteeResult<serde_json::Value> {
    /// The tool's own field `name`, if the result has it.
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&serde_json::Value> {
        self.fields.as_ref().and_then(|fields| fields.get(name))
    }
}

impl<T> GuaranteeResult<T> {
    /// Sets the counts. A defer that counts a part sent now or held durably is `committed`
    /// (the command took effect), one that counts neither `not_started`.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode, SettlementState};
    ///
    /// let held: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
    ///     .with_impact(Impact::new().with_requested(100).with_committed(40).with_deferred(60))?;
    /// assert_eq!(held.settlement(), SettlementState::Committed);
    ///
    /// // Counted before contact was lost: 40 sent, the rest not known.
    /// let lost: GuaranteeResult = GuaranteeResult::unknown().with_impact(Impact::new().with_requested(100).with_committed(40))?;
    /// assert_eq!(lost.impact().and_then(|i| i.committed()), Some(40));
    ///
    /// let err = GuaranteeResult::<agent_tool_result::JsonObject>::denied(PolicyCode::CONTACT_OPTED_OUT)
    ///     .with_impact(Impact::new().with_committed(1))
    ///     .unwrap_err();
    /// assert_eq!(err.rule().as_str(), "guarantee-deny-before-provider");
    /// # Ok::<(), agent_tool_result::guarantee::InvariantError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvariantError`] when the counts exceed `requested`, or count sends on a deny.
    pub fn with_impact(mut self, impact: Impact) -> Result<Self, InvariantError> {
        if self.policy.decision == PolicyDecision::Defer {
            let took_effect = impact.committed.unwrap_or(0) > 0 || impact.deferred.unwrap_or(0) > 0;
            self.settlement = if took_effect {
                SettlementState::Committed
            } else {
                SettlementState::NotStarted
            };
        }
        self.impact = impact;
        self.checked()
    }

    /// Sets `policy.retryAt`, when to try again: on a deny or a defer only.
    ///
    /// # Errors
    ///
    /// [`InvariantError`] on an allow (a committed or unknown result).
    pub fn with_retry_at(mut self, retry_at: SystemTime) -> Result<Self, InvariantError> {
        self.policy.retry_at = Some(retry_at);
        self.checked()
    }

    /// Sets `recovery.suggestedNextTool`.
    #[must_use]
    pub fn with_next_tool(mut self, tool: impl Into<String>) -> Self {
        self.recovery.suggested_next_tool = Some(tool.into());
        self
    }

    fn checked(self) -> Result<Self, InvariantError> {
        match self.breach() {
            Some(breach) => Err(InvariantError::of(breach)),
            None => Ok(self),
        }
    }

    /// Sets the tool's own fields (`campaignId`, ...), checked to serialize to an object that
    /// names none of the contract's fields (`schemaVersion`, `settlement`, `policy`, `impact`,
    /// `recovery`) and none of the members a policy deny's RFC 9457 problem takes for itself
    /// (`type`, `title`, `status`, `detail`, `instance`), so that every transport carries them
    /// all. Fields that write no member at all are no fields: the result reads back without
    /// them.
    ///
    /// # Errors
    ///
    /// [`InvariantError`] when they do not.
    pub fn with_fields(mut self, fields: T) -> Result<Self, InvariantError>
    where
        T: Serialize,
    {
        let written = check_fields(&fields)?;
        self.fields = (!written.is_empty()).then_some(fields);
        Ok(self)
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

    /// The tool to call next, if one is suggested (often `lookup_marketing_campaigns` after
    /// a defer).
    #[must_use]
    pub fn suggested_next_tool(&self) -> Option<&str> {
        self.recovery.suggested_next_tool.as_deref()
    }

    /// The tool's own fields, where the result has them (never on a deny).
    #[must_use]
    pub fn fields(&self) -> Option<&T> {
        self.fields.as_ref()
    }

    /// The tool's own fields, taken out.
    #[must_use]
    pub fn into_fields(self) -> Option<T> {
        self.fields
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
        if self
            .policy
            .retry_at
            .is_some_and(|at| !instant::in_range(at))
        {
            return Some(Breach::RetryAtOutOfRange);
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
