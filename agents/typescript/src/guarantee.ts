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

const has = (object: object, name: string): boolean =>
  Object.prototype.hasOwnProperty.call(object, name);

/** The reading of a guarantee result, or `undefined` when `value` breaks the contract. */
export function readGuarantee(value: Json): Reading | undefined {
  if (!isObject(value) || repeatedNames(value) !== undefined) return undefined;
  for (const name of Object.keys(value)) if (PROBLEM_MEMBERS.has(name)) return undefined;
  const version = value["schemaVersion"];
  if (version !== 1 && version !== 1n) return undefined;
  const settlement = value["settlement"];
  const policy = value["policy"];
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
  const counts = new Map<string, bigint>();
  if (has(value, "impact")) {
    const impact = value["impact"];
    if (!contractObject(impact, IMPACT)) return undefined;
    for (const [name, count] of Object.entries(impact)) {
      if (!integer(count, 0n, U64)) return undefined;
      counts.set(name, BigInt(count as number | bigint));
    }
  }
  let nextTool: string | undefined;
  if (has(value, "recovery")) {
    const recovery = value["recovery"];
    if (!contractObject(recovery, RECOVERY)) return undefined;
    if (has(recovery, "suggestedNextTool")) {
      const tool = recovery["suggestedNextTool"];
      if (typeof tool !== "string") return undefined;
      nextTool = tool;
    }
  }
  const named = state as Settlement;
  const decided = decision as PolicyDecision;
  if (!consistent(named, decided, code as string | undefined, retryAt, counts)) return undefined;
  let step: Decision = "continue";
  if (named === "unknown" || decided === "defer") step = "look-up";
  else if (decided === "deny") step = "ask-person";
  const policyCode = code as string | undefined;
  return kept(RESULTS, `${named}\u0000${decided}\u0000${policyCode}\u0000${retryAt}\u0000${nextTool}`, () =>
    reading({ decision: step, kind: "guarantee", settlement: named, policy: decided, policyCode, retryAt, nextTool }),
  );
}

function consistent(
  state: Settlement,
  decision: PolicyDecision,
  code: string | undefined,
  retryAt: string | undefined,
  counts: Map<string, bigint>,
): boolean {
  const committed = counts.get("committed");
  const sent = committed !== undefined && committed !== 0n;
  if (decision === "deny" && (state !== "not_started" || sent)) return false;
  if (decision !== "allow" && code === undefined) return false;
  if (decision === "allow" && retryAt !== undefined) return false;
  if (decision === "defer" && sent && state !== "committed") return false;
  if (state === "not_started" && sent) return false;
  const requested = counts.get("requested");
  let outcome = 0n;
  for (const name of ["committed", "deferred", "denied", "failed"]) outcome += counts.get(name) ?? 0n;
  return requested === undefined || outcome <= requested;
}
