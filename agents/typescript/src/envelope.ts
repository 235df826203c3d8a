/**
 * The first contract's envelope (MCEC 3.0), read as `schema/agent-tool-result.schema.json`
 * and the crate's typed reader read it: `ok`, then `result` or `error`; a closed set of
 * categories; kebab-case codes; no base64 image data in `lastObservation`, and a valid
 * capture summary there when it says it is one. A repeated name is refused in the envelope,
 * the error and each warning; inside a payload the last one wins.
 */

import { isObject, repeatedNames, type Json, type JsonObject } from "./json.js";
import { kept, reading, type Decision, type Reading } from "./reading.js";
import { CATEGORIES, type Category, type RetryClass } from "./vocabulary.js";

const STEPS: Record<RetryClass, Decision> = {
  "after-waiting": "retry",
  "after-reobserving": "observe-then-retry",
  "after-changing-request": "fix-arguments",
  "not-recoverable": "ask-person",
};
const SUCCESS = reading({ decision: "continue", kind: "envelope", ok: true });
/** Each category's step, and the failure readings made so far in it, by code. */
const FAILURES = new Map(
  (Object.keys(CATEGORIES) as Category[]).map((category) => [
    category as string,
    { category, decision: STEPS[CATEGORIES[category]], byCode: new Map<string, Reading>() },
  ]),
);

/** Whether `value` is a stable machine code: non-empty kebab-case (`^[a-z0-9]+(-[a-z0-9]+)*$`),
 * read a character at a time. */
export function isCode(value: unknown): value is string {
  if (typeof value !== "string") return false;
  let afterDash = true; // the start, as after a dash: a dash may not come next
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) afterDash = false;
    else if (c === 45 && !afterDash) afterDash = true;
    else return false;
  }
  return !afterDash;
}

/** A contract object: an object that repeats no name and names only `names`. */
export function contractObject(value: unknown, names: ReadonlySet<string>): value is JsonObject {
  if (!isObject(value) || repeatedNames(value) !== undefined) return false;
  for (const name in value) if (!names.has(name)) return false;
  return true;
}

const has = (object: JsonObject, name: string): boolean =>
  Object.prototype.hasOwnProperty.call(object, name);

/** The reading of an envelope, or `undefined` when `value` breaks the contract. Each contract
 * object is read in one pass over its members (a name it does not know refuses it). */
export function readEnvelope(value: Json): Reading | undefined {
  if (!isObject(value) || repeatedNames(value) !== undefined) return undefined;
  let ok: Json | undefined;
  let session: Json | undefined;
  let result: Json | undefined;
  let warnings: Json | undefined;
  let error: Json | undefined;
  for (const name in value) {
    const member = value[name]!;
    switch (name) {
      case "ok":
        ok = member;
        break;
      case "sessionId":
        session = member;
        break;
      case "result":
        result = member;
        break;
      case "warnings":
        warnings = member;
        break;
      case "error":
        error = member;
        break;
      default:
        return undefined;
    }
  }
  if (typeof ok !== "boolean") return undefined;
  if (session !== undefined && session !== null && typeof session !== "string") return undefined;
  if (result !== undefined && result !== null && !isObject(result)) return undefined;
  if (warnings !== undefined && !(Array.isArray(warnings) && warnings.every(warning))) return undefined;
  if (ok) return error === undefined ? SUCCESS : undefined;
  if (result !== undefined && result !== null) return undefined;
  return failure(error);
}

/** The reading of an envelope's `error`. */
function failure(error: Json | undefined): Reading | undefined {
  if (!isObject(error) || repeatedNames(error) !== undefined) return undefined;
  let code: Json | undefined;
  let category: Json | undefined;
  let detail: Json | undefined;
  let observation: Json | undefined;
  let partial: Json | undefined;
  for (const name in error) {
    const member = error[name]!;
    switch (name) {
      case "code":
        code = member;
        break;
      case "category":
        category = member;
        break;
      case "detail":
        detail = member;
        break;
      case "lastObservation":
        observation = member;
        break;
      case "partialResult":
        partial = member;
        break;
      default:
        return undefined;
    }
  }
  const known = typeof category === "string" ? FAILURES.get(category) : undefined;
  if (known === undefined || !isCode(code) || typeof detail !== "string") return undefined;
  if (observation !== undefined && observation !== null) {
    if (!isObject(observation) || !isObservation(observation)) return undefined;
  }
  if (partial !== undefined && partial !== null && !isObject(partial)) return undefined;
  return kept(known.byCode, code, () =>
    reading({ decision: known.decision, kind: "envelope", ok: false, category: known.category, code }),
  );
}

/** A warning: `code` and `detail`, nothing else. */
function warning(value: Json): boolean {
  if (!isObject(value) || repeatedNames(value) !== undefined) return false;
  let code: Json | undefined;
  let detail: Json | undefined;
  for (const name in value) {
    if (name === "code") code = value[name]!;
    else if (name === "detail") detail = value[name]!;
    else return false;
  }
  return isCode(code) && typeof detail === "string";
}

// --- lastObservation ----------------------------------------------------------------------

/** A character outside base64's alphabet and its padding. */
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;

