"""Idempotency keys across an action's retries, and the command line's outcome lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tool_result import Actions, IdempotencyKey
from agent_tool_result.capture import main


def test_one_key_per_action_kept_across_its_retries() -> None:
    actions = Actions()
    first = actions.key("send_sms", {"to": "+1", "body": "hi"})
    assert actions.key("send_sms", {"body": "hi", "to": "+1"}) == first
    assert actions.key("send_sms", {"to": "+2", "body": "hi"}) != first
    actions.settle("send_sms", {"to": "+1", "body": "hi"})
    assert actions.key("send_sms", {"to": "+1", "body": "hi"}) != first


def test_a_key_is_printable_ascii_and_writes_as_a_structured_field() -> None:
    assert IdempotencyKey('a"b').header() == '"a\\"b"'
    for bad in ("", "é", "x" * 256, "tab\t"):
        with pytest.raises(ValueError, match="printable ASCII"):
            IdempotencyKey(bad)


def test_the_command_prints_a_line_per_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = tmp_path / "result.json"
    document.write_text('{"ok":true}')
    capture = tmp_path / "held.http"
    capture.write_bytes(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 401 Unauthorized\r\n"
        b'www-authenticate: Bearer realm="api"\r\n\r\n'
    )
    session = tmp_path / "session.ndjson"
    session.write_text(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n\n'
        '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"ok":true}}}\n'
    )
    assert main([str(document), str(capture)]) == 0
    assert main(["--ndjson", str(session)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["decision"] for line in lines] == ["continue", "reauthenticate", "continue"]
    assert lines[2]["source"] == f"{session}:3"
    assert main([str(tmp_path / "missing.json")]) == 2
