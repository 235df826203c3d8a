"""The readers: a result document, a ``tools/call`` result, or either, from its JSON text or
from the value an SDK handed over, to the :class:`~agent_tool_result.Reading` an agent acts on.

A ``tools/call`` result carries its document in ``structuredContent``, else in its first text
block (a host may keep only one of the two); ``isError`` must mirror it (``!ok`` for an
envelope, a deny for a guarantee result, always for a refusal)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from . import envelope, guarantee, refusal
from ._strict import NotJson, Repeated, loads, risky, strict_loads, strict_problem
from .reading import Reading, Why, not_contract
from .vocabulary import PolicyDecision

_NOT_JSON = not_contract(Why.NOT_JSON)
_BREAKS = not_contract(Why.BREAKS_CONTRACT)
_NOT_A_TOOL_RESULT = not_contract(Why.NOT_A_TOOL_RESULT)
_KNOWN = frozenset(("resultType", "content", "structuredContent", "isError", "_meta"))

Text = str | bytes


def _contract(value: Any, scan: bool = True) -> Reading | None:
    # The document rule (`document.of`), inline: this runs for every answer.
    if isinstance(value, dict):
        if "schemaVersion" in value:
            return guarantee.read(value)
        if "ok" not in value and "type" in value and "status" in value:
            return refusal.read(value)
    return envelope.read(value, scan=scan)


def scannable(text: str) -> bool:
    """Whether a value read from ``text`` may hold base64 image data: a string over 4 KiB or
    a name ``base64`` (spelt out, or escaped)."""
    return len(text) > 4096 or '"base64"' in text or "\\u" in text


def read_document(text: Text) -> Reading:
    """A bare result document (the JSON a tool answered, out of any transport), read under
    the contract its top-level names give it."""
    try:
        value = strict_loads(text)
    except NotJson:
        return _NOT_JSON
    return _contract(value) or _BREAKS


def read_call_tool_result(text: Text) -> Reading:
    """A ``tools/call`` result's JSON: the document it carries, with ``isError`` mirroring
    it."""
    try:
        source = text if isinstance(text, str) else text.decode("utf-8")
        value = loads(source)
    except (NotJson, UnicodeDecodeError):
        return _NOT_JSON
    return _call(value, risky(source), scannable(source))


def read(text: Text) -> Reading:
    """A result document or a ``tools/call`` result, told apart by their top-level names."""
    try:
        source = text if isinstance(text, str) else text.decode("utf-8")
        value = loads(source)
    except (NotJson, UnicodeDecodeError):
        return _NOT_JSON
    return read_value(value, check=risky(source), scan=scannable(source))


def read_value(value: Any, *, check: bool = True, scan: bool = True) -> Reading:
    """A parsed result document or ``tools/call`` result (a ``dict``, as ``json.loads`` or
    an SDK's ``model_dump`` gives it). ``check=False`` skips the walk for numbers beyond a
    double, lone surrogates and depth, for a value known to be free of them; ``scan=False``
    the look for base64 image data in an envelope's ``lastObservation``, for a value known to
    hold none (:func:`scannable`)."""
    if not isinstance(value, dict) and isinstance(value, Mapping):
        value = dict(value)
    # A tools/call result names content, structuredContent or isError, and no schemaVersion.
    if (
        isinstance(value, dict)
        and ("content" in value or "structuredContent" in value or "isError" in value)
        and "schemaVersion" not in value
    ):
        return _call(value, check, scan)
    if check and strict_problem(value) is not None:
        return _NOT_JSON
    return _contract(value, scan) or _BREAKS


def _call(value: Any, check: bool, scan: bool = True) -> Reading:
    # Whatever stops the result being read leaves it not JSON if any of it is not.
    def failed() -> Reading:
        return _NOT_JSON if check and strict_problem(value) is not None else _NOT_A_TOOL_RESULT

    if not isinstance(value, dict):
        return failed()
    if isinstance(value, Repeated) and not value.names.isdisjoint(_KNOWN):
        return failed()
    result_type = value.get("resultType")
    content = value.get("content", [])
    is_error = value.get("isError")
    meta = value.get("_meta")
    if check and any(
        strict_problem(part, 1) is not None
        for part in (result_type, content, meta)
        if part is not None
    ):
        return _NOT_JSON
    if result_type is not None and type(result_type) is not str:
        return failed()
    if is_error is not None and type(is_error) is not bool:
        return failed()
    if meta is not None and not isinstance(meta, dict):
        return failed()
    if type(content) is not list or not all(_block(block) for block in content):
        return failed()
    if result_type not in (None, "complete"):
        return _NOT_A_TOOL_RESULT
    carried = value.get("structuredContent")
    if carried is not None:
        if check and strict_problem(carried) is not None:
            return _NOT_A_TOOL_RESULT
    else:
        text = next((b["text"] for b in content if b.get("type") == "text"), None)
        if text is None:
            return _NOT_A_TOOL_RESULT
        try:
            carried = strict_loads(text)
        except NotJson:
            return _NOT_A_TOOL_RESULT
        scan = scannable(text)
    reading = _contract(carried, scan)
    if reading is None:
        return _NOT_A_TOOL_RESULT
    error = bool(is_error)
    if reading.ok is not None:
        mirrored = error != reading.ok
    elif reading.policy is not None:
        mirrored = error == (reading.policy is PolicyDecision.DENY)
    else:
        mirrored = error
    return reading if mirrored else _NOT_A_TOOL_RESULT


def _block(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if kind == "text":
        return type(block.get("text")) is str
    if kind == "image":
        data = block.get("data")
        return type(data) is str and type(block.get("mimeType")) is str and _base64(data)
    return type(kind) is str


def _base64(data: str) -> bool:
    """Whether ``data`` is canonical standard base64 (padded, no stray bits)."""
    try:
        raw = data.encode("ascii")
        return base64.b64encode(base64.b64decode(raw, validate=True)) == raw
    except (UnicodeEncodeError, binascii.Error):
        return False
