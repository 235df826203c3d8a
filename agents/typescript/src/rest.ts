/**
 * A REST response of the profile, read from its status, headers and body: a result (200
 * settled, 202 deferred with `Retry-After`), a policy deny (422, its problem carrying the
 * guarantee members), a refusal (its problem type, or `about:blank` and its status), 401 and
 * 403 with their `WWW-Authenticate` challenges, a transport fault, an envelope (200). A
 * `Retry-After` in seconds is kept as said (`retryAfter`); an HTTP-date, or the body's
 * `retryAt`, is the reading's `retryAt`.
 */

import { documentOf } from "./document.js";
import { readEnvelope } from "./envelope.js";
import { readGuarantee } from "./guarantee.js";
import { normalize, ofDate } from "./instant.js";
import {
  NotJson,
  isObject,
  loads,
  strictProblem,
  textOf,
  writtenAsFloat,
  type Json,
  type JsonObject,
} from "./json.js";
import { notContract, reading, type Reading } from "./reading.js";
import { refusalReading } from "./refusal.js";
import { POLICY_DENY_TYPE, refusalOfProblem } from "./vocabulary.js";

/** Response headers: a `Headers` (fetch), a plain record, or name and value pairs. */
export type HeadersLike =
  | { forEach(callback: (value: string, name: string) => void): void }
  | Record<string, string | readonly string[] | undefined>
  | Iterable<readonly [string, string]>;

const NOT_PROFILE = notContract("not-a-profile-response");
const PROBLEM = "application/problem+json";

function pairs(headers: HeadersLike): [string, string][] {
  const out: [string, string][] = [];
  if (typeof (headers as { forEach?: unknown }).forEach === "function" && !Array.isArray(headers)) {
    (headers as { forEach(cb: (v: string, k: string) => void): void }).forEach((v, k) =>
      out.push([k, v]),
    );
  } else if (Symbol.iterator in (headers as object)) {
    for (const [k, v] of headers as Iterable<readonly [string, string]>) out.push([k, v]);
  } else {
    for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
      if (typeof v === "string") out.push([k, v]);
      else if (v !== undefined) for (const each of v) out.push([k, each]);
    }
  }
  return out;
}

function all(headers: [string, string][], name: string): string[] {
  return headers.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value);
}

function first(headers: [string, string][], name: string): string | undefined {
  const value = all(headers, name)[0];
  return value !== undefined && /^[\x20-\x7e]*$/.test(value) ? value : undefined;
}

/** The reading of one REST response. */
export function readRest(status: number, headers: HeadersLike, body: string | Uint8Array): Reading {
  const list = pairs(headers);
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const read = classify(status, list, bytes);
  const said = (first(list, "retry-after") ?? "").replace(/^[ \t]+|[ \t]+$/g, "");
  if (read.retryAt !== undefined && /^\+?[0-9]+$/.test(said) && BigInt(said) < 2n ** 64n) {
    return reading({ ...read, retryAt: undefined, retryAfter: Number(said) });
  }
  return read;
}

function json(body: Uint8Array): Json | undefined {
  try {
    const value = loads(textOf(body));
    return strictProblem(value) === undefined ? value : undefined;
  } catch (error) {
    if (error instanceof NotJson) return undefined;
    throw error;
  }
}

