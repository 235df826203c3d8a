"""A REST response of the profile, read from its status, headers and body: a result (200
settled, 202 deferred with ``Retry-After``), a policy deny (422, its problem carrying the
guarantee members), a refusal (its problem type, or ``about:blank`` and its status), 401 and
403 with their ``WWW-Authenticate`` challenges, a transport fault, an envelope (200). A
``Retry-After`` in seconds is kept as said (``retry_after``); an HTTP-date, or the body's
``retryAt``, is the reading's ``retry_at``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict

from . import envelope, guarantee, instant
from . import refusal as refusals
from ._strict import NotJson, strict_loads
from .document import Document
from .document import of as document_of
from .reading import Decision, Kind, Reading, Why, make, not_contract
from .vocabulary import POLICY_DENY_TYPE, PolicyDecision, RefusalKind

Headers = Mapping[str, str] | Iterable[tuple[str, str]]

_NOT_PROFILE = not_contract(Why.NOT_A_PROFILE_RESPONSE)
_PROBLEM = "application/problem+json"
_STANDARD = ("type", "title", "status", "detail", "instance")


def _all(headers: Headers, name: str) -> list[str]:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [value for key, value in pairs if key.lower() == name]


def _first(headers: Headers, name: str) -> str | None:
    values = _all(headers, name)
    if not values or not values[0].isascii() or not values[0].isprintable():
        return None
    return values[0]


def read_rest(status: int, headers: Headers, body: bytes | str) -> Reading:
    """The reading of one REST response."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    reading = _classify(status, headers, body)
    said = (_first(headers, "retry-after") or "").strip(" \t")
    if reading.retry_at is not None and re.fullmatch(r"\+?[0-9]+", said) and int(said) < 2**64:
        return reading.model_copy(update={"retry_at": None, "retry_after": int(said)})
    return reading


def _json(body: bytes) -> Any:
    try:
        return strict_loads(body, marked=False)
    except NotJson:
        return None


def _classify(status: int, headers: Headers, body: bytes) -> Reading:
    content_type = (_first(headers, "content-type") or "").split(";")[0].strip(" \t").lower()
    value = _json(body)
    is_problem = content_type == _PROBLEM
    problem = _problem(status, value) if is_problem else None
    retry_after = _retry_after(_first(headers, "retry-after"))
    if not is_problem and isinstance(value, dict):
        uri = value.get("type")
        if type(uri) is str and (
            uri == POLICY_DENY_TYPE or RefusalKind.of_problem(uri, status) is not None
        ):
            return _NOT_PROFILE
    if problem is not None and problem["type"] == POLICY_DENY_TYPE:
        result = guarantee.read(problem["extensions"])
        if result is None or result.policy is not PolicyDecision.DENY:
            return _NOT_PROFILE
        return result.model_copy(update={"retry_at": retry_after or result.retry_at})
    if problem is not None:
        kind = RefusalKind.of_problem(problem["type"], status)
        if kind is not None:
            if isinstance(value, dict) and _refusal_route(value) is not Document.REFUSAL:
                return _NOT_PROFILE
            said = problem["extensions"].get("retryAt")
            at = retry_after or (instant.normalize(said) if type(said) is str else None)
            return refusals.reading(kind, at, status)
    if isinstance(value, dict):
        if (
            status == 200
            and not is_problem
            and "ok" in value
            and document_of(value) is Document.ENVELOPE
        ):
            try:
                marked = strict_loads(body)
            except NotJson:
                return _NOT_PROFILE
            return envelope.read(marked) or _NOT_PROFILE
        if value.get("ok") is False and "schemaVersion" not in value:
            return _NOT_PROFILE
    return _by_status(status, content_type, headers, value, problem, retry_after)


def _refusal_route(value: dict[str, Any]) -> Document:
    # RFC 9457 gives a problem without `type` or `status` about:blank and the status line.
    return document_of({**value, "type": value.get("type"), "status": value.get("status")})


