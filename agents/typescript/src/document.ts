/**
 * Which contract a JSON document is: one rule, by its top-level member names alone, the same
 * in every reader. A top-level `schemaVersion`: a guarantee result, whatever else it holds;
 * otherwise no `ok` but a `type` and a `status`: a guarantee tool's refusal (an RFC 9457
 * problem); otherwise an envelope.
 */

import { isObject, type Json } from "./json.js";

/** The contract a document is read under. */
export type Document = "envelope" | "guarantee" | "refusal";

// The names asked about are none of Object.prototype's: `in` is an own-member test here.
const has = (object: object, name: string): boolean => name in object;

/** The contract of the parsed document `value`. */
export function documentOf(value: Json): Document {
  if (isObject(value)) {
    if (has(value, "schemaVersion")) return "guarantee";
    if (!has(value, "ok") && has(value, "type") && has(value, "status")) return "refusal";
  }
  return "envelope";
}

/** Whether a parsed object is a `tools/call` result rather than a document: it names
 * `content`, `structuredContent` or `isError` and no `schemaVersion`. */
export function isCallToolResult(value: Json): boolean {
  return (
    isObject(value) &&
    !has(value, "schemaVersion") &&
    (has(value, "content") || has(value, "structuredContent") || has(value, "isError"))
  );
}
