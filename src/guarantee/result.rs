//! [`GuaranteeResult`]: the contract's fixed places (settlement, policy, impact, recovery)
//! beside the tool's own fields, built only in states that keep the invariants.

use std::time::SystemTime;

use serde::Serialize;

use super::fields::check_fields;
use super::impact::Impact;
use super::invariant::InvariantError;
use super::policy::{Policy, PolicyCode};
use super::state::{PolicyDecision, SettlementState};
use crate::JsonObject;
use crate::breach::Breach;

/// The one `schemaVersion` this crate reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

/// What the agent may call next: `{ suggestedNextTool? }`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    pub(super) suggested_next_tool: Option<String>,
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
    pub(super) settlement: SettlementState,
    pub(super) policy: Policy,
    pub(super) impact: Impact,
    pub(super) recovery: Recovery,
    pub(super) fields: T,
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
        check_fields(&fields, true)?;
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
