"""The readers' verdicts, by family: each contract's outcomes, the document rule, JSON the
contracts refuse, a tools/call result's carriers and its isError, and REST responses."""

from __future__ import annotations

import json

import pytest
from documents import DEFER, DENY, FAILURE, RATE_LIMITED

from agent_tool_result import (
    Category,
    Decision,
    Kind,
    PolicyDecision,
    Reading,
    RefusalKind,
    Settlement,
    Why,
    rate_limit,
    read,
    read_call_tool_result,
    read_document,
    read_rest,
    read_value,
)


def text(value: object) -> str:
    return json.dumps(value)


def test_each_category_decides_by_its_retry_class() -> None:
    steps = {
        "after-waiting": Decision.RETRY,
        "after-reobserving": Decision.OBSERVE_THEN_RETRY,
        "after-changing-request": Decision.FIX_ARGUMENTS,
        "not-recoverable": Decision.ASK_PERSON,
    }
    for category in Category:
        failure = {"ok": False, "error": {"code": "c", "category": category.value, "detail": ""}}
        reading = read_document(text(failure))
        assert reading.category is category
        assert reading.decision is steps[category.retry_class.value]


def test_a_guarantee_result_is_looked_up_denied_or_continued() -> None:
    deferred = read_document(text(DEFER))
    assert deferred.decision is Decision.LOOK_UP
    assert deferred.retry_at == "2026-12-01T09:00:00.5Z"
    assert deferred.next_tool == "lookup_marketing_campaigns"
    assert read_document(text(DENY)).decision is Decision.ASK_PERSON
    unknown = {**DEFER, "settlement": {"state": "unknown"}, "policy": {"decision": "allow"}}
    unknown.pop("impact")
    assert read_document(text(unknown)).decision is Decision.LOOK_UP
    assert read_document(text(unknown)).settlement is Settlement.UNKNOWN


def test_what_a_guarantee_result_says_must_agree() -> None:
    broken = [
        {**DENY, "settlement": {"state": "committed"}},
        {**DENY, "policy": {"decision": "deny"}},
        {**DEFER, "settlement": {"state": "unknown"}},
        {**DEFER, "impact": {"requested": 1, "committed": 1, "deferred": 1}},
        {**DENY, "policy": {"decision": "allow", "retryAt": "2026-12-01T09:00:00Z"}},
        {**DENY, "status": 422},
        {**DENY, "schemaVersion": 2},
        {**DENY, "policy": {"decision": "deny", "code": "Opted Out"}},
        {**DEFER, "policy": {"decision": "defer", "code": "w", "retryAt": "2026-02-30T00:00:00Z"}},
    ]
    for value in broken:
        assert read_document(text(value)).why is Why.BREAKS_CONTRACT, value


def test_a_refusal_is_retried_or_fixed_by_its_kind() -> None:
    limited = read_document(text({**RATE_LIMITED, "retryAt": "2026-12-05T21:40:07Z"}))
    assert (limited.decision, limited.refusal) == (Decision.RETRY, RefusalKind.RATE_LIMITED)
    assert limited.to_json() == (
        '{"decision":"retry","kind":"refusal","refusal":"rate-limited","status":429,'
        '"retryAt":"2026-12-05T21:40:07Z"}'
    )
    mismatch = {
        "type": "https://agentsfirst.ai/problems/idempotency-key-mismatch",
        "title": "t",
        "status": 422,
    }
    assert read_document(text(mismatch)).decision is Decision.FIX_ARGUMENTS
    assert read_document(text({**mismatch, "status": 400})).why is Why.BREAKS_CONTRACT


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ('{"ok":true,"ok":true}', Why.BREAKS_CONTRACT),
        ('{"ok":true,"result":{"a":1,"a":2}}', None),
        ('{"ok":true,"result":{"a":"\\ud800"}}', Why.NOT_JSON),
        ('{"ok":true,"result":{"a":"\\ud83d\\ude00"}}', None),
        ('{"ok":true,"result":{"a":1e400}}', Why.NOT_JSON),
        ('{"ok":true,"result":{"a":NaN}}', Why.NOT_JSON),
        ('\ufeff{"ok":true}', Why.NOT_JSON),
        ('{"ok":true} x', Why.NOT_JSON),
        ('{"ok":true,"result":{"a":' + "[" * 125 + "]" * 125 + "}}", None),
        ('{"ok":true,"result":{"a":' + "[" * 126 + "]" * 126 + "}}", Why.NOT_JSON),
        (
            '{"schemaVersion":1.0,"settlement":{"state":"committed"},"policy":{"decision":"allow"}}',
            None,
        ),
        (
            '{"schemaVersion":true,"settlement":{"state":"committed"},"policy":{"decision":"allow"}}',
            Why.BREAKS_CONTRACT,
        ),
    ],
)
def test_json_the_contracts_refuse(document: str, why: Why | None) -> None:
    assert read_document(document).why is why
    assert read_document(document.encode()).why is why


