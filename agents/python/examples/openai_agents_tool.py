"""An OpenAI Agents SDK tool over a contract tool on an MCP server: its failure hook tells the
model what was answered (the SDK alone drops `isError`)."""

from __future__ import annotations

from agents import FunctionTool, function_tool
from mcp import ClientSession

from agent_tool_result import Actions
from agent_tool_result.adapters.openai_agents import failure_text, tool_body


def sms_tool(session: ClientSession, actions: Actions) -> FunctionTool:
    @function_tool(failure_error_function=failure_text)
    async def send_sms(to: str, body: str) -> object:
        """Send a text message."""
        arguments = {"to": to, "body": body}
        keyed = {**arguments, "idempotencyKey": str(actions.key("send_sms", arguments))}
        return await tool_body(lambda: session.call_tool("send_sms", keyed))

    return send_sms
