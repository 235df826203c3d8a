"""A recorded session, a JSON document a line (NDJSON): a JSON-RPC response carrying a
``tools/call`` result gives that result; any other JSON-RPC message gives nothing; a line that
is not a JSON-RPC message is a document of its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._strict import NotJson, Repeated, loads, risky
from .read import read, read_value, scannable
from .reading import Reading

_TOOL_RESULT = frozenset(("content", "structuredContent", "isError"))


def readings(data: bytes) -> Iterator[tuple[int, Reading]]:
    """Each answer of the session ``data`` with its line number (from 1)."""
    for index, raw in enumerate(data.split(b"\n")):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip(b" \t\r\n\x0c"):
            continue
        reading = read_line(line)
        if reading is not None:
            yield index + 1, reading


def read_line(line: bytes) -> Reading | None:
    """The answer one line carries, or ``None`` for a JSON-RPC message that carries none."""
    try:
        message = loads(line)
    except NotJson:
        return read(line)
    if (
        not isinstance(message, dict)
        or (isinstance(message, Repeated) and not message.names.isdisjoint(("jsonrpc", "result")))
        or message.get("jsonrpc") is None
    ):
        return read(line)
    result = message.get("result")
    if result is None or not _names_tool_result(result):
        return None
    text = line.decode("utf-8")
    return read_value(result, check=risky(text), scan=scannable(text))


def _names_tool_result(result: Any) -> bool:
    if not isinstance(result, dict):
        return True
    if isinstance(result, Repeated) and not result.names.isdisjoint(_TOOL_RESULT):
        return True
    return any(result.get(name) is not None for name in _TOOL_RESULT)
