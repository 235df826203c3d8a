"""Read any agent tool's result and take the next step it calls for.

The readers of the result contracts for agents written in Python: an envelope (MCEC 3.0), a
guarantee result or a guarantee tool's refusal, from a ``tools/call`` result, a REST
response or raw JSON, to one :class:`Reading` whose :class:`Decision` says what to do next.
The verdicts are the Rust crate's ``agent-tool-result`` and ``atr classify``'s, line for line.

>>> from agent_tool_result import read, Decision
>>> error = {"code": "element-stale", "category": "stale-element", "detail": "gone"}
>>> import json
>>> read(json.dumps({"ok": False, "error": error})).decision
<Decision.OBSERVE_THEN_RETRY: 'observe-then-retry'>
"""

from .document import Document
from .keys import Actions, IdempotencyKey
from .read import read, read_call_tool_result, read_document, read_value
from .reading import Decision, Kind, Reading, Why
from .rest import RateLimit, rate_limit, read_rest
from .vocabulary import Category, PolicyDecision, RefusalKind, RetryClass, Settlement

__all__ = [
    "Actions",
    "Category",
    "Decision",
    "Document",
    "IdempotencyKey",
    "Kind",
    "PolicyDecision",
    "RateLimit",
    "Reading",
    "RefusalKind",
    "RetryClass",
    "Settlement",
    "Why",
    "rate_limit",
    "read",
    "read_call_tool_result",
    "read_document",
    "read_rest",
    "read_value",
]
