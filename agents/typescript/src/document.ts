/**
 * Which contract a JSON document is: one rule, by its top-level member names alone, the same
 * in every reader. A top-level `schemaVersion`: a guarantee result, whatever else it holds;
 * otherwise no `ok` but a `type` and a `status`: a guarantee tool's refusal (an RFC 9457
 * problem); otherwise an envelope.
 */

import { isObject, type Json, type JsonObject } from "./json.js";

/** The contract a document is read under. */
export type Document = "envelope" | "guarantee" | "refusal";

// The top-level names the rule looks at, found in one pass over the object's names.
const SCHEMA_VERSION = 1;
const OK = 2;
const TYPE = 4;
const STATUS = 8;
const CALL = 16;

function names(value: JsonObject): number {
  let found = 0;
  for (const name in value) {
    switch (name) {
      case "schemaVersion":
        found |= SCHEMA_VERSION;
        break;
      case "ok":
        found |= OK;
        break;
      case "type":
        found |= TYPE;
        break;
      case "status":
        found |= STATUS;
        break;
      case "content":
      case "structuredContent":
      case "isError":
        found |= CALL;
        break;
      default:
    }
  }
  return found;
}

/** The contract of the parsed document `value`. */
export function documentOf(value: Json): Document {
  if (!isObject(value)) return "envelope";
  const found = names(value);
  if (found & SCHEMA_VERSION) return "guarantee";
  return (found & (OK | TYPE | STATUS)) === (TYPE | STATUS) ? "refusal" : "envelope";
}

/** Whether a parsed object is a `tools/call` result rather than a document: it names
 * `content`, `structuredContent` or `isError` and no `schemaVersion`. */
export function isCallToolResult(value: Json): boolean {
  return isObject(value) && (names(value) & (SCHEMA_VERSION | CALL)) === CALL;
}
