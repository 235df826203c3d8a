// Each adapter in its framework, offline: the MCP SDK's own Client against an in-process
// server answering as a contract tool would, and the Vercel AI SDK's mock model calling a
// tool whose execute follows the contract.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV2 } from "ai/test";
import { z } from "zod";

import { Actions, ContractAnswer } from "../src/index.js";
import { callTool } from "../src/adapters/mcp.js";
import { failureText, toolBody } from "../src/adapters/openai-agents.js";
import { contractExecute } from "../src/adapters/vercel-ai.js";

const SENT = { schemaVersion: 1, settlement: { state: "committed" }, policy: { decision: "allow" }, messageId: "m" };
const DENY = {
  schemaVersion: 1,
  settlement: { state: "not_started" },
  policy: { decision: "deny", code: "contact_opted_out" },
};
const LIMITED = { type: "about:blank", title: "Too Many Requests", status: 429 };

/** A server whose send_sms answers `answers` in turn; the keys it was sent. */
async function connected(answers: [object, boolean][]): Promise<{ client: Client; keys: string[] }> {
  const server = new McpServer({ name: "contract", version: "1.0.0" });
  const keys: string[] = [];
  server.registerTool(
    "send_sms",
    { inputSchema: { to: z.string(), idempotencyKey: z.string() } },
    async ({ idempotencyKey }) => {
      keys.push(idempotencyKey);
      const [document, isError] = answers.shift()!;
      return {
        content: [{ type: "text", text: JSON.stringify(document) }],
        structuredContent: document as Record<string, unknown>,
        isError,
      };
    },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "agent", version: "1.0.0" });
  await client.connect(clientSide);
  return { client, keys };
}

test("the MCP SDK client: a rate limit is waited out and sent again with the same key", async () => {
  const { client, keys } = await connected([
    [{ ...LIMITED, retryAt: new Date(Date.now() + 50).toISOString() }, true],
    [SENT, false],
  ]);
  const result = await callTool(client, "send_sms", { to: "+1" }, new Actions());
  assert.deepEqual(result, SENT);
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
});

test("the MCP SDK client: a deny throws what to do, and the next action has a new key", async () => {
  const { client, keys } = await connected([
    [DENY, true],
    [SENT, false],
  ]);
  const actions = new Actions();
  await assert.rejects(callTool(client, "send_sms", { to: "+1" }, actions), (error: unknown) => {
    assert.ok(error instanceof ContractAnswer);
    assert.equal(error.reading.policyCode, "contact_opted_out");
    return true;
  });
  await callTool(client, "send_sms", { to: "+1" }, actions);
  assert.notEqual(keys[0], keys[1]);
});

test("the Vercel AI SDK: the model reads what to do next from a denied tool", async () => {
  const answers: [object, boolean][] = [[DENY, true]];
  let calls = 0;
  const model = new MockLanguageModelV2({
    doGenerate: async () => {
      calls++;
      if (calls === 1) {
        return {
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "send_sms", input: '{"to":"+1"}' }],
          finishReason: "tool-calls",
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
          warnings: [],
        };
      }
      return {
        content: [{ type: "text", text: "asked a person" }],
        finishReason: "stop",
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        warnings: [],
      };
    },
  });
  const sendSms = tool({
    description: "Send a text message.",
    inputSchema: z.object({ to: z.string() }),
    execute: contractExecute(async () => {
      const [document, isError] = answers.shift()!;
      return { structuredContent: document, isError };
    }),
  });
  const result = await generateText({ model, tools: { send_sms: sendSms }, stopWhen: stepCountIs(2), prompt: "text +1" });
  const output = result.steps[0]!.toolResults[0]!.output as { reading: { decision: string } };
  assert.equal(output.reading.decision, "ask-person");
  assert.equal(result.text, "asked a person");
});

test("the OpenAI Agents SDK: the failure hook says what was answered", async () => {
  const error = await toolBody(async () => ({ structuredContent: DENY, isError: false })).catch((e: unknown) => e);
  assert.ok(error instanceof ContractAnswer);
  assert.match(failureText(undefined, error), /not-a-tool-result.*stop/);
});
