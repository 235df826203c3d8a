/**
 * A guarantee tool's refusal: an RFC 9457 problem (`type`, `title`, `status`, and an optional
 * `detail` and `retryAt`) whose type and status name one of the refusals; nothing ran. Its
 * extension members are the producer's; a repeated standard member is refused.
 */

import { normalize } from "./instant.js";
import { isObject, repeatedNames, writtenAsFloat, type Json } from "./json.js";
import { reading, type Decision, type Reading } from "./reading.js";
import { ABOUT_BLANK, REFUSALS, refusalOfProblem, type RefusalKind } from "./vocabulary.js";

const KNOWN = ["type", "title", "status", "detail", "retryAt"];

/** A key in flight, a rate limit or an unavailable tool is retried with the same key; any
 * other refusal is fixed first. */
export function decisionOf(kind: RefusalKind): Decision {
  return REFUSALS[kind][2] === "after-waiting" ? "retry" : "fix-arguments";
}

/** The reading of a refusal of `kind` (its status the kind's unless given). */
export function refusalReading(kind: RefusalKind, retryAt?: string, status?: number): Reading {
  return reading({
    decision: decisionOf(kind),
    kind: "refusal",
    refusal: kind,
    status: status ?? REFUSALS[kind][0],
    retryAt,
  });
}

/** The reading of a refusal, or `undefined` when `value` is not one. */
export function readRefusal(value: Json): Reading | undefined {
  if (!isObject(value)) return undefined;
  const repeated = repeatedNames(value);
  if (repeated !== undefined && KNOWN.some((name) => repeated.has(name))) return undefined;
  const { type, title, status, detail } = value;
  if (typeof type !== "string" || typeof title !== "string") return undefined;
  if (typeof status !== "number" || writtenAsFloat(value, "status")) return undefined;
  if (!Number.isInteger(status) || status < 0 || status > 65535) return undefined;
  if (detail !== undefined && detail !== null && typeof detail !== "string") return undefined;
  const kind = refusalOfProblem(type, status);
  if (kind === undefined) return undefined;
  if (REFUSALS[kind][1] !== ABOUT_BLANK && REFUSALS[kind][0] !== status) return undefined;
  let retryAt: string | undefined;
  const said = value["retryAt"];
  if (said !== undefined && said !== null) {
    retryAt = typeof said === "string" ? normalize(said) : undefined;
    if (retryAt === undefined) return undefined;
  }
  return refusalReading(kind, retryAt);
}
