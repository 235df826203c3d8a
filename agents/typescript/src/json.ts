/**
 * JSON as every reader of the contracts reads it (I-JSON, RFC 7493).
 *
 * {@link loads} checks syntax only, as `JSON.parse` does, and keeps what `JSON.parse` loses:
 * an object that repeats a name is marked ({@link repeatedNames}: the last value is kept, as
 * `JSON.parse` keeps it); an integer of more digits than a double holds exactly is a
 * `bigint`; a number written with a fraction or exponent is remembered as such
 * ({@link writtenAsFloat}). {@link strictProblem} then finds what I-JSON rules out: a number
 * beyond a double's range, a lone surrogate, nesting deeper than {@link MAX_DEPTH}.
 *
 * Most texts have none of these: a scan without building anything finds so, and
 * `JSON.parse` builds the value.
 */

/** How many arrays and objects deep a document may nest. */
export const MAX_DEPTH = 127;

/** A JSON value as {@link loads} reads it. */
export type Json = null | boolean | number | bigint | string | Json[] | JsonObject;
/** A JSON object. */
export interface JsonObject {
  [name: string]: Json;
}

/** The text is not JSON. */
export class NotJson extends Error {
  override name = "NotJson";
}

// What the text said that the value cannot: kept beside the few objects it concerns (a look-up
// for an object not there costs less than looking for a member it lacks).
const repeats = new WeakMap<object, Set<string>>();
const floats = new WeakMap<object, Set<string>>();

/** The names an object repeated in its text, if any. */
export function repeatedNames(value: object): ReadonlySet<string> | undefined {
  return repeats.get(value);
}

/** Whether `object[name]` was written with a fraction or an exponent (`400.0`, `4e2`). */
export function writtenAsFloat(object: object, name: string): boolean {
  return floats.get(object)?.has(name) ?? false;
}

/** Whether `value` is a plain object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of `input`, or {@link NotJson} for bytes that are not UTF-8. */
export function textOf(input: string | Uint8Array): string {
  if (typeof input === "string") return input;
  try {
    return UTF8.decode(input);
  } catch {
    throw new NotJson("the bytes are not UTF-8");
  }
}

/** The value of `input`: syntax checked only; {@link NotJson} otherwise. */
export function loads(input: string | Uint8Array): Json {
  return read(textOf(input)).value;
}

/** The value of `text` (syntax checked only; {@link NotJson} otherwise), and whether it may
 * hold what {@link strictProblem} looks for ({@link risky}; never when the scan found the
 * text plain). */
export function read(text: string): { value: Json; risky: boolean } {
  if (plain(text)) {
    try {
      return { value: JSON.parse(text) as Json, risky: false };
    } catch (error) {
      throw new NotJson(String(error));
    }
  }
  return { value: new Parser(text).document(), risky: risky(text) };
}

// The scan's stacks, kept between scans (one scan runs at a time: JavaScript runs one).
const KINDS = new Uint8Array(MAX_DEPTH + 2);
const STARTS = new Int32Array(MAX_DEPTH + 2);
const HASHES = new Int32Array(4096);

/** Whether `JSON.parse` reads `text` exactly as the contracts do, with nothing to mark: no
 * repeated name (by a hash of each name: a collision only takes the slow road), no escaped
 * name, no integer past 2^53, no integral number written as a float, and no surrogate
 * escape, big exponent or deep nesting for {@link strictProblem} to look at. */
