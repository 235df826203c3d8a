// A Vercel AI SDK tool over a contract tool: the model reads what to do next instead of an
// untyped result.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tool } from "ai";
import { Actions } from "agent-tool-result";
import { contractExecute } from "agent-tool-result/adapters/vercel-ai";
import { z } from "zod";

export function sendSmsTool(client: Client, actions: Actions) {
  return tool({
    description: "Send a text message.",
    inputSchema: z.object({ to: z.string(), body: z.string() }),
    execute: contractExecute(async (args: { to: string; body: string }) =>
      client.callTool({ name: "send_sms", arguments: { ...args, idempotencyKey: actions.key("send_sms", args) } }),
    ),
  });
}
