/**
 * What an answer calls for an agent to do: the {@link Decision}, one closed set, and the
 * {@link Reading}, the one outcome form every reader of the contracts gives (this package,
 * the Rust crate, `atr classify --format json` and the Python package print the same line
 * for the same bytes).
 */

import type { Category, PolicyDecision, RefusalKind, Settlement } from "./vocabulary.js";

/** The next step an agent takes after a tool's answer. */
export const DECISIONS = [
  "continue",
  "retry",
  "look-up",
  "observe-then-retry",
  "ask-person",
  "fix-arguments",
  "reauthenticate",
  "step-up",
  "stop",
] as const;
export type Decision = (typeof DECISIONS)[number];

/** What a reader found. */
export type Kind =
  | "envelope"
  | "guarantee"
  | "refusal"
  | "unauthorized"
  | "insufficient-scope"
  | "fault"
  | "not-contract";

/** Why an answer is not a result of the contracts. */
export type Why = "not-json" | "breaks-contract" | "not-a-tool-result" | "not-a-profile-response";

/** What a reader made of one answer: the decision and what it rests on. */
export interface Reading {
  readonly decision: Decision;
  readonly kind: Kind;
  readonly ok?: boolean;
  readonly category?: Category;
  readonly code?: string;
  readonly settlement?: Settlement;
  readonly policy?: PolicyDecision;
  readonly policyCode?: string;
  readonly refusal?: RefusalKind;
  readonly status?: number;
  /** When to call again or look up: RFC 3339 in UTC. */
  readonly retryAt?: string;
  /** A `Retry-After` in seconds, as a REST response said it. */
  readonly retryAfter?: number;
  readonly nextTool?: string;
  readonly scopes?: readonly string[];
  readonly why?: Why;
}

const ORDER = [
  "decision",
  "kind",
  "ok",
  "category",
  "code",
  "settlement",
  "policy",
  "policyCode",
  "refusal",
  "status",
  "retryAt",
  "retryAfter",
  "nextTool",
  "scopes",
  "why",
] as const satisfies readonly (keyof Reading)[];

/** A reading with its members in the outcome form's order, absent ones left out. */
export function reading(members: Reading): Reading {
  const out: Record<string, unknown> = {};
  for (const name of ORDER) if (members[name] !== undefined) out[name] = members[name];
  return Object.freeze(out) as unknown as Reading;
}

// Readings are immutable: a reader that makes many alike keeps the ones it made, by a key of
// its own, and hands them out again (at most this many kept, the first ones met).
const KEPT = 4096;

/** The reading `make` makes, kept in `made` under `key` and handed out again for it. */
export function kept(made: Map<string, Reading>, key: string, make: () => Reading): Reading {
  let found = made.get(key);
  if (found === undefined) {
    found = make();
    if (made.size < KEPT) made.set(key, found);
  }
  return found;
}

/** The one outcome form: compact JSON, one line. */
export function toJson(value: Reading): string {
  return JSON.stringify(reading(value));
}

/** Not a result of the contracts, for `why`. */
export function notContract(why: Why): Reading {
  return reading({ decision: "stop", kind: "not-contract", why });
}
