/**
 * A guarantee result (`schemaVersion: 1`), read as `schema/guarantee-result.schema.json` and
 * the crate's typed reader read it: settlement, policy, impact and recovery, closed and
 * checked against each other (a deny ran nothing, a hold with sends is committed, impact
 * within what was requested); the tool's own fields beside them, never named as a problem's
 * members. A repeated name is refused at the top and in the contract's objects.
 */

import { contractObject, integer } from "./envelope.js";
import { normalize } from "./instant.js";
import { isObject, repeatedNames, type Json } from "./json.js";
import { kept, reading, type Decision, type Reading } from "./reading.js";
import {
  POLICY_DECISIONS,
  PROBLEM_MEMBERS,
  SETTLEMENTS,
  type PolicyDecision,
  type Settlement,
} from "./vocabulary.js";

const POLICY_CODE = /^[a-z0-9]+(?:[_-][a-z0-9]+)*$/;
const SETTLEMENT = new Set(["state"]);
const POLICY = new Set(["decision", "code", "retryAt"]);
const IMPACT = new Set(["requested", "committed", "deferred", "denied", "failed"]);
const RECOVERY = new Set(["suggestedNextTool"]);
const U64 = 2n ** 64n - 1n;
const RESULTS = new Map<string, Reading>();
const PLAIN: Reading[] = [];

const has = (object: object, name: string): boolean =>
  Object.prototype.hasOwnProperty.call(object, name);

/** The reading of a guarantee result, or `undefined` when `value` breaks the contract. */
export function readGuarantee(value: Json): Reading | undefined {
  if (!isObject(value) || repeatedNames(value) !== undefined) return undefined;
  // One pass over the members: the contract's, and the tool's own beside them.
  let version: Json | undefined;
  let settlement: Json | undefined;
  let policy: Json | undefined;
  let impact: Json | undefined;
  let recovery: Json | undefined;
  for (const name in value) {
    const member = value[name]!;
    switch (name) {
      case "schemaVersion":
        version = member;
        break;
      case "settlement":
        settlement = member;
        break;
      case "policy":
        policy = member;
        break;
      case "impact":
        impact = member;
        break;
      case "recovery":
        recovery = member;
        break;
      default:
        if (PROBLEM_MEMBERS.has(name)) return undefined;
    }
  }
  if (version !== 1 && version !== 1n) return undefined;
  if (!contractObject(settlement, SETTLEMENT) || !contractObject(policy, POLICY)) return undefined;
  const state = settlement["state"];
  const decision = policy["decision"];
  if (typeof state !== "string" || !(SETTLEMENTS as readonly string[]).includes(state)) {
    return undefined;
  }
  if (typeof decision !== "string" || !(POLICY_DECISIONS as readonly string[]).includes(decision)) {
    return undefined;
  }
  const code = policy["code"];
  if (has(policy, "code") && !(typeof code === "string" && POLICY_CODE.test(code))) {
    return undefined;
  }
  let retryAt: string | undefined;
  if (has(policy, "retryAt")) {
    const text = policy["retryAt"];
    retryAt = typeof text === "string" ? normalize(text) : undefined;
    if (retryAt === undefined) return undefined;
  }
  // The counts, exact: numbers while they are safe integers, bigints past that (the two
  // compare exactly with each other).
  let requested: Count | undefined;
  let committed: Count = 0;
  let outcome: Count = 0;
  if (impact !== undefined) {
    if (!contractObject(impact, IMPACT)) return undefined;
    for (const name in impact) {
      const count = impact[name];
      if (!integer(count, 0n, U64)) return undefined;
      if (name === "requested") {
        requested = count as Count;
      } else {
        if (name === "committed") committed = count as Count;
        outcome = add(outcome, count as Count);
      }
    }
  }
  let nextTool: string | undefined;
  if (recovery !== undefined) {
    if (!contractObject(recovery, RECOVERY)) return undefined;
    if (has(recovery, "suggestedNextTool")) {
      const tool = recovery["suggestedNextTool"];
      if (typeof tool !== "string") return undefined;
      nextTool = tool;
    }
  }
  const named = state as Settlement;
  const decided = decision as PolicyDecision;
  const policyCode = code as string | undefined;
  if (!consistent(named, decided, policyCode, retryAt, { requested, committed, outcome })) {
    return undefined;
  }
  // The readings without a code, a time or a next tool, one for each state and decision;
  // the others kept by what they say.
  const plain = nextTool === undefined && retryAt === undefined && policyCode === undefined;
  if (plain) {
    const slot = SETTLEMENTS.indexOf(named) * POLICY_DECISIONS.length + POLICY_DECISIONS.indexOf(decided);
    return (PLAIN[slot] ??= guaranteeReading(named, decided));
  }
  // A next tool's name follows a mark, so that no name reads as an absent one.
  const tool = nextTool === undefined ? "" : `=${nextTool}`;
  const key = `${named}\u0000${decided}\u0000${policyCode ?? ""}\u0000${retryAt ?? ""}\u0000${tool}`;
  return kept(RESULTS, key, () => guaranteeReading(named, decided, policyCode, retryAt, nextTool));
}

function guaranteeReading(
  settlement: Settlement,
  policy: PolicyDecision,
  policyCode?: string,
  retryAt?: string,
  nextTool?: string,
): Reading {
  let decision: Decision = "continue";
  if (settlement === "unknown" || policy === "defer") decision = "look-up";
  else if (policy === "deny") decision = "ask-person";
  return reading({ decision, kind: "guarantee", settlement, policy, policyCode, retryAt, nextTool });
}

type Count = number | bigint;

function add(a: Count, b: Count): Count {
  if (typeof a === "number" && typeof b === "number") {
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  return BigInt(a) + BigInt(b);
}

/** The impact's counts: what was requested, what was sent, and every outcome together. */
interface Counts {
  requested: Count | undefined;
  committed: Count;
  outcome: Count;
}

function consistent(
  state: Settlement,
  decision: PolicyDecision,
  code: string | undefined,
  retryAt: string | undefined,
  { requested, committed, outcome }: Counts,
): boolean {
  const sent = committed > 0;
  if (decision === "deny" && (state !== "not_started" || sent)) return false;
  if (decision !== "allow" && code === undefined) return false;
  if (decision === "allow" && retryAt !== undefined) return false;
  if (decision === "defer" && sent && state !== "committed") return false;
  if (state === "not_started" && sent) return false;
  return requested === undefined || outcome <= requested;
}
