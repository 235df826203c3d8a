"""The contracts' closed sets, each in one table: the envelope's error categories, a guarantee
result's settlement states and policy decisions, and the refusals a guarantee tool answers."""

from __future__ import annotations

from enum import Enum


class RetryClass(str, Enum):
    """How a failure is recovered from."""

    AFTER_WAITING = "after-waiting"
    AFTER_REOBSERVING = "after-reobserving"
    AFTER_CHANGING_REQUEST = "after-changing-request"
    NOT_RECOVERABLE = "not-recoverable"


class Category(str, Enum):
    """An envelope error's category (MCEC 3.0), a closed set."""

    TIMEOUT = "timeout"
    AMBIGUOUS_SELECTOR = "ambiguous-selector"
    STALE_ELEMENT = "stale-element"
    NO_TARGET = "no-target"
    INVALID_ARGUMENT = "invalid-argument"
    CAPTURE_BLANK = "capture-blank"
    OCR_BLANK = "ocr-blank"
    OCR_NO_TEXT = "ocr-no-text"
    FOCUS = "focus"
    ELEVATION = "elevation"
    FOREGROUND = "foreground"
    INTERNAL = "internal"

    @property
    def retry_class(self) -> RetryClass:
        """How a failure of this category is recovered from."""
        return _CATEGORY_RETRY[self]


_CATEGORY_RETRY = {
    Category.TIMEOUT: RetryClass.AFTER_WAITING,
    Category.AMBIGUOUS_SELECTOR: RetryClass.AFTER_CHANGING_REQUEST,
    Category.STALE_ELEMENT: RetryClass.AFTER_REOBSERVING,
    Category.NO_TARGET: RetryClass.AFTER_REOBSERVING,
    Category.INVALID_ARGUMENT: RetryClass.AFTER_CHANGING_REQUEST,
    Category.CAPTURE_BLANK: RetryClass.AFTER_REOBSERVING,
    Category.OCR_BLANK: RetryClass.AFTER_REOBSERVING,
    Category.OCR_NO_TEXT: RetryClass.AFTER_CHANGING_REQUEST,
    Category.FOCUS: RetryClass.AFTER_REOBSERVING,
    Category.ELEVATION: RetryClass.NOT_RECOVERABLE,
    Category.FOREGROUND: RetryClass.AFTER_WAITING,
    Category.INTERNAL: RetryClass.NOT_RECOVERABLE,
}


class Settlement(str, Enum):
    """A guarantee result's ``settlement.state``."""

    NOT_STARTED = "not_started"
    COMMITTED = "committed"
    UNKNOWN = "unknown"


class PolicyDecision(str, Enum):
    """A guarantee result's ``policy.decision``."""

    ALLOW = "allow"
    DENY = "deny"
    DEFER = "defer"


ABOUT_BLANK = "about:blank"
POLICY_DENY_TYPE = "https://agentsfirst.ai/problems/policy-deny"
"""The problem type of a policy deny over REST (HTTP 422)."""


class RefusalKind(str, Enum):
    """Why a guarantee tool refused a call (nothing ran)."""

    KEY_MISSING = "key-missing"
    KEY_INVALID = "key-invalid"
    KEY_MISMATCH = "key-mismatch"
    KEY_IN_FLIGHT = "key-in-flight"
    INVALID_ARGUMENTS = "invalid-arguments"
    UNAVAILABLE = "unavailable"
    RATE_LIMITED = "rate-limited"

    @property
    def status(self) -> int:
        """The HTTP status it is answered with."""
        return _REFUSALS[self][0]

    @property
    def problem_type(self) -> str:
        """Its RFC 9457 problem type."""
        return _REFUSALS[self][1]

    @property
    def retry_class(self) -> RetryClass:
        """How the caller recovers."""
        return _REFUSALS[self][2]

    @classmethod
    def of_problem(cls, problem_type: str, status: int) -> RefusalKind | None:
        """The kind a problem names: its type exactly, or for ``about:blank`` its status (400
        invalid arguments, 429 rate limited, any 5xx unavailable)."""
        if problem_type == ABOUT_BLANK:
            if status == 400:
                return cls.INVALID_ARGUMENTS
            if status == 429:
                return cls.RATE_LIMITED
            if 500 <= status <= 599:
                return cls.UNAVAILABLE
            return None
        return _BY_TYPE.get(problem_type)


_PROBLEMS = "https://agentsfirst.ai/problems/"
_REFUSALS = {
    RefusalKind.KEY_MISSING: (
        400,
        _PROBLEMS + "idempotency-key-missing",
        RetryClass.AFTER_CHANGING_REQUEST,
    ),
    RefusalKind.KEY_INVALID: (
        400,
        _PROBLEMS + "idempotency-key-invalid",
        RetryClass.AFTER_CHANGING_REQUEST,
    ),
    RefusalKind.KEY_MISMATCH: (
        422,
        _PROBLEMS + "idempotency-key-mismatch",
        RetryClass.AFTER_CHANGING_REQUEST,
    ),
    RefusalKind.KEY_IN_FLIGHT: (
        409,
        _PROBLEMS + "idempotency-key-in-flight",
        RetryClass.AFTER_WAITING,
    ),
    RefusalKind.INVALID_ARGUMENTS: (400, ABOUT_BLANK, RetryClass.AFTER_CHANGING_REQUEST),
    RefusalKind.UNAVAILABLE: (503, ABOUT_BLANK, RetryClass.AFTER_WAITING),
    RefusalKind.RATE_LIMITED: (429, ABOUT_BLANK, RetryClass.AFTER_WAITING),
}
_BY_TYPE = {
    problem_type: kind
    for kind, (_, problem_type, _) in _REFUSALS.items()
    if problem_type != ABOUT_BLANK
}

PROBLEM_MEMBERS = frozenset(("type", "title", "status", "detail", "instance"))
"""RFC 9457's standard members, which a guarantee result's own fields never use."""
