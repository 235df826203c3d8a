/**
 * The command line: `agent-tool-result [--ndjson] FILE...` prints one outcome line per
 * answer, as `atr classify --format json` does, each with its `source`: a result document or
 * `tools/call` result (`FILE`), a REST response captured by `curl -i` (`FILE`) or every
 * response of a HAR file (`FILE #N URL`), and with `--ndjson` each answer of a recorded
 * session (`FILE:LINE`). `-` reads standard input. Exit status 2 when a file cannot be read or
 * a capture is not one.
 */

import { readFileSync } from "node:fs";

import { read } from "./read.js";
import { reading, type Reading } from "./reading.js";
import { readRest } from "./rest.js";
import { readings } from "./session.js";

/** A file that is not what it says it is. */
export class Unusable extends Error {
  override name = "Unusable";
}

type Response = [number, [string, string][], Uint8Array];

/** The readings of one file's answers, each with its source. */
export function* answers(name: string, data: Uint8Array, ndjson: boolean): Generator<[string, Reading]> {
  if (ndjson) {
    for (const [line, read] of readings(data)) yield [`${name}:${line}`, read];
    return;
  }
  let start = 0;
  while (start < data.length && [32, 9, 13, 10, 12].includes(data[start]!)) start++;
  const head = new TextDecoder("latin1").decode(data.subarray(start, start + 5));
  if (head === "HTTP/") {
    const [status, headers, body] = curlResponse(data);
    yield [name, readRest(status, headers, body)];
    return;
  }
  if (data[start] === 123) {
    let har: unknown;
    try {
      har = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(data));
    } catch {
      har = undefined;
    }
    if (typeof har === "object" && har !== null && !Array.isArray(har) && "log" in har) {
      for (const [source, [status, headers, body]] of harResponses(har as Record<string, unknown>, name)) {
        yield [source, readRest(status, headers, body)];
      }
      return;
    }
  }
  yield [name, read(data)];
}

function find(data: Uint8Array, needle: number[]): number {
  outer: for (let i = 0; i + needle.length <= data.length; i++) {
    for (let j = 0; j < needle.length; j++) if (data[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** A response as `curl -i` prints it; interim (1xx) responses and a proxy's `CONNECT` answer
 * before it are skipped. */
export function curlResponse(input: Uint8Array): Response {
  let data = input;
  for (;;) {
    const crlf = find(data, [13, 10, 13, 10]);
    const lf = find(data, [10, 10]);
    const ends = ([[crlf, 4], [lf, 2]] as const).filter(([at]) => at >= 0).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    if (ends.length === 0) throw new Unusable("no blank line after the headers");
    const [at, size] = ends[0]!;
    const head = data.subarray(0, at);
    const body = data.subarray(at + size);
    const lines = new TextDecoder("latin1").decode(head).split("\n").map((l) => l.replace(/\r$/, ""));
    const status = statusLine(lines[0]!);
    const headers: [string, string][] = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon < 0) throw new Unusable("a header line without a colon");
      const key = line.slice(0, colon);
      if (!/^[\x00-\x7f]*$/.test(key)) throw new Unusable("a header name that is not ASCII");
      headers.push([key.trim(), line.slice(colon + 1).replace(/^[ \t\r\n\f]+|[ \t\r\n\f]+$/g, "")]);
    }
    const another = new TextDecoder("latin1").decode(body.subarray(0, 5)) === "HTTP/";
    if (another && ((status >= 100 && status <= 199) || (status === 200 && headers.length === 0))) {
      data = body;
      continue;
    }
    return [status, headers, body];
  }
}

function statusLine(line: string): number {
  const parts = line.split(/[ \t\n\r\f]+/).filter((p) => p !== "");
  if (parts.length === 0 || !parts[0]!.startsWith("HTTP/")) {
    throw new Unusable(`\`${line.slice(0, 40)}\` is not an HTTP status line (capture with \`curl -i\`)`);
  }
  const code = parts[1];
  if (code === undefined || !/^[0-9]{3}$/.test(code) || Number(code) < 100) {
    throw new Unusable(`\`${line}\` has no status code`);
  }
  return Number(code);
}

/** Every response of a HAR 1.2 log: `log.entries[].response`. */
export function* harResponses(har: Record<string, unknown>, name: string): Generator<[string, Response]> {
  const log = har["log"];
  const entries = typeof log === "object" && log !== null ? (log as Record<string, unknown>)["entries"] : undefined;
  if (!Array.isArray(entries)) throw new Unusable("a HAR file has log.entries");
  for (const [index, entry] of entries.entries()) {
    const at = `entry ${index}`;
    const response = typeof entry === "object" && entry !== null ? entry.response : undefined;
    if (response === undefined) throw new Unusable(`${at} has no response`);
    const status = typeof response === "object" && response !== null ? response.status : undefined;
    if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 999) {
      throw new Unusable(`${at}: the response status is not an HTTP status`);
    }
    const headers: [string, string][] = [];
    for (const header of Array.isArray(response.headers) ? response.headers : []) {
      const key: unknown = header?.name;
      const value: unknown = header?.value;
      if (typeof key !== "string" || typeof value !== "string") {
        throw new Unusable(`${at}: a header without a name or a value`);
      }
      headers.push([key.trim(), value.replace(/^[ \t\r\n\f]+|[ \t\r\n\f]+$/g, "")]);
    }
    const content = typeof response.content === "object" && response.content !== null ? response.content : {};
    const text = typeof content.text === "string" ? content.text : "";
    let body: Uint8Array;
    if (content.encoding === "base64") {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
        throw new Unusable(`${at}: the base64 body does not decode`);
      }
      body = new Uint8Array(Buffer.from(text, "base64"));
    } else {
      body = new TextEncoder().encode(text);
    }
    const url: unknown = entry?.request?.url;
    yield [`${name} #${index}${typeof url === "string" ? ` ${url}` : ""}`, [status, headers, body]];
  }
}

/** Runs the command line on `args`; returns its exit status. */
export function main(args: readonly string[], out: (text: string) => void, err: (text: string) => void): number {
  const ndjson = args.includes("--ndjson");
  const files = args.filter((arg) => arg !== "--ndjson");
  if (files.length === 0 || files.some((arg) => arg === "-h" || arg === "--help")) {
    (files.length === 0 ? err : out)("usage: agent-tool-result [--ndjson] FILE...\n");
    return files.length === 0 ? 2 : 0;
  }
  const lines: string[] = [];
  for (const path of files) {
    try {
      const data = new Uint8Array(readFileSync(path === "-" ? 0 : path));
      for (const [source, read] of answers(path === "-" ? "<stdin>" : path, data, ndjson)) {
        lines.push(JSON.stringify({ source, ...reading(read) }));
      }
    } catch (error) {
      if (error instanceof Unusable || (error as NodeJS.ErrnoException).code !== undefined) {
        err(`agent-tool-result: ${path}: ${(error as Error).message}\n`);
        return 2;
      }
      throw error;
    }
  }
  if (lines.length > 0) out(lines.join("\n") + "\n");
  return 0;
}
