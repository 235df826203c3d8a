"""A guarantee result (``schemaVersion: 1``), read as
``schema/guarantee-result.schema.json`` and the crate's typed reader read it: settlement,
policy, impact and recovery, closed and checked against each other (a deny ran nothing, a
hold with sends is committed, impact within what was requested); the tool's own fields
beside them, never named as a problem's members. A repeated name is refused at the top and
in the contract's objects."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from . import instant
from .envelope import integer
from .reading import Decision, Kind, Reading, make
from .vocabulary import PROBLEM_MEMBERS, PolicyDecision, Settlement

_POLICY_CODE = re.compile(r"[a-z0-9]+(?:[_-][a-z0-9]+)*")
_SETTLEMENT = frozenset(("state",))
_POLICY = frozenset(("decision", "code", "retryAt"))
_IMPACT = frozenset(("requested", "committed", "deferred", "denied", "failed"))
_RECOVERY = frozenset(("suggestedNextTool",))
_STATES = {state.value: state for state in Settlement}
_DECISIONS = {decision.value: decision for decision in PolicyDecision}
_U64 = 2**64 - 1


def _object(value: Any, names: frozenset[str]) -> TypeGuard[dict[str, Any]]:
    return type(value) is dict and value.keys() <= names


def read(value: Any) -> Reading | None:
    """The reading of a guarantee result, or ``None`` when ``value`` breaks the contract."""
    if type(value) is not dict or not value.keys().isdisjoint(PROBLEM_MEMBERS):
        return None
    version = value.get("schemaVersion")
    if type(version) is bool or version != 1:
        return None
    settlement, policy = value.get("settlement"), value.get("policy")
    if not _object(settlement, _SETTLEMENT) or not _object(policy, _POLICY):
        return None
    named_state, named_decision = settlement.get("state"), policy.get("decision")
    state = _STATES.get(named_state) if type(named_state) is str else None
    decision = _DECISIONS.get(named_decision) if type(named_decision) is str else None
    if state is None or decision is None:
        return None
    code = policy.get("code")
    if "code" in policy and not (type(code) is str and _POLICY_CODE.fullmatch(code)):
        return None
    retry_at = None
    if "retryAt" in policy:
        text = policy["retryAt"]
        retry_at = instant.normalize(text) if type(text) is str else None
        if retry_at is None:
            return None
    counts: dict[str, int] = {}
    if "impact" in value:
        impact = value["impact"]
        if not _object(impact, _IMPACT):
            return None
        for name, count in impact.items():
            if not integer(count, 0, _U64):
                return None
            counts[name] = int(count)
    next_tool = None
    if "recovery" in value:
        recovery = value["recovery"]
        if not _object(recovery, _RECOVERY):
            return None
        next_tool = recovery.get("suggestedNextTool")
        if "suggestedNextTool" in recovery and type(next_tool) is not str:
            return None
    if not _consistent(state, decision, code, retry_at, counts):
        return None
    if state is Settlement.UNKNOWN or decision is PolicyDecision.DEFER:
        step = Decision.LOOK_UP
    elif decision is PolicyDecision.DENY:
        step = Decision.ASK_PERSON
    else:
        step = Decision.CONTINUE
    return make(
        step,
        Kind.GUARANTEE,
        settlement=state,
        policy=decision,
        policy_code=code,
        retry_at=retry_at,
        next_tool=next_tool,
    )


def _consistent(
    state: Settlement,
    decision: PolicyDecision,
    code: str | None,
    retry_at: str | None,
    counts: dict[str, int],
) -> bool:
    committed = counts.get("committed")
    if decision is PolicyDecision.DENY and (
        state is not Settlement.NOT_STARTED or committed not in (None, 0)
    ):
        return False
    if decision is not PolicyDecision.ALLOW and code is None:
        return False
    if decision is PolicyDecision.ALLOW and retry_at is not None:
        return False
    if (
        decision is PolicyDecision.DEFER
        and committed is not None
        and committed > 0
        and state is not Settlement.COMMITTED
    ):
        return False
    if state is Settlement.NOT_STARTED and committed not in (None, 0):
        return False
    requested = counts.get("requested")
    outcome = sum(counts.get(n, 0) for n in ("committed", "deferred", "denied", "failed"))
    return requested is None or outcome <= requested
