/**
 * The Vercel AI SDK: a tool's `execute` over a contract tool. {@link contractExecute} wraps a
 * function that sends the call (the same request each time) so that a `retry` is waited out
 * and sent again, `continue` returns the result, and any other answer returns what the model
 * should do next as the tool's output (`{ error, reading, result }`), instead of an untyped
 * result.
 */

import { follow, payload, type FollowOptions } from "../follow.js";
import type { Reading } from "../reading.js";
import { explain } from "./errors.js";

/** What a tool answers the model when the contract tool's answer was not `continue`: what to
 * do, the reading it rests on, and the document the answer carried (a deferred campaign's
 * id, a deny's policy). */
export interface NextStep {
  readonly error: string;
  readonly reading: Reading;
  readonly result: unknown;
}

/** `send` made into an AI SDK `execute`. */
export function contractExecute<A>(
  send: (args: A) => Promise<unknown>,
  options?: FollowOptions,
): (args: A) => Promise<unknown> {
  return async (args: A) => {
    const followed = await follow(() => send(args), options);
    if (followed.reading.decision === "continue") return payload(followed.answer);
    const step: NextStep = {
      error: explain(followed.reading),
      reading: followed.reading,
      result: payload(followed.answer),
    };
    return step;
  };
}