/** A value as a map-keeping reader holds it: no repeated names to refuse. */
function plain(value: Json): Json {
  if (Array.isArray(value)) return value.map(plain);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: plain(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

interface Problem {
  type: string;
  extensions: JsonObject;
}

function classify(status: number, headers: [string, string][], body: Uint8Array): Reading {
  const contentType = (first(headers, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const marked = json(body);
  // Read as a map keeps it: a repeated name is not refused, but by the envelope's reader.
  const value = marked === undefined ? undefined : plain(marked);
  const isProblem = contentType === PROBLEM;
  const problem = isProblem ? problemOf(status, value, marked) : undefined;
  const retryAfter = retryAfterOf(first(headers, "retry-after"));
  if (!isProblem && isObject(value)) {
    const uri = value["type"];
    if (
      typeof uri === "string" &&
      (uri === POLICY_DENY_TYPE || refusalOfProblem(uri, status) !== undefined)
    ) {
      return NOT_PROFILE;
    }
  }
  if (problem !== undefined && problem.type === POLICY_DENY_TYPE) {
    const result = readGuarantee(problem.extensions);
    if (result === undefined || result.policy !== "deny") return NOT_PROFILE;
    return reading({ ...result, retryAt: retryAfter ?? result.retryAt });
  }
  if (problem !== undefined) {
    const kind = refusalOfProblem(problem.type, status);
    if (kind !== undefined) {
      if (isObject(value) && documentOf({ ...value, type: null, status: null }) !== "refusal") {
        return NOT_PROFILE;
      }
      const said = problem.extensions["retryAt"];
      const at = retryAfter ?? (typeof said === "string" ? normalize(said) : undefined);
      return refusalReading(kind, at, status);
    }
  }
  if (isObject(value)) {
    if (status === 200 && !isProblem && "ok" in value && documentOf(value) === "envelope") {
      return readEnvelope(marked!) ?? NOT_PROFILE;
    }
    if (value["ok"] === false && !("schemaVersion" in value)) return NOT_PROFILE;
  }
  return byStatus(status, contentType, headers, value, problem, retryAfter);
}

function problemOf(status: number, value: Json | undefined, marked: Json | undefined): Problem | undefined {
  if (!isObject(value) || !isObject(marked)) return undefined;
  const extensions: JsonObject = { ...value };
  const taken: Record<string, Json | undefined> = {};
  for (const name of ["type", "title", "status", "detail", "instance"]) {
    taken[name] = extensions[name];
    delete extensions[name];
  }
  const said = taken["status"];
  const member =
    typeof said === "number" &&
    Number.isInteger(said) &&
    said >= 400 &&
    said <= 599 &&
    !writtenAsFloat(marked, "status")
      ? said
      : undefined;
  const chosen = member ?? status;
  if (chosen < 400 || chosen > 599) return undefined;
  const type = taken["type"];
  return { type: typeof type === "string" ? type : "about:blank", extensions };
}

function byStatus(
  status: number,
  contentType: string,
  headers: [string, string][],
  value: Json | undefined,
  problem: Problem | undefined,
  retryAfter: string | undefined,
): Reading {
  const challenges = all(headers, "www-authenticate")
    .filter((line) => /^[\x20-\x7e]*$/.test(line))
    .flatMap(parseChallenges)
    .filter(([scheme]) => scheme.toLowerCase() === "bearer");
  if (status === 401) {
    return challenges.length === 0 ? NOT_PROFILE : reading({ decision: "reauthenticate", kind: "unauthorized" });
  }
  if (status === 403) {
    for (const [, params] of challenges) {
      if (param(params, "error") === "insufficient_scope") {
        const scope = param(params, "scope");
        return reading({
          decision: "step-up",
          kind: "insufficient-scope",
          scopes: scope === undefined ? [] : scope.split(/\s+/).filter((s) => s !== ""),
        });
      }
    }
    return NOT_PROFILE;
  }
  if (status === 200 || status === 202) return success(status, contentType, headers, value, retryAfter);
  if (status >= 500 && status <= 599) return refusalReading("unavailable", retryAfter, status);
  if (status >= 400 && status <= 499 && problem !== undefined) {
    return reading({ decision: "fix-arguments", kind: "fault", status });
  }
  return NOT_PROFILE;
}

function success(
  status: number,
  contentType: string,
  headers: [string, string][],
  value: Json | undefined,
  retryAfter: string | undefined,
): Reading {
  if (contentType === PROBLEM || value === undefined) return NOT_PROFILE;
  const result = isObject(value) ? readGuarantee(value) : undefined;
  if (result === undefined) return NOT_PROFILE;
  if (status === 202) {
    if (result.policy !== "defer" || all(headers, "location").length > 0) return NOT_PROFILE;
    return reading({ ...result, retryAt: retryAfter ?? result.retryAt });
  }
  return result.policy === "allow" ? result : NOT_PROFILE;
}

function param(params: [string, string][], name: string): string | undefined {
  return params.find(([key]) => key.toLowerCase() === name)?.[1];
}

/** The challenges of one `WWW-Authenticate` value (RFC 9110 section 11.6.1): several may share
 * a line; parameters are tokens or quoted strings with `\` escapes. */
export function parseChallenges(value: string): [string, [string, string][]][] {
  const out: [string, [string, string][]][] = [];
  const n = value.length;
  let i = 0;
  const token = (): string => {
    const start = i;
    while (i < n && !' \t,="'.includes(value[i]!)) i++;
    return value.slice(start, i);
  };
  while (i < n) {
    while (i < n && " \t,".includes(value[i]!)) i++;
    const word = token();
    if (word === "") {
      if (i < n) i++;
      continue;
    }
    while (i < n && " \t".includes(value[i]!)) i++;
    if (i < n && value[i] === "=") {
      i++;
      while (i < n && " \t=".includes(value[i]!)) i++;
      let said: string;
      if (i < n && value[i] === '"') {
        i++;
        let text = "";
        while (i < n && value[i] !== '"') {
          if (value[i] === "\\" && i + 1 < n) i++;
          text += value[i];
          i++;
        }
        i++;
        said = text;
      } else {
        said = token();
      }
      out[out.length - 1]?.[1].push([word, said]);
    } else {
      out.push([word, []]);
    }
  }
  return out;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const IMF =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ([A-Za-z]{3}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
const ASCTIME =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Za-z]{3}) ([ 0-9][0-9]) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$/;
const RFC850 =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-([A-Za-z]{3})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
const LAST = Date.UTC(9999, 11, 31, 23, 59, 59);

/** `Retry-After` (delay seconds or an HTTP-date) as the instant it names. */
function retryAfterOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const said = value.replace(/^[ \t]+|[ \t]+$/g, "");
  if (/^[0-9]+$/.test(said)) {
    const at = Date.now() + Number(said) * 1000;
    return ofDate(new Date(Number.isFinite(at) && at < LAST ? at : LAST));
  }
  let parts: [string, string, number, string, string, string] | undefined;
  let match = IMF.exec(said);
  if (match) parts = [match[1]!, match[2]!, Number(match[3]), match[4]!, match[5]!, match[6]!];
  match = parts ? null : ASCTIME.exec(said);
  if (match) parts = [match[2]!.trim(), match[1]!, Number(match[6]), match[3]!, match[4]!, match[5]!];
  match = parts ? null : RFC850.exec(said);
  if (match) {
    const year = Number(match[3]);
    parts = [match[1]!, match[2]!, year + (year < 70 ? 2000 : 1900), match[4]!, match[5]!, match[6]!];
  }
  if (parts === undefined) return undefined;
  const [day, month, year, hour, minute, second] = parts;
  const index = MONTHS.indexOf(month);
  if (index < 0) return undefined;
  const at = new Date(Date.UTC(year, index, Number(day), Number(hour), Number(minute), Number(second)));
  if (at.getUTCDate() !== Number(day) || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return undefined;
  }
  return ofDate(at);
}

/** An account's standing in a rate limit, as a response's `RateLimit` and `RateLimit-Policy`
 * fields say it: `remaining` calls may follow at once, the quota is whole again in `reset`
 * seconds; the policy allows `quota` calls per `window` seconds, when it is named. */
export interface RateLimit {
  readonly policy: string;
  readonly remaining: number;
  readonly reset: number;
  readonly quota?: number;
  readonly window?: number;
}

const ITEM = /^\s*"((?:[^"\\]|\\.)*)"((?:\s*;\s*[a-z*][a-z0-9_.*-]*=[0-9]+)*)\s*$/;
const PARAM = /;\s*([a-z*][a-z0-9_.*-]*)=([0-9]+)/g;

function items(value: string): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const member of value.split(",")) {
    const match = ITEM.exec(member);
    if (match === null) continue;
    const params = new Map<string, number>();
    for (const [, key, said] of match[2]!.matchAll(PARAM)) params.set(key!, Number(said));
    out.set(match[1]!, params);
  }
  return out;
}

/** The first standing a response's `RateLimit` field gives, with its policy's quota and
 * window when `RateLimit-Policy` names it; `undefined` without one. */
export function rateLimit(headers: HeadersLike): RateLimit | undefined {
  const list = pairs(headers);
  const standing = items(all(list, "ratelimit").join(","));
  const policies = items(all(list, "ratelimit-policy").join(","));
  for (const [policy, params] of standing) {
    const remaining = params.get("r");
    const reset = params.get("t");
    if (remaining === undefined || reset === undefined) continue;
    const named = policies.get(policy);
    return { policy, remaining, reset, quota: named?.get("q"), window: named?.get("w") };
  }
  return undefined;
}
