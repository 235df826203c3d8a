/**
 * The MCP TypeScript SDK client: {@link callTool} calls a contract tool through a `Client`
 * with the action's idempotency key (`idempotencyKey`, kept across its retries), follows its
 * retries, and answers its result on `continue` or throws {@link ContractAnswer}.
 */

import { follow, payload, type FollowOptions } from "../follow.js";
import type { Actions } from "../keys.js";
import { ContractAnswer } from "./errors.js";

/** What {@link callTool} needs of the SDK's `Client`. */
export interface ToolCaller {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/** Calls `name` with `args` as one action of `actions`; its result, or {@link ContractAnswer}. */
export async function callTool(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
  actions: Actions,
  options?: FollowOptions,
): Promise<unknown> {
  const keyed = { ...args, idempotencyKey: actions.key(name, args) };
  const followed = await follow(() => client.callTool({ name, arguments: keyed }), options);
  if (followed.reading.decision !== "retry") actions.settle(name, args);
  if (followed.reading.decision === "continue") return payload(followed.answer);
  throw new ContractAnswer(followed.reading);
}
