"""Each adapter in its framework, offline: a scripted MCP session answers as a contract tool
would (the MCP SDK's own CallToolResult), and the framework sees what the decision says."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from documents import DENY, RATE_LIMITED, SENT
from langchain_core.tools import StructuredTool
from mcp.types import CallToolResult, TextContent
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_tool_result import Actions
from agent_tool_result.adapters import openai_agents
from agent_tool_result.adapters.langchain import contract_tool
from agent_tool_result.adapters.pydantic_ai import call_tool


def answer(document: dict[str, Any], is_error: bool) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text="see structuredContent")],
        structuredContent=document,
        isError=is_error,
    )


class Session:
    """Answers each call with the next scripted answer, and keeps what it was sent."""

    def __init__(self, *answers: CallToolResult) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        self.calls.append((name, arguments))
        return self.answers.pop(0)


def test_pydantic_ai_a_rate_limit_waits_and_resends_with_the_same_key() -> None:
    session = Session(answer(RATE_LIMITED, True), answer(SENT, False))
    result = asyncio.run(call_tool(session, "send_sms", {"to": "+1"}, Actions()))
    assert result == SENT
    keys = [arguments["idempotencyKey"] for _, arguments in session.calls]
    assert len(keys) == 2
    assert keys[0] == keys[1]


def calls_send_sms(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("send_sms", {"to": "+1", "body": "hi"})])
    return ModelResponse(parts=[TextPart("done")])


def test_pydantic_ai_a_deny_ends_the_run_asking_for_approval() -> None:
    session = Session(answer(DENY, True))
    agent = Agent(FunctionModel(calls_send_sms), output_type=[str, DeferredToolRequests])
    actions = Actions()

    @agent.tool_plain
    async def send_sms(to: str, body: str) -> object:
        return await call_tool(session, "send_sms", {"to": to, "body": body}, actions)

    output = agent.run_sync("text +1").output
    assert isinstance(output, DeferredToolRequests)
    (approval,) = output.approvals
    assert approval.tool_name == "send_sms"
    reading = output.metadata[approval.tool_call_id]["reading"]
    assert (reading["decision"], reading["policyCode"]) == ("ask-person", "contact_opted_out")


def test_langchain_a_refusal_reaches_the_model_as_what_to_do() -> None:
    bad = {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": "to"}
    session = Session(answer(bad, True), answer(SENT, False))

    async def send(to: str) -> CallToolResult:
        return await session.call_tool("send_sms", {"to": to, "idempotencyKey": "k"})

    tool = StructuredTool.from_function(
        coroutine=contract_tool(send), name="send_sms", description="x", handle_tool_error=True
    )
    refused = asyncio.run(tool.ainvoke({"to": "abc"}))
    assert "refusal invalid-arguments" in refused
    assert "change the arguments" in refused
    assert asyncio.run(tool.ainvoke({"to": "+1"})) == SENT


def test_openai_agents_the_failure_hook_says_what_was_answered() -> None:
    session = Session(answer(DENY, False))
    with pytest.raises(openai_agents.ContractAnswer) as raised:
        asyncio.run(openai_agents.tool_body(lambda: session.call_tool("send_sms", {})))
    # A deny with isError false is not a contract result: the hook says so.
    text = openai_agents.failure_text(None, raised.value)
    assert "not-a-tool-result" in text
    assert "stop" in text
