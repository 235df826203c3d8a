/**
 * Taking the step a reading calls for: {@link readAnswer} reads whatever a client handed back,
 * and {@link follow} calls a tool until its answer is final, waiting as a `retry` says and
 * sending the same request (so the same idempotency key) each time.
 */

import { read, readValue } from "./read.js";
import type { Reading } from "./reading.js";

/** The reading of a tool's answer as a client hands it back: a `tools/call` result object
 * (the MCP SDK's `callTool` result), a bare document object, or JSON text. */
export function readAnswer(answer: unknown): Reading {
  if (typeof answer === "string" || answer instanceof Uint8Array) return read(answer);
  return readValue(answer);
}

/** The document an answer carries: its `structuredContent`, else its first text block's
 * text, else the answer itself. */
export function payload(answer: unknown): unknown {
  if (typeof answer === "object" && answer !== null && !Array.isArray(answer)) {
    const result = answer as { structuredContent?: unknown; content?: unknown };
    if (result.structuredContent !== undefined && result.structuredContent !== null) {
      return result.structuredContent;
    }
    if (Array.isArray(result.content)) {
      const text = result.content.find(
        (block: unknown) => typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text",
      ) as { text?: unknown } | undefined;
      if (text !== undefined) return text.text;
    }
  }
  return answer;
}

/** How many milliseconds a `retry` waits: its `retryAfter`, or until its `retryAt`, at most
 * `longest` (none when neither is given). */
export function waitFor(reading: Reading, longest = 60_000): number {
  if (reading.retryAfter !== undefined) return Math.min(reading.retryAfter * 1000, longest);
  if (reading.retryAt !== undefined) {
    const at = Date.parse(reading.retryAt);
    if (Number.isNaN(at)) return 0;
    return Math.max(0, Math.min(at - Date.now(), longest));
  }
  return 0;
}

/** A tool's final answer, its reading, and how many times it was sent. */
export interface Followed<T> {
  readonly answer: T;
  readonly reading: Reading;
  readonly calls: number;
}

/** Options of {@link follow}. */
export interface FollowOptions {
  /** Calls at most (4). */
  readonly attempts?: number;
  /** The longest wait, in milliseconds (60 000). */
  readonly longest?: number;
  /** How to wait (`setTimeout`). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Calls `send` until its answer is not a `retry` (or `attempts` calls were made), waiting
 * what each `retry` says first. `send` sends the same request each time: the same arguments
 * and the same idempotency key, so a call that ran answers its first result and none runs
 * twice. */
export async function follow<T>(send: () => Promise<T>, options: FollowOptions = {}): Promise<Followed<T>> {
  const attempts = options.attempts ?? 4;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  for (let calls = 1; ; calls++) {
    const answer = await send();
    const reading = readAnswer(answer);
    if (reading.decision !== "retry" || calls >= attempts) return { answer, reading, calls };
    await sleep(waitFor(reading, options.longest));
  }
}