def _problem(status: int, value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    members = dict(value)
    text = {name: members.pop(name, None) for name in _STANDARD}
    said = text["status"]
    member = said if type(said) is int and 400 <= said <= 599 else None
    chosen = member if member is not None else status
    if not 400 <= chosen <= 599:
        return None
    kind = text["type"]
    detail = text["detail"]
    return {
        "type": kind if type(kind) is str else "about:blank",
        "detail": detail if type(detail) is str else None,
        "extensions": members,
    }


def _by_status(
    status: int,
    content_type: str,
    headers: Headers,
    value: Any,
    problem: dict[str, Any] | None,
    retry_after: str | None,
) -> Reading:
    challenges = [
        challenge
        for line in _all(headers, "www-authenticate")
        if line.isascii() and line.isprintable()
        for challenge in parse_challenges(line)
        if challenge[0].lower() == "bearer"
    ]
    if status == 401:
        if not challenges:
            return _NOT_PROFILE
        return make(Decision.REAUTHENTICATE, Kind.UNAUTHORIZED)
    if status == 403:
        for _, params in challenges:
            if _param(params, "error") == "insufficient_scope":
                scope = _param(params, "scope")
                return make(
                    Decision.STEP_UP,
                    Kind.INSUFFICIENT_SCOPE,
                    scopes=tuple(scope.split()) if scope is not None else (),
                )
        return _NOT_PROFILE
    if status in (200, 202):
        return _success(status, content_type, headers, value, retry_after)
    if 500 <= status <= 599:
        return refusals.reading(RefusalKind.UNAVAILABLE, retry_after, status)
    if 400 <= status <= 499 and problem is not None:
        return make(Decision.FIX_ARGUMENTS, Kind.FAULT, status=status)
    return _NOT_PROFILE


def _success(
    status: int, content_type: str, headers: Headers, value: Any, retry_after: str | None
) -> Reading:
    if content_type == _PROBLEM or value is None:
        return _NOT_PROFILE
    result = guarantee.read(value) if isinstance(value, dict) else None
    if result is None:
        return _NOT_PROFILE
    if status == 202:
        if result.policy is not PolicyDecision.DEFER or _all(headers, "location"):
            return _NOT_PROFILE
        return result.model_copy(update={"retry_at": retry_after or result.retry_at})
    return result if result.policy is PolicyDecision.ALLOW else _NOT_PROFILE


def _param(params: list[tuple[str, str]], name: str) -> str | None:
    return next((value for key, value in params if key.lower() == name), None)


def parse_challenges(value: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The challenges of one ``WWW-Authenticate`` value (RFC 9110 section 11.6.1): several may
    share a line; parameters are tokens or quoted strings with ``\\`` escapes."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    i, n = 0, len(value)

    def token(i: int) -> tuple[str, int]:
        start = i
        while i < n and value[i] not in ' \t,="':
            i += 1
        return value[start:i], i

    while i < n:
        while i < n and value[i] in " \t,":
            i += 1
        word, i = token(i)
        if not word:
            if i < n:
                i += 1
            continue
        while i < n and value[i] in " \t":
            i += 1
        if i < n and value[i] == "=":
            i += 1
            while i < n and value[i] in " \t=":
                i += 1
            if i < n and value[i] == '"':
                i += 1
                chars = []
                while i < n and value[i] != '"':
                    if value[i] == "\\" and i + 1 < n:
                        i += 1
                    chars.append(value[i])
                    i += 1
                i += 1
                said = "".join(chars)
            else:
                said, i = token(i)
            if out:
                out[-1][1].append((word, said))
        else:
            out.append((word, []))
    return out


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_IMF = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (\w{3}) ([0-9]{4}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT"
)
_ASCTIME = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\w{3}) ([ 0-9][0-9]) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})"
)
_RFC850 = re.compile(
    r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-(\w{3})-([0-9]{2}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT"
)
_LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)


def _retry_after(value: str | None) -> str | None:
    """``Retry-After`` (delay seconds or an HTTP-date) as the instant it names."""
    if value is None:
        return None
    value = value.strip(" \t")
    if value and value.isascii() and value.isdigit():
        try:
            at = datetime.now(timezone.utc) + timedelta(seconds=int(value))
        except OverflowError:
            at = _LAST
        return instant.of_datetime(min(at, _LAST))
    for form, order in ((_IMF, "dmy"), (_ASCTIME, "mdy"), (_RFC850, "dmy2")):
        match = form.fullmatch(value)
        if match is None:
            continue
        groups = match.groups()
        if order == "mdy":
            month, day, year = groups[0], groups[1].strip(), int(groups[5])
            clock = groups[2:5]
        else:
            day, month, year = groups[0], groups[1], int(groups[2])
            clock = groups[3:6]
            if order == "dmy2":
                year += 2000 if year < 70 else 1900
        if month not in _MONTHS:
            return None
        hour, minute, second = (int(part) for part in clock)
        try:
            at = datetime(
                year, _MONTHS.index(month) + 1, int(day), hour, minute, second, tzinfo=timezone.utc
            )
        except ValueError:
            return None
        return instant.of_datetime(at)
    return None


class RateLimit(BaseModel):
    """An account's standing in a rate limit, as a response's ``RateLimit`` and
    ``RateLimit-Policy`` fields say it: ``remaining`` calls may follow at once, the quota is
    whole again in ``reset`` seconds; the policy allows ``quota`` calls per ``window``
    seconds, when it is named."""

    model_config = ConfigDict(frozen=True)

    policy: str
    remaining: int
    reset: int
    quota: int | None = None
    window: int | None = None


_ITEM = re.compile(r'\s*"((?:[^"\\]|\\.)*)"((?:\s*;\s*[a-z*][a-z0-9_.*-]*=[0-9]+)*)\s*')
_PARAM = re.compile(r";\s*([a-z*][a-z0-9_.*-]*)=([0-9]+)")


def _items(value: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for member in value.split(","):
        match = _ITEM.fullmatch(member)
        if match is not None:
            out[match.group(1)] = {k: int(v) for k, v in _PARAM.findall(match.group(2))}
    return out


def rate_limit(headers: Headers) -> RateLimit | None:
    """The first standing a response's ``RateLimit`` field gives, with its policy's quota and
    window when ``RateLimit-Policy`` names it; ``None`` without one."""
    standing = _items(",".join(_all(headers, "ratelimit")))
    policies = _items(",".join(_all(headers, "ratelimit-policy")))
    for name, params in standing.items():
        if "r" in params and "t" in params:
            policy = policies.get(name, {})
            return RateLimit(
                policy=name,
                remaining=params["r"],
                reset=params["t"],
                quota=policy.get("q"),
                window=policy.get("w"),
            )
    return None
