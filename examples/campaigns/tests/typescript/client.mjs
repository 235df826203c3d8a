// A client of an MCP server (the campaign service over Streamable HTTP, or a stdio server such as
// the crate's keyed example) built on the official TypeScript MCP SDK, as an agent's host would
// use it. It lists the tools first (so the SDK caches their outputSchema and
// validates every structuredContent against it, on error results too), then runs steps read
// as JSON from standard input: each step is a list of calls made at once. It prints one JSON
// line: per step, per call, what `client.callTool` returned ({ isError, structuredContent,
// text }) or what it threw ({ thrown }).
//
// Usage: node client.mjs <base URL of the MCP endpoint> <bearer token> [v1|v2|v2-2026-07-28] < steps.json
//        node client.mjs stdio <v1|v2> <server command> [its arguments...] < steps.json
//
// v1 (the default) is `@modelcontextprotocol/sdk` 1.x; v2 is `@modelcontextprotocol/client` 2.x;
// v2-2026-07-28 is the same client pinned to MCP 2026-07-28: `server/discover` instead of
// `initialize`, then each request stateless, with its revision in `_meta` and its method in the
// `Mcp-Method` header. The report names the revision the client negotiated.
// Over stdio the server is started with this process's environment.

const args = process.argv.slice(2);
const overStdio = args[0] === "stdio";
const sdk = (overStdio ? args[1] : args[2]) ?? "v1";
const { Client, StreamableHTTPClientTransport, StdioClientTransport } =
  sdk.startsWith("v2")
    ? {
        ...(await import("@modelcontextprotocol/client")),
        ...(await import("@modelcontextprotocol/client/stdio")),
      }
    : {
        ...(await import("@modelcontextprotocol/sdk/client/index.js")),
        ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
        ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
      };
const steps = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

const client = new Client(
  { name: "campaigns-typescript-test", version: "1.0.0" },
  sdk === "v2-2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
);
const transport = overStdio
  ? new StdioClientTransport({ command: args[2], args: args.slice(3), env: { ...process.env } })
  : new StreamableHTTPClientTransport(new URL(args[0]), {
      requestInit: { headers: { Authorization: `Bearer ${args[1]}` } },
    });
await client.connect(transport);
const { tools } = await client.listTools();

async function call({ tool, arguments: args }) {
  try {
    const result = await client.callTool({ name: tool, arguments: args });
    const text = result.content.find((block) => block.type === "text")?.text ?? null;
    return { isError: result.isError === true, structuredContent: result.structuredContent ?? null, text };
  } catch (error) {
    return { thrown: `${error?.code ?? ""} ${error?.message ?? error}` };
  }
}

const answers = [];
for (const step of steps) {
  answers.push(await Promise.all(step.map(call)));
}
const revision = client.getNegotiatedProtocolVersion?.() ?? null;
await client.close();
const annotations = Object.fromEntries(tools.map((t) => [t.name, t.annotations ?? null]));
process.stdout.write(
  JSON.stringify({ tools: tools.map((t) => t.name), annotations, answers, revision }) + "\n",
);
