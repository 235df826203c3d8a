"""Taking the step a reading calls for: :func:`read_answer` reads whatever a client handed
back, and :func:`follow` calls a tool until its answer is final, waiting as a ``retry``
says and sending the same request (so the same idempotency key) each time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .read import read, read_value
from .reading import Decision, Reading


def read_answer(answer: Any) -> Reading:
    """The reading of a tool's answer as a client hands it back: the MCP SDK's
    ``CallToolResult`` (any pydantic model), a ``dict`` (a ``tools/call`` result or a bare
    document), or JSON text."""
    if isinstance(answer, (str, bytes)):
        return read(answer)
    dump = getattr(answer, "model_dump", None)
    if callable(dump):
        answer = dump(mode="json", by_alias=True, exclude_none=True)
    return read_value(answer)


def payload(answer: Any) -> Any:
    """The document an answer carries: its ``structuredContent``, else its first text block's
    text, else the answer itself."""
    dump = getattr(answer, "model_dump", None)
    if callable(dump):
        answer = dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(answer, dict):
        if answer.get("structuredContent") is not None:
            return answer["structuredContent"]
        for block in answer.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                return block.get("text")
    return answer


def wait_for(reading: Reading, *, longest: float = 60.0) -> float:
    """How many seconds a ``retry`` waits: its ``retry_after``, or until its ``retry_at``, at
    most ``longest`` (none when neither is given)."""
    if reading.retry_after is not None:
        return min(float(reading.retry_after), longest)
    if reading.retry_at is not None:
        return max(0.0, min(_seconds_until(reading.retry_at), longest))
    return 0.0


def _seconds_until(at: str) -> float:
    whole, _, fraction = at.removesuffix("Z").partition(".")
    try:
        moment = datetime.fromisoformat(whole).replace(tzinfo=timezone.utc)
    except ValueError:  # year 0000: long past
        return 0.0
    late = float(f"0.{fraction}") if fraction else 0.0
    return (moment - datetime.now(timezone.utc)).total_seconds() + late


@dataclass(frozen=True)
class Followed:
    """A tool's final answer, its reading, and how many times it was sent."""

    answer: Any
    reading: Reading
    calls: int


async def follow(
    call: Callable[[], Awaitable[Any]],
    *,
    attempts: int = 4,
    longest: float = 60.0,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Followed:
    """Calls ``call`` until its answer is not a ``retry`` (or ``attempts`` calls were made),
    waiting what each ``retry`` says first. ``call`` sends the same request each time: the
    same arguments and the same idempotency key, so a call that ran answers its first
    result and none runs twice."""
    calls = 0
    while True:
        answer = await call()
        calls += 1
        reading = read_answer(answer)
        if reading.decision is not Decision.RETRY or calls >= attempts:
            return Followed(answer, reading, calls)
        await sleep(wait_for(reading, longest=longest))
