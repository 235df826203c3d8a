"""A PydanticAI agent whose `send_sms` tool is a contract tool on an MCP server: a deny asks
for approval, a defer is looked up, a rate limit is waited out with the same key."""

from __future__ import annotations

from mcp import ClientSession
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.models import Model

from agent_tool_result import Actions
from agent_tool_result.adapters.pydantic_ai import call_tool


def sms_agent(model: Model, session: ClientSession) -> Agent[None, str | DeferredToolRequests]:
    agent = Agent(model, output_type=[str, DeferredToolRequests])
    actions = Actions()

    @agent.tool_plain
    async def send_sms(to: str, body: str) -> object:
        """Send a text message."""
        return await call_tool(session, "send_sms", {"to": to, "body": body}, actions)

    return agent
