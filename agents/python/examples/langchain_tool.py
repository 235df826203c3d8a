"""A LangChain tool over a contract tool on an MCP server: any answer but `continue` reaches
the model as what to do next; a retry keeps its key."""

from __future__ import annotations

from langchain_core.tools import StructuredTool
from mcp import ClientSession

from agent_tool_result import Actions
from agent_tool_result.adapters.langchain import contract_tool


def sms_tool(session: ClientSession, actions: Actions) -> StructuredTool:
    async def send(to: str, body: str) -> object:
        arguments = {"to": to, "body": body}
        key = actions.key("send_sms", arguments)
        return await session.call_tool("send_sms", {**arguments, "idempotencyKey": key})

    return StructuredTool.from_function(
        coroutine=contract_tool(send),
        name="send_sms",
        description="Send a text message.",
        handle_tool_error=True,
    )