/** Whether `text` decodes as base64: groups of four, the last of two or three characters
 * padded with `=` or not. One search for a character outside the alphabet (a search keeps no
 * backtracking state, where an anchored `[...]*` keeps some for every character), then the
 * padding and the length (a regular expression of groups takes several times as long on a
 * large image). */
function isBase64(text: string): boolean {
  if (NOT_BASE64.test(text)) return false;
  const n = text.length;
  const padding = text.charCodeAt(n - 1) !== 61 ? 0 : text.charCodeAt(n - 2) === 61 ? 2 : 1;
  // `=` only as the padding, at the end.
  const first = text.indexOf("=");
  if (first >= 0 && first < n - padding) return false;
  const tail = (n - padding) % 4;
  return padding === 0 ? tail !== 1 : padding === 1 ? tail === 3 : tail === 2;
}

/** Whether `text` is longer than 4 KiB, decodes as base64 and mixes upper case, lower case
 * and digits, as encoded binary of that length does. */
export function looksLikeBase64(text: string): boolean {
  return (
    text.length > 4096 &&
    isBase64(text) &&
    /[A-Z]/.test(text) &&
    /[a-z]/.test(text) &&
    /[0-9]/.test(text)
  );
}

function isObservation(value: JsonObject): boolean {
  return freeOfImages(value) && (value["kind"] !== "capture-summary" || captureSummary(value));
}

/** Whether `item` holds no image data at any depth: no `base64` member, no long base64
 * string. Walked in place (the parser bounds the depth), with nothing allocated. */
function freeOfImages(item: Json): boolean {
  if (typeof item === "string") return !(item.length > 4096 && looksLikeBase64(item));
  if (typeof item !== "object" || item === null) return true;
  if (Array.isArray(item)) {
    for (const element of item) if (!freeOfImages(element)) return false;
    return true;
  }
  if (has(item, "base64")) return false;
  for (const name in item) if (!freeOfImages(item[name]!)) return false;
  return true;
}

const U32 = 2n ** 32n - 1n;
const U64 = 2n ** 64n - 1n;
const I32 = 2n ** 31n;
const I64 = 2n ** 63n;

/** Whether `value` is an integer as JSON Schema says (any number with a zero fraction) from
 * `low` to `high`. */
export function integer(value: unknown, low: bigint, high: bigint): boolean {
  // A safe integer compares exactly with each bound used here, as a double: the bound is one
  // exactly, or (near 2^63 and 2^64) rounds to one beyond every safe integer.
  if (typeof value === "number" && Number.isSafeInteger(value)) {
    return Number(low) <= value && value <= Number(high);
  }
  let exact: bigint;
  if (typeof value === "bigint") exact = value;
  else if (typeof value === "number" && Number.isInteger(value)) exact = BigInt(value);
  else return false;
  return low <= exact && exact <= high;
}

const SUMMARY_REQUIRED = ["kind", "width", "height", "encoding", "bytes", "blankCheck"];
const SUMMARY = new Set([...SUMMARY_REQUIRED, "window", "handle", "file", "artifact", "artifactError"]);
const BLANK_CHECK = ["blank", "dominantFraction", "dominantIsDark"];
const WINDOW = ["handle", "title", "className", "processName", "processId", "x", "y", "width", "height"];

function exactly(value: Json | undefined, names: string[]): value is JsonObject {
  if (!isObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length === names.length && names.every((name) => has(value, name));
}

function captureSummary(value: JsonObject): boolean {
  if (!SUMMARY_REQUIRED.every((name) => has(value, name))) return false;
  if (!Object.keys(value).every((name) => SUMMARY.has(name))) return false;
  if (has(value, "artifact") === has(value, "artifactError")) return false;
  for (const name of ["artifact", "artifactError"]) {
    if (has(value, name) && !(typeof value[name] === "string" && value[name] !== "")) return false;
  }
  if (has(value, "file") && typeof value["file"] !== "string") return false;
  if (has(value, "handle") && !integer(value["handle"], -I64, I64 - 1n)) return false;
  if (
    !integer(value["width"], 0n, U32) ||
    !integer(value["height"], 0n, U32) ||
    !integer(value["bytes"], 0n, U64) ||
    value["encoding"] !== "png"
  ) {
    return false;
  }
  const check = value["blankCheck"];
  if (
    !exactly(check, BLANK_CHECK) ||
    typeof check["blank"] !== "boolean" ||
    typeof check["dominantIsDark"] !== "boolean" ||
    !fraction(check["dominantFraction"])
  ) {
    return false;
  }
  return !has(value, "window") || windowInfo(value["window"]);
}

function fraction(value: Json | undefined): boolean {
  const number = typeof value === "bigint" ? Number(value) : value;
  return typeof number === "number" && number >= 0 && number <= 1;
}

function windowInfo(value: Json | undefined): boolean {
  return (
    exactly(value, WINDOW) &&
    integer(value["handle"], -I64, I64 - 1n) &&
    ["title", "className", "processName"].every((name) => typeof value[name] === "string") &&
    integer(value["processId"], 0n, U32) &&
    integer(value["x"], -I32, I32 - 1n) &&
    integer(value["y"], -I32, I32 - 1n) &&
    integer(value["width"], 0n, U32) &&
    integer(value["height"], 0n, U32)
  );
}
