/**
 * The OpenAI Agents SDK for JavaScript: a tool body over a contract tool and the tool
 * failure hook (`errorFunction`) that tells the model what was answered.
 */

import { follow, payload, type FollowOptions } from "../follow.js";
import { ContractAnswer } from "./errors.js";

/** Sends (the same request each time) until the answer is final; its result on `continue`,
 * else {@link ContractAnswer}. */
export async function toolBody(send: () => Promise<unknown>, options?: FollowOptions): Promise<unknown> {
  const followed = await follow(send, options);
  if (followed.reading.decision === "continue") return payload(followed.answer);
  throw new ContractAnswer(followed.reading);
}

/** The Agents SDK's `errorFunction`: the reading's words for a contract answer, the error's
 * own for anything else. */
export function failureText(_context: unknown, error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