function plain(text: string): boolean {
  const n = text.length;
  // The open arrays and objects (1 an object, 2 an array), and for the objects a contract
  // reads, the hashes of their names so far: one stack, each object's from where it began.
  let depth = 0;
  let hashCount = 0;
  let i = 0;
  let expectKey = false;
  let backslash = text.indexOf("\\");
  if (backslash < 0) backslash = n;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      let end = text.indexOf('"', i + 1);
      if (end < 0) return true; // cut short: JSON.parse says so
      if (backslash < end) {
        // Escapes: a name with one, or a surrogate escape, takes the slow road; a value's
        // escaped quote does not end it.
        let j = i + 1;
        for (;;) {
          if (j >= n) return true;
          const d = text.charCodeAt(j);
          if (d === 34) break;
          if (d === 92) {
            if (expectKey) return false;
            if (text.charCodeAt(j + 1) === 117) {
              const h = text.charCodeAt(j + 2) | 32;
              const k = text.charCodeAt(j + 3) | 32;
              if (h === 100 && k >= 56 && (k <= 57 || (k >= 97 && k <= 102))) return false;
            }
            j += 2;
            continue;
          }
          j++;
        }
        end = j;
        backslash = text.indexOf("\\", end);
        if (backslash < 0) backslash = n;
      }
      if (expectKey) {
        // Only an object a contract reads refuses a repeated name, and none is deeper than
        // four levels (a tools/call result's structuredContent's warnings). A name is told
        // apart by its length and its first, second and last characters: two names alike in
        // those take the slow road, which compares them whole.
        if (depth <= 4) {
          const length = end - i - 1;
          const hash =
            (length * 16777619) ^
            (text.charCodeAt(i + 1) << 16) ^
            (text.charCodeAt(i + 2) << 8) ^
            text.charCodeAt(end - 1);
          for (let h = STARTS[depth]!; h < hashCount; h++) if (HASHES[h] === hash) return false;
          if (hashCount === HASHES.length) return false; // more names than kept: slow road
          HASHES[hashCount++] = hash;
        }
        expectKey = false;
        // A name's colon, read with it.
        i = text.charCodeAt(end + 1) === 58 ? end + 2 : end + 1;
        continue;
      }
      i = end + 1;
      continue;
    }
    if (c === 44) {
      expectKey = KINDS[depth] === 1;
      i++;
      continue;
    }
    if (c === 123 || c === 91) {
      if (depth >= MAX_DEPTH) return false;
      depth++;
      KINDS[depth] = c === 123 ? 1 : 2;
      if (c === 123) {
        STARTS[depth] = hashCount;
        expectKey = true;
      }
      i++;
      continue;
    }
    if (c === 125 || c === 93) {
      if (c === 125 && depth <= 4) hashCount = STARTS[depth]!;
      if (depth > 0) depth--;
      expectKey = false;
      i++;
      continue;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      let digits = c === 45 ? 0 : 1;
      let floaty = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d >= 48 && d <= 57) {
          if (!floaty) digits++;
        } else if (d === 46 || d === 101 || d === 69) {
          floaty = true;
        } else if (d !== 43 && d !== 45) break;
        j++;
      }
      if (!floaty && digits >= 16) return false;
      if (floaty) {
        const value = Number(text.slice(i, j));
        if (!Number.isFinite(value) || Number.isInteger(value)) return false;
      }
      i = j;
      continue;
    }
    // `true`, `null` and `false` at once (in a text JSON.parse reads; another it refuses).
    i += c === 116 || c === 110 ? 4 : c === 102 ? 5 : 1;
  }
  return true;
}

/** The slow road: a parser that keeps what `JSON.parse` loses. */
class Parser {
  private i = 0;
  constructor(private readonly text: string) {}

  document(): Json {
    this.space();
    const value = this.value(0);
    this.space();
    if (this.i !== this.text.length) this.fail("text after the document");
    return value;
  }

  private fail(what: string): never {
    throw new NotJson(`${what} at ${this.i}`);
  }

