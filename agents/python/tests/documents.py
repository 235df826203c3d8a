"""The contract documents the tests read: a failure, a deny, a defer, a send and a rate
limit's refusal."""

from __future__ import annotations

from typing import Any

FAILURE: dict[str, Any] = {
    "ok": False,
    "error": {"code": "element-stale", "category": "stale-element", "detail": "d"},
}
DENY: dict[str, Any] = {
    "schemaVersion": 1,
    "settlement": {"state": "not_started"},
    "policy": {"decision": "deny", "code": "contact_opted_out"},
}
DEFER: dict[str, Any] = {
    "schemaVersion": 1,
    "settlement": {"state": "committed"},
    "policy": {"decision": "defer", "code": "window", "retryAt": "2026-12-01T09:00:00.500+00:00"},
    "impact": {"requested": 3, "committed": 1, "deferred": 2},
    "recovery": {"suggestedNextTool": "lookup_marketing_campaigns"},
    "campaignId": "cmp_1",
}
SENT: dict[str, Any] = {
    "schemaVersion": 1,
    "settlement": {"state": "committed"},
    "policy": {"decision": "allow"},
    "messageId": "msg_1",
}
RATE_LIMITED: dict[str, Any] = {"type": "about:blank", "title": "Too Many Requests", "status": 429}
