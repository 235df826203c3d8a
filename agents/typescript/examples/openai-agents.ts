// An OpenAI Agents SDK tool over a contract tool: its failure hook tells the model what was
// answered (isError is otherwise lost).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { tool } from "@openai/agents";
import { Actions } from "agent-tool-result";
import { failureText, toolBody } from "agent-tool-result/adapters/openai-agents";
import { z } from "zod";

export function sendSmsTool(client: Client, actions: Actions) {
  return tool({
    name: "send_sms",
    description: "Send a text message.",
    parameters: z.object({ to: z.string(), body: z.string() }),
    errorFunction: failureText,
    execute: async (args) =>
      JSON.stringify(
        await toolBody(() =>
          client.callTool({ name: "send_sms", arguments: { ...args, idempotencyKey: actions.key("send_sms", args) } }),
        ),
      ),
  });
}