  private space(): void {
    const t = this.text;
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      this.i++;
    }
  }

  private value(depth: number): Json {
    const t = this.text;
    const c = t.charCodeAt(this.i);
    if (c === 123) return this.object(depth + 1);
    if (c === 91) return this.array(depth + 1);
    if (c === 34) return this.string();
    if (c === 45 || (c >= 48 && c <= 57)) return this.number().value;
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (t.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    }
    return this.fail("no value");
  }

  private object(depth: number): JsonObject {
    if (depth > 1_000) this.fail("nested too deep");
    this.i++;
    const out: JsonObject = {};
    let repeated: Set<string> | undefined;
    let floaty: Set<string> | undefined;
    this.space();
    if (this.text.charCodeAt(this.i) === 125) {
      this.i++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.text.charCodeAt(this.i) !== 34) this.fail("a name");
      const name = this.string();
      this.space();
      if (this.text.charCodeAt(this.i) !== 58) this.fail("a colon");
      this.i++;
      this.space();
      let value: Json;
      const c = this.text.charCodeAt(this.i);
      if (c === 45 || (c >= 48 && c <= 57)) {
        const number = this.number();
        value = number.value;
        if (number.float) (floaty ??= new Set()).add(name);
        else floaty?.delete(name);
      } else {
        value = this.value(depth);
        floaty?.delete(name);
      }
      if (Object.prototype.hasOwnProperty.call(out, name)) (repeated ??= new Set()).add(name);
      if (name === "__proto__") {
        Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
      } else {
        out[name] = value;
      }
      this.space();
      const d = this.text.charCodeAt(this.i++);
      if (d === 125) break;
      if (d !== 44) this.fail("a comma or a closing brace");
    }
    if (repeated) repeats.set(out, repeated);
    if (floaty?.size) floats.set(out, floaty);
    return out;
  }

  private array(depth: number): Json[] {
    if (depth > 1_000) this.fail("nested too deep");
    this.i++;
    const out: Json[] = [];
    this.space();
    if (this.text.charCodeAt(this.i) === 93) {
      this.i++;
      return out;
    }
    for (;;) {
      this.space();
      out.push(this.value(depth));
      this.space();
      const d = this.text.charCodeAt(this.i++);
      if (d === 93) break;
      if (d !== 44) this.fail("a comma or a closing bracket");
    }
    return out;
  }

  private string(): string {
    const t = this.text;
    let j = this.i + 1;
    let out = "";
    let start = j;
    for (;;) {
      if (j >= t.length) this.fail("a string cut short");
      const c = t.charCodeAt(j);
      if (c === 34) break;
      if (c < 32) this.fail("a control character in a string");
      if (c === 92) {
        out += t.slice(start, j);
        const e = t[j + 1];
        const simple: Record<string, string> = {
          '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t",
        };
        if (e !== undefined && e in simple) {
          out += simple[e];
          j += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(t.slice(j + 2, j + 6))) {
          out += String.fromCharCode(parseInt(t.slice(j + 2, j + 6), 16));
          j += 6;
        } else {
          this.i = j;
          this.fail("an invalid escape");
        }
        start = j;
        continue;
      }
      j++;
    }
    out += t.slice(start, j);
    this.i = j + 1;
    return out;
  }

  private number(): { value: number | bigint; float: boolean } {
    const t = this.text;
    const match = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    match.lastIndex = this.i;
    const found = match.exec(t);
    if (found === null) return this.fail("a number");
    this.i += found[0].length;
    const float = found[1] !== undefined || found[2] !== undefined;
    if (!float && found[0].replace("-", "").length >= 16) {
      const exact = BigInt(found[0]);
      if (exact > 2n ** 53n || exact < -(2n ** 53n)) return { value: exact, float };
    }
    return { value: Number(found[0]), float };
  }
}

const LARGEST = 1.7976931348623157e308;

/** What in `value` (read `depth` arrays and objects down) I-JSON rules out, if anything. */
export function strictProblem(value: Json, depth = 0): string | undefined {
  const stack: [Json, number][] = [[value, depth]];
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    if (typeof item === "string") {
      if (!item.isWellFormed()) return "a lone surrogate";
    } else if (typeof item === "number") {
      if (!Number.isFinite(item)) return "a number beyond a double";
    } else if (typeof item === "bigint") {
      if (Number(item) > LARGEST || Number(item) < -LARGEST) return "a number beyond a double";
    } else if (Array.isArray(item)) {
      if (level + 1 > MAX_DEPTH) return "nested too deep";
      for (const member of item) stack.push([member, level + 1]);
    } else if (item !== null && typeof item === "object") {
      if (level + 1 > MAX_DEPTH) return "nested too deep";
      for (const name of Object.keys(item)) {
        if (!name.isWellFormed()) return "a lone surrogate";
        stack.push([item[name]!, level + 1]);
      }
    }
  }
  return undefined;
}

/** Whether `text` may hold what {@link strictProblem} looks for. */
export function risky(text: string): boolean {
  return /\\u[dD][89a-fA-F]|[eE][+-]?[0-9]{3}|[0-9]{300}/.test(text) || deepEnough(text);
}

function deepEnough(text: string): boolean {
  let brackets = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) if (++brackets > MAX_DEPTH) return true;
  }
  return false;
}

/** The value of `input` if it is JSON as the contracts read it; {@link NotJson} otherwise. */
export function strictLoads(input: string | Uint8Array): Json {
  const { value, risky } = read(textOf(input));
  if (risky) {
    const problem = strictProblem(value);
    if (problem !== undefined) throw new NotJson(problem);
  }
  return value;
}
