"""The OpenAI Agents SDK: its tool failure hook (``failure_error_function``) and a tool body
that reads a contract tool's answer.

:func:`tool_body` returns the result on ``continue`` and raises :class:`ContractAnswer`
otherwise; :func:`failure_text` is the ``failure_error_function`` that turns it into the words
the model reads (what was answered, what to do next), so ``isError`` is no longer lost.

The package README shows the lines that adopt it; ``examples/`` holds them as files.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..follow import follow, payload
from ..reading import Decision, Reading
from .errors import explain


class ContractAnswer(Exception):
    """A final answer other than ``continue``; its reading says what to do."""

    def __init__(self, reading: Reading) -> None:
        super().__init__(explain(reading))
        self.reading = reading


async def tool_body(send: Callable[[], Awaitable[Any]], *, attempts: int = 4) -> Any:
    """Sends (the same request each time) until the answer is final; its result on
    ``continue``, else :class:`ContractAnswer`."""
    followed = await follow(send, attempts=attempts)
    if followed.reading.decision is Decision.CONTINUE:
        return payload(followed.answer)
    raise ContractAnswer(followed.reading)


def failure_text(context: Any, error: Exception) -> str:
    """The Agents SDK's ``failure_error_function``: the reading's words for a contract answer,
    the error's own for anything else."""
    return str(error)
