/**
 * Idempotency keys: one per logical action, kept across every retry of that action, and a new
 * one only for a new action (changed arguments, or the same arguments meant again).
 */

import { randomUUID } from "node:crypto";

/** A key of 1 to 255 printable ASCII characters. */
export type IdempotencyKey = string & { readonly __idempotencyKey: unique symbol };

/** `value` as a key, or a `RangeError` when it is not 1 to 255 printable ASCII characters. */
export function idempotencyKey(value: string): IdempotencyKey {
  if (!/^[\x20-\x7e]{1,255}$/.test(value)) {
    throw new RangeError("an idempotency key is 1 to 255 printable ASCII characters");
  }
  return value as IdempotencyKey;
}

/** A fresh key, for a new logical action. */
export function newKey(): IdempotencyKey {
  return idempotencyKey(randomUUID());
}

/** The `Idempotency-Key` field value: the key as an RFC 8941 string. */
export function keyHeader(key: IdempotencyKey): string {
  return `"${key.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The keys of an agent's actions in flight: the same tool and arguments get the same key
 * until the action is settled (its answer read and not to be retried), then a new one. */
export class Actions {
  readonly #keys = new Map<string, IdempotencyKey>();

  /** The key of the action `tool(args)`: the one it had, or a new one. */
  key(tool: string, args: unknown): IdempotencyKey {
    const name = `${tool}\u0000${canonical(args)}`;
    let key = this.#keys.get(name);
    if (key === undefined) {
      key = newKey();
      this.#keys.set(name, key);
    }
    return key;
  }

  /** The action is done (or abandoned): the next call of it is a new action. */
  settle(tool: string, args: unknown): void {
    this.#keys.delete(`${tool}\u0000${canonical(args)}`);
  }
}
