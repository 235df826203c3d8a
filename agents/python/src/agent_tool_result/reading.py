"""What an answer calls for an agent to do: the :class:`Decision`, one closed set, and the
:class:`Reading`, the one outcome form every reader of the contracts gives (this package, the
Rust crate, ``atr classify --format json`` and the npm package print the same line for the
same bytes)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .vocabulary import Category, PolicyDecision, RefusalKind, Settlement


class Decision(str, Enum):
    """The next step an agent takes after a tool's answer."""

    CONTINUE = "continue"
    """Go on with the result."""
    RETRY = "retry"
    """Wait until ``retry_at`` (when given), then call again with the same idempotency key."""
    LOOK_UP = "look-up"
    """Look the operation up (the tool ``next_tool`` names); do not send it again."""
    OBSERVE_THEN_RETRY = "observe-then-retry"
    """Observe again (query, find, capture), then retry."""
    ASK_PERSON = "ask-person"
    """Ask a person: the policy code, or the failure, says why."""
    FIX_ARGUMENTS = "fix-arguments"
    """Change the request (its arguments or its key), then call again."""
    REAUTHENTICATE = "reauthenticate"
    """Get a fresh token, then call again."""
    STEP_UP = "step-up"
    """Get a token with the scopes named, then call again."""
    STOP = "stop"
    """Not a result of the contracts: stop, and report why."""


class Kind(str, Enum):
    """What a reader found."""

    ENVELOPE = "envelope"
    GUARANTEE = "guarantee"
    REFUSAL = "refusal"
    UNAUTHORIZED = "unauthorized"
    INSUFFICIENT_SCOPE = "insufficient-scope"
    FAULT = "fault"
    NOT_CONTRACT = "not-contract"


class Why(str, Enum):
    """Why an answer is not a result of the contracts."""

    NOT_JSON = "not-json"
    BREAKS_CONTRACT = "breaks-contract"
    NOT_A_TOOL_RESULT = "not-a-tool-result"
    NOT_A_PROFILE_RESPONSE = "not-a-profile-response"


# The outcome form's members, in the order it writes them.
_MEMBERS = (
    ("decision", "decision"),
    ("kind", "kind"),
    ("ok", "ok"),
    ("category", "category"),
    ("code", "code"),
    ("settlement", "settlement"),
    ("policy", "policy"),
    ("policy_code", "policyCode"),
    ("refusal", "refusal"),
    ("status", "status"),
    ("retry_at", "retryAt"),
    ("retry_after", "retryAfter"),
    ("next_tool", "nextTool"),
    ("scopes", "scopes"),
    ("why", "why"),
)


class Reading(BaseModel):
    """What a reader made of one answer: the decision and what it rests on. Written as one
    JSON object (:meth:`to_json`), members in a fixed order, absent ones left out."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    decision: Decision
    kind: Kind
    ok: bool | None = None
    category: Category | None = None
    code: str | None = None
    settlement: Settlement | None = None
    policy: PolicyDecision | None = None
    policy_code: str | None = Field(default=None, alias="policyCode")
    refusal: RefusalKind | None = None
    status: int | None = None
    retry_at: str | None = Field(default=None, alias="retryAt")
    """When to call again or look up: RFC 3339 in UTC."""
    retry_after: int | None = Field(default=None, alias="retryAfter")
    """A ``Retry-After`` in seconds, as a REST response said it."""
    next_tool: str | None = Field(default=None, alias="nextTool")
    scopes: tuple[str, ...] | None = None
    why: Why | None = None

    def to_dict(self) -> dict[str, Any]:
        """The outcome form as a dict: the members present, in order."""
        out: dict[str, Any] = {}
        for name, wire in _MEMBERS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, Enum):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            out[wire] = value
        return out

    def to_json(self) -> str:
        """The one outcome form: compact JSON, one line."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Reading:
        """A reading written by :meth:`to_json` (or by ``atr``)."""
        return cls.model_validate_json(text)

    @property
    def is_contract_result(self) -> bool:
        """Whether the answer was a result of the contracts (anything but a stop)."""
        return self.kind is not Kind.NOT_CONTRACT


_DEFAULTS = {name: None for name, _ in _MEMBERS}
_new = object.__new__
_set = object.__setattr__


# Readings are immutable: one made is handed out again for the same members (at most this many
# kept, the first ones met), so a stream of answers builds few.
_KEPT = 4096
_made: dict[tuple[Any, ...], Reading] = {}


def make(decision: Decision, kind: Kind, **members: Any) -> Reading:
    """A reading of members already checked (no validation: the readers build only these),
    made as ``model_construct`` makes one, without its per-field work."""
    key = (decision, kind, *members.items())
    made = _made.get(key)
    if made is not None:
        return made
    fields = {**_DEFAULTS, "decision": decision, "kind": kind, **members}
    reading: Reading = _new(Reading)
    _set(reading, "__dict__", fields)
    _set(reading, "__pydantic_fields_set__", {"decision", "kind", *members})
    _set(reading, "__pydantic_extra__", None)
    _set(reading, "__pydantic_private__", None)
    if len(_made) < _KEPT:
        _made[key] = reading
    return reading


def not_contract(why: Why) -> Reading:
    """Not a result of the contracts, for ``why``."""
    return make(Decision.STOP, Kind.NOT_CONTRACT, why=why)
