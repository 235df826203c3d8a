"""LangChain: a contract tool's answer as a LangChain tool reports it.

A tool function wrapped with :func:`contract_tool` returns the result on ``continue``, and
raises ``ToolException`` with the reading's words otherwise, which a tool built with
``handle_tool_error=True`` hands to the model; a ``retry`` is waited out and sent again with
the same idempotency key first (:func:`~agent_tool_result.follow.follow`).

The package README shows the lines that adopt it; ``examples/`` holds them as files.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any

from langchain_core.tools import ToolException

from ..follow import follow, payload
from ..reading import Decision
from .errors import explain


def contract_tool(
    send: Callable[..., Awaitable[Any]], *, attempts: int = 4
) -> Callable[..., Awaitable[Any]]:
    """``send`` (a coroutine function calling the tool, its key among its arguments or fixed
    per action by the caller), made to follow retries and raise ``ToolException`` for any
    answer but ``continue``."""

    @wraps(send)
    async def tool(*args: Any, **kwargs: Any) -> Any:
        followed = await follow(lambda: send(*args, **kwargs), attempts=attempts)
        if followed.reading.decision is Decision.CONTINUE:
            return payload(followed.answer)
        raise ToolException(explain(followed.reading))

    return tool