def test_bytes_that_are_not_utf8_are_not_json() -> None:
    assert read_document(b'{"ok":true,"result":{"a":"\xff"}}').why is Why.NOT_JSON


def test_a_tools_call_result_carries_its_document_in_either_channel() -> None:
    structured = {"structuredContent": FAILURE, "isError": True}
    only_text = {"content": [{"type": "text", "text": text(FAILURE)}], "isError": True}
    for carrier in (structured, only_text):
        reading = read_call_tool_result(text(carrier))
        assert reading.decision is Decision.OBSERVE_THEN_RETRY
        assert read(text(carrier)) == reading == read_value(carrier)
    # isError mirrors: !ok, a deny, every refusal.
    for value, error in ((FAILURE, False), (DENY, False), (RATE_LIMITED, False), (DEFER, True)):
        carried = {"structuredContent": value, "isError": error}
        assert read(text(carried)).why is Why.NOT_A_TOOL_RESULT
    assert read(text({"structuredContent": DENY, "isError": True})).policy is PolicyDecision.DENY
    assert read(text({"content": [{"type": "text", "text": "oops"}]})).why is Why.NOT_A_TOOL_RESULT
    assert read(text({"content": [], "resultType": "incomplete"})).why is Why.NOT_A_TOOL_RESULT


def test_rest_responses_by_the_profile() -> None:
    deferred = read_rest(
        202, {"Content-Type": "application/json", "Retry-After": "120"}, text(DEFER)
    )
    assert (deferred.decision, deferred.retry_after, deferred.retry_at) == (
        Decision.LOOK_UP,
        120,
        None,
    )
    dated = read_rest(202, [("retry-after", "Sun, 06 Dec 2026 09:00:00 GMT")], text(DEFER))
    assert dated.retry_at == "2026-12-06T09:00:00Z"
    problem = {"type": "https://agentsfirst.ai/problems/policy-deny", "title": "t", "status": 422}
    denied = read_rest(422, {"content-type": "application/problem+json"}, text({**problem, **DENY}))
    assert denied.decision is Decision.ASK_PERSON
    as_json = read_rest(422, {"content-type": "application/json"}, text({**problem, **DENY}))
    assert as_json.why is Why.NOT_A_PROFILE_RESPONSE
    challenge = 'Bearer error="insufficient_scope", scope="campaigns:send sms:send"'
    scoped = read_rest(403, {"www-authenticate": challenge}, b"")
    assert (scoped.decision, scoped.scopes) == (Decision.STEP_UP, ("campaigns:send", "sms:send"))
    assert read_rest(401, {"www-authenticate": 'Bearer realm="api"'}, b"").kind is Kind.UNAUTHORIZED
    assert read_rest(401, {}, b"").why is Why.NOT_A_PROFILE_RESPONSE
    busy = read_rest(503, {"retry-after": "5"}, b"")
    assert (busy.refusal, busy.retry_after, busy.status) == (RefusalKind.UNAVAILABLE, 5, 503)
    limited = read_rest(429, {"content-type": "application/problem+json"}, text(RATE_LIMITED))
    assert limited.decision is Decision.RETRY


def test_a_reading_reads_back_as_written() -> None:
    for value in (FAILURE, DENY, DEFER, RATE_LIMITED):
        reading = read_document(text(value))
        assert Reading.from_json(reading.to_json()) == reading


def test_a_rate_limit_standing_from_its_fields() -> None:
    headers = {
        "RateLimit-Policy": '"per-account";q=4;w=120',
        "RateLimit": '"per-account";r=0;t=37',
    }
    standing = rate_limit(headers)
    assert standing is not None
    assert (standing.remaining, standing.reset, standing.quota, standing.window) == (0, 37, 4, 120)
    assert rate_limit({"ratelimit": "nonsense"}) is None
    assert rate_limit({}) is None
