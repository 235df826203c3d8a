// The MCP TypeScript SDK client calling a contract tool: one key per action, a rate limit
// waited out with the same key, and any other answer thrown with what to do next.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Actions, ContractAnswer } from "agent-tool-result";
import { callTool } from "agent-tool-result/adapters/mcp";

export async function sendSms(client: Client, actions: Actions, to: string, body: string): Promise<unknown> {
  try {
    return await callTool(client, "send_sms", { to, body }, actions);
  } catch (error) {
    if (error instanceof ContractAnswer && error.reading.decision === "ask-person") return error.reading;
    throw error;
  }
}
