// A Vercel AI SDK agent (its mock model: no network beyond loopback) driving the campaign
// service through the official MCP TypeScript SDK client: each step's model calls send_sms,
// whose execute follows the contract. Prints each step's tool output and every call made, as
// JSON.
//
//   node campaign.mjs URL TOKEN OPTED_OUT
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV2 } from "ai/test";
import { z } from "zod";

import { Actions, readAnswer } from "../dist/index.js";
import { contractExecute } from "../dist/adapters/vercel-ai.js";

const [url, token, optedOut] = process.argv.slice(2);
const client = new Client({ name: "agent", version: "1.0.0" });
await client.connect(
  new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
);
const actions = new Actions();
const calls = [];
const sendSms = tool({
  description: "Send a text message.",
  inputSchema: z.object({ to: z.string(), body: z.string() }),
  execute: contractExecute(async (args) => {
    const key = actions.key("send_sms", args);
    const answer = await client.callTool({ name: "send_sms", arguments: { ...args, idempotencyKey: key } });
    calls.push({ key, reading: readAnswer(answer) });
    return answer;
  }),
});

const sendBatch = tool({
  description: "Send a campaign to many numbers.",
  inputSchema: z.object({ recipients: z.array(z.string()), message: z.string() }),
  execute: contractExecute(async (args) =>
    client.callTool({
      name: "send_campaign_batch",
      arguments: { ...args, idempotencyKey: actions.key("send_campaign_batch", args) },
    }),
  ),
});

/** One run whose model calls `name` with `input`, then says it is done: the tool's output. */
async function run(input, name = "send_sms") {
  let turn = 0;
  const model = new MockLanguageModelV2({
    doGenerate: async () => {
      const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
      if (turn++ === 0) {
        return {
          content: [{ type: "tool-call", toolCallId: "c", toolName: name, input: JSON.stringify(input) }],
          finishReason: "tool-calls",
          usage,
          warnings: [],
        };
      }
      return { content: [{ type: "text", text: "done" }], finishReason: "stop", usage, warnings: [] };
    },
  });
  const tools = { send_sms: sendSms, send_campaign_batch: sendBatch };
  const result = await generateText({ model, tools, stopWhen: stepCountIs(2), prompt: "text" });
  return result.steps[0].toolResults[0].output;
}

const denied = await run({ to: optedOut, body: "hi" });
const first = await run({ to: "+15550400001", body: "one" });
const second = await run({ to: "+15550400002", body: "two" });
// A defer: the model reads that the campaign is to be looked up, and with what.
const deferred = await run(
  { recipients: ["+15550500001", "+15550500002", "+15550500003", "+15550500004"], message: "sale" },
  "send_campaign_batch",
);
const campaignId = deferred.reading.decision === "look-up" ? deferred.result.campaignId : undefined;
const lookup = campaignId === undefined ? undefined : await client.callTool({
  name: deferred.reading.nextTool,
  arguments: { campaignId },
});
await client.close();
console.log(JSON.stringify({ denied, first, second, calls, deferred: deferred.reading, lookup: lookup?.structuredContent }));
