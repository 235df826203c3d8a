"""A PydanticAI agent driving the campaign service through the official MCP SDK client, its
model a function (no network beyond loopback): each scenario's model calls one tool, the
adapter takes the step the answer calls for, and the run's outcome is printed as JSON.

- a text to an opted-out number: the deny ends the run asking for approval;
- two texts under a limit of one call a second: the second is refused `rate-limited`,
  waited out, and sent again with the same key;
- a batch over the send window's cap: the defer ends the run with the call deferred, and the
  campaign is looked up with the tool the answer names.

    python campaign.py URL TOKEN OPTED_OUT
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_tool_result import Actions, read_value
from agent_tool_result.adapters.pydantic_ai import call_tool


def calling(tool: str, args: dict[str, Any]) -> FunctionModel:
    """A model that calls `tool` once, then says it is done."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool, args)])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(model)


def agent(
    model: FunctionModel, session: ClientSession, actions: Actions, sent: list[Any]
) -> Agent[None, str | DeferredToolRequests]:
    run: Agent[None, str | DeferredToolRequests] = Agent(
        model, output_type=[str, DeferredToolRequests]
    )

    @run.tool_plain
    async def send_sms(to: str, body: str) -> object:
        answer = await call_tool(session, "send_sms", {"to": to, "body": body}, actions)
        sent.append(answer)
        return answer

    @run.tool_plain
    async def send_campaign_batch(recipients: list[str], message: str) -> object:
        args = {"recipients": recipients, "message": message}
        return await call_tool(session, "send_campaign_batch", args, actions)

    return run


async def scenarios(url: str, token: str, opted_out: str) -> dict[str, Any]:
    report: dict[str, Any] = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        streamablehttp_client(url, headers=headers) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        actions = Actions()
        sent: list[Any] = []

        # A deny: the run ends asking for approval, the policy code in its metadata.
        denied = await agent(
            calling("send_sms", {"to": opted_out, "body": "hi"}), session, actions, sent
        ).run("text the opted-out number")
        assert isinstance(denied.output, DeferredToolRequests)
        (approval,) = denied.output.approvals
        report["deny"] = denied.output.metadata[approval.tool_call_id]["reading"]

        # A rate limit: the second text is refused, waited out and resent with its key.
        calls: list[dict[str, Any]] = []
        original = session.call_tool

        async def counted(name: str, arguments: dict[str, Any]) -> Any:
            answer = await original(name, arguments)
            calls.append(
                {
                    "key": arguments.get("idempotencyKey"),
                    "reading": read_value(
                        answer.model_dump(mode="json", by_alias=True, exclude_none=True)
                    ).to_dict(),
                }
            )
            return answer

        session.call_tool = counted  # type: ignore[method-assign]
        for n in (1, 2):
            run = agent(
                calling("send_sms", {"to": f"+1555020000{n}", "body": f"text {n}"}),
                session,
                actions,
                sent,
            )
            assert (await run.run(f"send text {n}")).output == "done"
        report["limited"] = {"calls": calls, "answers": sent}
        session.call_tool = original  # type: ignore[method-assign]

        # A defer: the run ends with the call deferred; the campaign is looked up.
        recipients = [f"+155503000{n:02d}" for n in range(4)]
        deferred = await agent(
            calling("send_campaign_batch", {"recipients": recipients, "message": "sale"}),
            session,
            actions,
            sent,
        ).run("send the batch")
        assert isinstance(deferred.output, DeferredToolRequests)
        (call,) = deferred.output.calls
        metadata = deferred.output.metadata[call.tool_call_id]
        looked = await session.call_tool(
            metadata["reading"]["nextTool"], {"campaignId": metadata["result"]["campaignId"]}
        )
        report["deferred"] = {
            "reading": metadata["reading"],
            "lookup": looked.structuredContent,
        }
    return report


print(json.dumps(asyncio.run(scenarios(*sys.argv[1:4]))))
