"""The first contract's envelope (MCEC 3.0), read as ``schema/agent-tool-result.schema.json``
and the crate's typed reader read it: ``ok``, then ``result`` or ``error``; a closed set of
categories; kebab-case codes; no base64 image data in ``lastObservation``, and a valid capture
summary there when it says it is one. A repeated name is refused in the envelope, the error
and each warning; inside a payload the last one wins."""

from __future__ import annotations

import re
from typing import Any

from .reading import Decision, Kind, Reading, make
from .vocabulary import Category, RetryClass

_CODE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_ENVELOPE = frozenset(("ok", "sessionId", "result", "warnings", "error"))
_ERROR = frozenset(("code", "category", "detail", "lastObservation", "partialResult"))
_WARNING = frozenset(("code", "detail"))
_CATEGORIES = {category.value: category for category in Category}
_DECISIONS = {
    RetryClass.AFTER_WAITING: Decision.RETRY,
    RetryClass.AFTER_REOBSERVING: Decision.OBSERVE_THEN_RETRY,
    RetryClass.AFTER_CHANGING_REQUEST: Decision.FIX_ARGUMENTS,
    RetryClass.NOT_RECOVERABLE: Decision.ASK_PERSON,
}

_SUCCESS = make(Decision.CONTINUE, Kind.ENVELOPE, ok=True)


def is_code(value: Any) -> bool:
    """Whether ``value`` is a stable machine code: non-empty kebab-case."""
    return isinstance(value, str) and _CODE.fullmatch(value) is not None


def _object(value: Any) -> bool:
    return type(value) is dict


def read(value: Any, *, scan: bool = True) -> Reading | None:
    """The reading of an envelope, or ``None`` when ``value`` breaks the contract.
    ``scan=False`` skips looking for base64 image data in ``lastObservation``, for a value read
    from a text that cannot hold any (no string of 4 KiB, no ``"base64"``)."""
    if type(value) is not dict or not _ENVELOPE.issuperset(value):
        return None
    ok = value.get("ok")
    if ok is not True and ok is not False:
        return None
    session = value.get("sessionId")
    if session is not None and type(session) is not str:
        return None
    result = value.get("result")
    if result is not None and not isinstance(result, dict):
        return None
    if "warnings" in value:
        warnings = value["warnings"]
        if type(warnings) is not list or not all(map(_warning, warnings)):
            return None
    if ok:
        return None if "error" in value else _SUCCESS
    if result is not None:
        return None
    error = value.get("error")
    if type(error) is not dict or not _ERROR.issuperset(error):
        return None
    code, detail, named = error.get("code"), error.get("detail"), error.get("category")
    category = _CATEGORIES.get(named) if type(named) is str else None
    if category is None or not is_code(code) or type(detail) is not str:
        return None
    observation = error.get("lastObservation")
    if observation is not None and not (
        isinstance(observation, dict) and _observation(observation, scan)
    ):
        return None
    partial = error.get("partialResult")
    if partial is not None and not isinstance(partial, dict):
        return None
    return make(
        _DECISIONS[category.retry_class],
        Kind.ENVELOPE,
        ok=False,
        category=category,
        code=code,
    )


def _warning(value: Any) -> bool:
    return (
        _object(value)
        and value.keys() == _WARNING
        and is_code(value["code"])
        and type(value["detail"]) is str
    )


# --- lastObservation -----------------------------------------------------------------------

_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?")
_UPPER, _LOWER, _DIGIT = re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]")


def looks_like_base64(text: str) -> bool:
    """Whether ``text`` is longer than 4 KiB, decodes as base64 and mixes upper case, lower
    case and digits, as encoded binary of that length does."""
    return (
        len(text) > 4096
        and _BASE64.fullmatch(text) is not None
        and _UPPER.search(text) is not None
        and _LOWER.search(text) is not None
        and _DIGIT.search(text) is not None
    )


def _observation(value: dict[str, Any], scan: bool) -> bool:
    stack: list[Any] = [value] if scan else []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "base64" in item:
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and looks_like_base64(item):
            return False
    return value.get("kind") != "capture-summary" or _capture_summary(value)


_SUMMARY_REQUIRED = frozenset(("kind", "width", "height", "encoding", "bytes", "blankCheck"))
_SUMMARY = _SUMMARY_REQUIRED | {"window", "handle", "file", "artifact", "artifactError"}
_BLANK_CHECK = frozenset(("blank", "dominantFraction", "dominantIsDark"))
_WINDOW = frozenset(
    ("handle", "title", "className", "processName", "processId", "x", "y", "width", "height")
)
_U32, _U64 = 2**32 - 1, 2**64 - 1
_I32, _I64 = 2**31, 2**63


def integer(value: Any, low: int, high: int) -> bool:
    """Whether ``value`` is an integer as JSON Schema says (any number with a zero fraction)
    from ``low`` to ``high``."""
    if type(value) is int:
        return low <= value <= high
    if type(value) is float and value.is_integer():
        return low <= int(value) <= high
    return False


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _capture_summary(value: dict[str, Any]) -> bool:
    if not value.keys() >= _SUMMARY_REQUIRED or not value.keys() <= _SUMMARY:
        return False
    if ("artifact" in value) == ("artifactError" in value):
        return False
    for name in ("artifact", "artifactError"):
        if name in value and not (type(value[name]) is str and value[name]):
            return False
    if "file" in value and type(value["file"]) is not str:
        return False
    if "handle" in value and not integer(value["handle"], -_I64, _I64 - 1):
        return False
    if not (
        integer(value["width"], 0, _U32)
        and integer(value["height"], 0, _U32)
        and integer(value["bytes"], 0, _U64)
        and value["encoding"] == "png"
    ):
        return False
    check = value["blankCheck"]
    if not (
        isinstance(check, dict)
        and check.keys() == _BLANK_CHECK
        and type(check["blank"]) is bool
        and type(check["dominantIsDark"]) is bool
        and _number(check["dominantFraction"])
        and 0 <= check["dominantFraction"] <= 1
    ):
        return False
    return "window" not in value or _window(value["window"])


def _window(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.keys() == _WINDOW
        and integer(value["handle"], -_I64, _I64 - 1)
        and all(type(value[name]) is str for name in ("title", "className", "processName"))
        and integer(value["processId"], 0, _U32)
        and integer(value["x"], -_I32, _I32 - 1)
        and integer(value["y"], -_I32, _I32 - 1)
        and integer(value["width"], 0, _U32)
        and integer(value["height"], 0, _U32)
    )
