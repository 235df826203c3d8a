"""A guarantee tool's refusal: an RFC 9457 problem (``type``, ``title``, ``status``, and an
optional ``detail`` and ``retryAt``) whose type and status name one of the refusals; nothing
ran. Its extension members are the producer's; a repeated standard member is refused."""

from __future__ import annotations

from typing import Any

from . import instant
from ._strict import Repeated
from .reading import Decision, Kind, Reading, make
from .vocabulary import ABOUT_BLANK, RefusalKind, RetryClass

_KNOWN = frozenset(("type", "title", "status", "detail", "retryAt"))


def decision_of(kind: RefusalKind) -> Decision:
    """A key in flight, a rate limit or an unavailable tool is retried with the same key;
    any other refusal is fixed first."""
    return (
        Decision.RETRY if kind.retry_class is RetryClass.AFTER_WAITING else Decision.FIX_ARGUMENTS
    )


def reading(kind: RefusalKind, retry_at: str | None = None, status: int | None = None) -> Reading:
    """The reading of a refusal of ``kind`` (its status the kind's unless given)."""
    return make(
        decision_of(kind),
        Kind.REFUSAL,
        refusal=kind,
        status=kind.status if status is None else status,
        retry_at=retry_at,
    )


def read(value: Any) -> Reading | None:
    """The reading of a refusal, or ``None`` when ``value`` is not one."""
    if not isinstance(value, dict):
        return None
    if isinstance(value, Repeated) and not value.names.isdisjoint(_KNOWN):
        return None
    problem_type, title, status = value.get("type"), value.get("title"), value.get("status")
    if type(problem_type) is not str or type(title) is not str:
        return None
    if type(status) is not int or not 0 <= status <= 65535:
        return None
    detail = value.get("detail")
    if detail is not None and type(detail) is not str:
        return None
    kind = RefusalKind.of_problem(problem_type, status)
    if kind is None or (kind.problem_type != ABOUT_BLANK and kind.status != status):
        return None
    retry_at = value.get("retryAt")
    if retry_at is not None:
        retry_at = instant.normalize(retry_at) if type(retry_at) is str else None
        if retry_at is None:
            return None
    return reading(kind, retry_at)
