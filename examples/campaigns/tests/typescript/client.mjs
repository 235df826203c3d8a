// A client of the campaign service built on the official TypeScript MCP SDK, as an agent's
// host would use it. It lists the tools first (so the SDK caches their outputSchema and
// validates every structuredContent against it, on error results too), then runs steps read
// as JSON from standard input: each step is a list of calls made at once. It prints one JSON
// line: per step, per call, what `client.callTool` returned ({ isError, structuredContent,
// text }) or what it threw ({ thrown }).
//
// Usage: node client.mjs <base URL of the MCP endpoint> <bearer token> [v1|v2] < steps.json
//
// v1 (the default) is `@modelcontextprotocol/sdk` 1.x; v2 is `@modelcontextprotocol/client` 2.x.

const [url, token, sdk = "v1"] = process.argv.slice(2);
const { Client, StreamableHTTPClientTransport } =
  sdk === "v2"
    ? await import("@modelcontextprotocol/client")
    : {
        ...(await import("@modelcontextprotocol/sdk/client/index.js")),
        ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
      };
const steps = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

const client = new Client({ name: "campaigns-typescript-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
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
await client.close();
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), answers }) + "\n");
