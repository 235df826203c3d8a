/**
 * A recorded session, a JSON document a line (NDJSON): a JSON-RPC response carrying a
 * `tools/call` result gives that result; any other JSON-RPC message gives nothing; a line that
 * is not a JSON-RPC message is a document of its own.
 */

import { NotJson, isObject, read as readJson, repeatedNames, textOf, type Json } from "./json.js";
import { read, readValue } from "./read.js";
import type { Reading } from "./reading.js";

const TOOL_RESULT = ["content", "structuredContent", "isError"];

/** Each answer of the session `data` with its line number (from 1). */
export function* readings(data: Uint8Array): Generator<[number, Reading]> {
  let start = 0;
  let line = 0;
  while (start <= data.length) {
    let end = data.indexOf(10, start);
    if (end < 0) end = data.length;
    line++;
    let raw = data.subarray(start, end);
    if (raw.length > 0 && raw[raw.length - 1] === 13) raw = raw.subarray(0, raw.length - 1);
    start = end + 1;
    if (raw.every((b) => b === 32 || b === 9 || b === 10 || b === 13 || b === 12)) continue;
    const reading = readLine(raw);
    if (reading !== undefined) yield [line, reading];
  }
}

/** The answer one line carries, or `undefined` for a JSON-RPC message that carries none. */
export function readLine(line: Uint8Array): Reading | undefined {
  let message: Json;
  let risky: boolean;
  try {
    ({ value: message, risky } = readJson(textOf(line)));
  } catch (error) {
    if (error instanceof NotJson) return read(line);
    throw error;
  }
  const repeated = isObject(message) ? repeatedNames(message) : undefined;
  if (
    !isObject(message) ||
    (repeated !== undefined && (repeated.has("jsonrpc") || repeated.has("result"))) ||
    message["jsonrpc"] === undefined ||
    message["jsonrpc"] === null
  ) {
    return read(line);
  }
  const result = message["result"];
  if (result === undefined || result === null || !namesToolResult(result)) return undefined;
  return readValue(result, { check: risky });
}

function namesToolResult(result: Json): boolean {
  if (!isObject(result)) return true;
  const repeated = repeatedNames(result);
  if (repeated !== undefined && TOOL_RESULT.some((name) => repeated.has(name))) return true;
  return TOOL_RESULT.some((name) => result[name] !== undefined && result[name] !== null);
}
