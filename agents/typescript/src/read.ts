/**
 * The readers: a result document, a `tools/call` result, or either, from its JSON text or from
 * the value a client handed over, to the {@link Reading} an agent acts on.
 *
 * A `tools/call` result carries its document in `structuredContent`, else in its first text
 * block (a host may keep only one of the two); `isError` must mirror it (`!ok` for an
 * envelope, a deny for a guarantee result, always for a refusal).
 */

import { isCallToolResult, documentOf } from "./document.js";
import { readEnvelope } from "./envelope.js";
import { readGuarantee } from "./guarantee.js";
import {
  NotJson,
  isObject,
  read as readJson,
  repeatedNames,
  strictLoads,
  strictProblem,
  textOf,
  type Json,
} from "./json.js";
import { notContract, type Reading } from "./reading.js";
import { readRefusal } from "./refusal.js";

const NOT_JSON = notContract("not-json");
const BREAKS = notContract("breaks-contract");
const NOT_A_TOOL_RESULT = notContract("not-a-tool-result");
const KNOWN = ["resultType", "content", "structuredContent", "isError", "_meta"];

/** Text or bytes of JSON. */
export type Text = string | Uint8Array;

/** The reading of a contract's document, or `undefined` when it breaks its contract. */
export function readContract(value: Json): Reading | undefined {
  switch (documentOf(value)) {
    case "guarantee":
      return readGuarantee(value);
    case "refusal":
      return readRefusal(value);
    default:
      return readEnvelope(value);
  }
}

/** A bare result document (the JSON a tool answered, out of any transport), read under the
 * contract its top-level names give it. */
export function readDocument(input: Text): Reading {
  let value: Json;
  try {
    value = strictLoads(input);
  } catch (error) {
    if (error instanceof NotJson) return NOT_JSON;
    throw error;
  }
  return readContract(value) ?? BREAKS;
}

/** A `tools/call` result's JSON: the document it carries, with `isError` mirroring it. */
export function readCallToolResult(input: Text): Reading {
  const parsed = parse(input);
  return parsed === undefined ? NOT_JSON : call(parsed.value, parsed.risky);
}

/** A result document or a `tools/call` result, told apart by their top-level names. */
export function read(input: Text): Reading {
  const parsed = parse(input);
  return parsed === undefined ? NOT_JSON : readValue(parsed.value, { check: parsed.risky });
}

function parse(input: Text): { value: Json; risky: boolean } | undefined {
  try {
    return readJson(textOf(input));
  } catch (error) {
    if (error instanceof NotJson) return undefined;
    throw error;
  }
}

/** A parsed result document or `tools/call` result (as `JSON.parse` or a client gives it).
 * `check: false` skips the walk for numbers beyond a double, lone surrogates and depth, for a
 * value known to be free of them. */
export function readValue(value: unknown, options: { check?: boolean } = {}): Reading {
  const check = options.check ?? true;
  const json = value as Json;
  if (isCallToolResult(json)) return call(json, check);
  if (check && strictProblem(json) !== undefined) return NOT_JSON;
  return readContract(json) ?? BREAKS;
}

/** Whatever stops a result being read leaves it not JSON if any of it is not. */
function unread(value: Json, check: boolean): Reading {
  return check && strictProblem(value) !== undefined ? NOT_JSON : NOT_A_TOOL_RESULT;
}

function call(value: Json, check: boolean): Reading {
  if (!isObject(value)) return unread(value, check);
  const repeated = repeatedNames(value);
  if (repeated !== undefined && KNOWN.some((name) => repeated.has(name))) return unread(value, check);
  let resultType: Json | undefined;
  let content: Json = [];
  let carried: Json | undefined;
  let isError: Json | undefined;
  let meta: Json | undefined;
  for (const name in value) {
    const member = value[name]!;
    switch (name) {
      case "resultType":
        resultType = member;
        break;
      case "content":
        content = member;
        break;
      case "structuredContent":
        carried = member;
        break;
      case "isError":
        isError = member;
        break;
      case "_meta":
        meta = member;
        break;
      default:
    }
  }
  if (
    check &&
    [resultType, content, meta].some(
      (part) => part !== undefined && part !== null && strictProblem(part, 1) !== undefined,
    )
  ) {
    return NOT_JSON;
  }
  if (resultType !== undefined && resultType !== null && typeof resultType !== "string") {
    return unread(value, check);
  }
  if (isError !== undefined && isError !== null && typeof isError !== "boolean") return unread(value, check);
  if (meta !== undefined && meta !== null && !isObject(meta)) return unread(value, check);
  if (!Array.isArray(content) || !content.every(block)) return unread(value, check);
  if (resultType !== undefined && resultType !== null && resultType !== "complete") {
    return NOT_A_TOOL_RESULT;
  }
  if (carried !== undefined && carried !== null) {
    if (check && strictProblem(carried) !== undefined) return NOT_A_TOOL_RESULT;
  } else {
    const text = content.find((b) => isObject(b) && b["type"] === "text");
    if (text === undefined) return NOT_A_TOOL_RESULT;
    try {
      carried = strictLoads((text as { text: string }).text);
    } catch (error) {
      if (error instanceof NotJson) return NOT_A_TOOL_RESULT;
      throw error;
    }
  }
  const reading = readContract(carried);
  if (reading === undefined) return NOT_A_TOOL_RESULT;
  const error = isError === true;
  let mirrored: boolean;
  if (reading.ok !== undefined) mirrored = error !== reading.ok;
  else if (reading.policy !== undefined) mirrored = error === (reading.policy === "deny");
  else mirrored = error;
  return mirrored ? reading : NOT_A_TOOL_RESULT;
}

function block(value: Json): boolean {
  if (!isObject(value)) return false;
  const type = value["type"];
  if (type === "text") return typeof value["text"] === "string";
  if (type === "image") {
    const data = value["data"];
    return typeof data === "string" && typeof value["mimeType"] === "string" && base64(data);
  }
  return typeof type === "string";
}

/** Whether `data` is canonical standard base64 (padded, no stray bits). */
function base64(data: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(data) && Buffer.from(data, "base64").toString("base64") === data;
}
