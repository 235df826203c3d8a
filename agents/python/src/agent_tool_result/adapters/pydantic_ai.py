"""PydanticAI: a contract tool's answer as PydanticAI's tool protocol takes it.

``continue`` returns the result; ``ask-person`` raises ``ApprovalRequired`` (the run ends with
the call in ``DeferredToolRequests.approvals``, the policy code in its metadata);
``look-up`` raises ``CallDeferred`` (the operation is looked up, never sent again: the next
tool and the result in its metadata); ``fix-arguments`` and ``observe-then-retry`` raise
``ModelRetry`` (the model changes its call); a ``retry`` is waited out and sent again with the
same key by :func:`~agent_tool_result.follow.follow` first. Anything else (credentials, an
answer that is no contract's) raises :class:`~agent_tool_result.adapters.errors.Unanswered`.

The package README shows the lines that adopt it; ``examples/`` holds them as files.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry

from ..follow import follow, payload
from ..keys import Actions
from ..reading import Decision, Reading
from .errors import Unanswered, explain


def take(reading: Reading, answer: Any) -> Any:
    """The result of a final answer, or the exception PydanticAI expects for its decision."""
    if reading.decision is Decision.CONTINUE:
        return payload(answer)
    metadata = {"reading": reading.to_dict(), "result": payload(answer)}
    if reading.decision is Decision.ASK_PERSON:
        raise ApprovalRequired(metadata=metadata)
    if reading.decision is Decision.LOOK_UP:
        raise CallDeferred(metadata=metadata)
    if reading.decision in (Decision.FIX_ARGUMENTS, Decision.OBSERVE_THEN_RETRY, Decision.RETRY):
        raise ModelRetry(explain(reading))
    raise Unanswered(reading)


async def call_tool(
    session: Any, name: str, arguments: dict[str, Any], actions: Actions, *, attempts: int = 4
) -> Any:
    """Calls the MCP tool ``name`` through ``session`` (the MCP SDK's ``ClientSession``) with
    the action's idempotency key (``idempotencyKey``, kept across its retries), follows its
    retries, and takes the step its final answer calls for (:func:`take`)."""
    keyed = {**arguments, "idempotencyKey": str(actions.key(name, arguments))}

    async def send() -> Any:
        return await session.call_tool(name, keyed)

    followed = await follow(send, attempts=attempts)
    if followed.reading.decision is not Decision.RETRY:
        actions.settle(name, arguments)
    return take(followed.reading, followed.answer)
