"""A client of an MCP server built on the official Python MCP SDK (`mcp`, pinned in
requirements.txt), as an agent's host would use it: the campaign service over Streamable HTTP,
or a stdio server such as the crate's keyed example. It lists the tools first (so the SDK keeps
their outputSchema and validates every structuredContent against it), then runs steps read as
JSON from standard input: each step is a list of calls made at once. It prints one JSON line:
the tools listed and, per step, per call, what `session.call_tool` returned
({ isError, structuredContent, text }) or what it raised ({ thrown }).

Usage: python client.py http <URL of the MCP endpoint> <bearer token> < steps.json
       python client.py stdio <server command> [its arguments...] < steps.json
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


async def call(session, step):
    try:
        result = await session.call_tool(step["tool"], step["arguments"])
    except Exception as error:  # what the SDK raised is the finding
        return {"thrown": f"{type(error).__name__}: {error}"}
    text = next((block.text for block in result.content if block.type == "text"), None)
    return {
        "isError": bool(result.isError),
        "structuredContent": result.structuredContent,
        "text": text,
    }


async def run(read, write, steps):
    async with ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        answers = []
        for step in steps:
            answers.append(list(await asyncio.gather(*(call(session, c) for c in step))))
        return {"tools": [tool.name for tool in tools], "answers": answers}


async def main():
    steps = json.load(sys.stdin)
    if sys.argv[1] == "http":
        headers = {"Authorization": f"Bearer {sys.argv[3]}"}
        async with streamablehttp_client(sys.argv[2], headers=headers) as (read, write, _):
            report = await run(read, write, steps)
    else:
        server = StdioServerParameters(
            command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ)
        )
        async with stdio_client(server) as (read, write):
            report = await run(read, write, steps)
    print(json.dumps(report))


asyncio.run(main())
