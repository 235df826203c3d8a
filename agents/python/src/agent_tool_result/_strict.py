"""JSON as every reader of the contracts reads it (I-JSON, RFC 7493).

Beyond what :func:`json.loads` refuses, a text is not JSON when it holds ``NaN`` or
``Infinity``, a lone UTF-16 surrogate escape (``"\\ud800"``), a number beyond a double's
range (``1e400``), or arrays and objects nested deeper than :data:`MAX_DEPTH`. An object
that repeats a name is read with the last value, as ``JSON.parse`` reads it, and marked
(:class:`Repeated`): a contract's own objects refuse it, a tool's payload keeps the last.
"""

from __future__ import annotations

import json
import math
import re
import threading
from typing import Any

MAX_DEPTH = 127
"""How many arrays and objects deep a document may nest."""

_LARGEST = 1.7976931348623157e308


class NotJson(ValueError):
    """The text is not JSON as the contracts read it."""


class Repeated(dict[str, Any]):
    """An object whose text repeated a name: the last value of each name is kept."""

    __slots__ = ("names",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        repeated: set[str] = set()
        for name, _ in pairs:
            (repeated if name in seen else seen).add(name)
        self.names = frozenset(repeated)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    return obj if len(obj) == len(pairs) else Repeated(pairs)


def _constant(name: str) -> Any:
    raise NotJson(f"{name} is not JSON")


class _Seen(threading.local):
    """What the number hooks saw in the text being read (in this thread)."""

    big = False


_seen = _Seen()


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        _seen.big = True
    return value


def _int(text: str) -> int:
    if len(text) > 308:
        _seen.big = True
    return int(text)


# A text of 309 characters or more may hold an integer beyond a double: its integers are
# read by a hook that notes one.
_SHORT = 309
_DECODERS = {
    (marked, short): json.JSONDecoder(
        object_pairs_hook=_object if marked else None,
        parse_constant=_constant,
        parse_float=_float,
        parse_int=None if short else _int,
    )
    for marked in (True, False)
    for short in (True, False)
}
_SURROGATE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def loads(text: str | bytes, *, marked: bool = True) -> Any:
    """The value of ``text``, syntax checked only (numbers, surrogates and depth are left to
    :func:`strict_problem`), its objects that repeat a name marked unless ``marked`` is false.
    Raises :class:`NotJson`. Whether the text may hold what :func:`strict_problem` finds is
    :func:`risky`'s, asked right after."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise NotJson("the bytes are not UTF-8") from err
    _seen.big = False
    try:
        return _DECODERS[marked, len(text) < _SHORT].decode(text)
    except RecursionError as err:
        raise NotJson("nested too deep") from err
    except ValueError as err:
        raise NotJson(str(err)) from err


def risky(text: str) -> bool:
    """Whether the text :func:`loads` read last (in this thread) may hold what
    :func:`strict_problem` looks for: a number beyond a double, a surrogate escape, or
    enough brackets to nest too deep."""
    return (
        _seen.big
        or ("\\u" in text and _SURROGATE.search(text) is not None)
        or (len(text) > 2 * MAX_DEPTH and text.count("[") + text.count("{") > MAX_DEPTH)
    )


def strict_problem(value: Any, depth: int = 0) -> str | None:
    """What in ``value`` (read at ``depth`` arrays and objects down) I-JSON rules out, if
    anything: a number beyond a double, a lone surrogate, nesting beyond :data:`MAX_DEPTH`."""
    stack: list[tuple[Any, int]] = [(value, depth)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            if level + 1 > MAX_DEPTH:
                return "nested too deep"
            for key, member in item.items():
                if _lone_surrogate(key):
                    return "a lone surrogate"
                stack.append((member, level + 1))
        elif isinstance(item, list):
            if level + 1 > MAX_DEPTH:
                return "nested too deep"
            stack.extend((member, level + 1) for member in item)
        elif isinstance(item, str):
            if _lone_surrogate(item):
                return "a lone surrogate"
        elif isinstance(item, float):
            if math.isinf(item):
                return "a number beyond a double"
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > _LARGEST:
            return "a number beyond a double"
    return None


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def strict_loads(text: str | bytes, *, marked: bool = True) -> Any:
    """The value of ``text`` if it is JSON as the contracts read it; else :class:`NotJson`."""
    value = loads(text, marked=marked)
    source = text if isinstance(text, str) else text.decode("utf-8")
    if risky(source):
        problem = strict_problem(value)
        if problem is not None:
            raise NotJson(problem)
    return value
