// The readers' verdicts, by family: each contract's outcomes, JSON the contracts refuse, a
// tools/call result's carriers and its isError, REST responses, keys and the command line.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { main } from "../src/capture.js";
import {
  Actions,
  CATEGORIES,
  rateLimit,
  read,
  readCallToolResult,
  readDocument,
  readRest,
  readValue,
  toJson,
  type Category,
} from "../src/index.js";

const FAILURE = { ok: false, error: { code: "element-stale", category: "stale-element", detail: "d" } };
const DENY = {
  schemaVersion: 1,
  settlement: { state: "not_started" },
  policy: { decision: "deny", code: "contact_opted_out" },
};
const DEFER = {
  schemaVersion: 1,
  settlement: { state: "committed" },
  policy: { decision: "defer", code: "window", retryAt: "2026-12-01T09:00:00.500+00:00" },
  impact: { requested: 3, committed: 1, deferred: 2 },
  recovery: { suggestedNextTool: "lookup_marketing_campaigns" },
};
const LIMITED = { type: "about:blank", title: "Too Many Requests", status: 429 };
const text = (value: unknown): string => JSON.stringify(value);

test("each category decides by its retry class", () => {
  const steps = {
    "after-waiting": "retry",
    "after-reobserving": "observe-then-retry",
    "after-changing-request": "fix-arguments",
    "not-recoverable": "ask-person",
  } as const;
  for (const [category, retry] of Object.entries(CATEGORIES)) {
    const reading = readDocument(text({ ok: false, error: { code: "c", category, detail: "" } }));
    assert.equal(reading.category, category as Category);
    assert.equal(reading.decision, steps[retry]);
  }
});

test("a guarantee result is looked up, denied or continued; its parts must agree", () => {
  const deferred = readDocument(text(DEFER));
  assert.deepEqual([deferred.decision, deferred.retryAt, deferred.nextTool], [
    "look-up",
    "2026-12-01T09:00:00.5Z",
    "lookup_marketing_campaigns",
  ]);
  assert.equal(readDocument(text(DENY)).decision, "ask-person");
  for (const broken of [
    { ...DENY, settlement: { state: "committed" } },
    { ...DENY, policy: { decision: "deny" } },
    { ...DEFER, settlement: { state: "unknown" } },
    { ...DEFER, impact: { requested: 1, committed: 1, deferred: 1 } },
    { ...DENY, status: 422 },
  ]) {
    assert.equal(readDocument(text(broken)).why, "breaks-contract", text(broken));
  }
});

test("readings handed out again are the ones each result calls for", () => {
  // Readings are kept and handed out again by what they say: a next tool's name that spells
  // what an absent one would is still that name.
  const plain = { ...DEFER, recovery: {} };
  const named = { ...DEFER, recovery: { suggestedNextTool: "undefined" } };
  for (const _ of [1, 2]) {
    assert.equal(readDocument(text(plain)).nextTool, undefined);
    assert.equal(readDocument(text(named)).nextTool, "undefined");
    assert.equal(readDocument(text({ ...named, recovery: { suggestedNextTool: "" } })).nextTool, "");
  }
  const allowed = { schemaVersion: 1, settlement: { state: "committed" }, policy: { decision: "allow" } };
  assert.deepEqual(readDocument(text(allowed)), {
    decision: "continue",
    kind: "guarantee",
    settlement: "committed",
    policy: "allow",
  });
  assert.equal(readDocument(text({ ...allowed, settlement: { state: "unknown" } })).decision, "look-up");
});

test("a refusal is retried or fixed by its kind", () => {
  const limited = readDocument(text({ ...LIMITED, retryAt: "2026-12-05T21:40:07Z" }));
  assert.equal(
    toJson(limited),
    '{"decision":"retry","kind":"refusal","refusal":"rate-limited","status":429,"retryAt":"2026-12-05T21:40:07Z"}',
  );
  assert.equal(readDocument('{"type":"about:blank","title":"t","status":400.0}').why, "breaks-contract");
});

test("JSON the contracts refuse, and what JSON.parse would have let through", () => {
  const cases: [string, string | undefined][] = [
    ['{"ok":true,"ok":true}', "breaks-contract"],
    ['{"ok":true,"result":{"a":1,"a":2}}', undefined],
    ['{"ok":true,"result":{"a":"\\ud800"}}', "not-json"],
    ['{"ok":true,"result":{"a":1e400}}', "not-json"],
    ['\ufeff{"ok":true}', "not-json"],
    ['{"ok":true,"result":{"a":' + "[".repeat(125) + "]".repeat(125) + "}}", undefined],
    ['{"ok":true,"result":{"a":' + "[".repeat(126) + "]".repeat(126) + "}}", "not-json"],
    [
      '{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"impact":{"requested":18446744073709551615}}',
      undefined,
    ],
    [
      '{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"impact":{"requested":18446744073709551615.0}}',
      "breaks-contract",
    ],
  ];
  for (const [document, why] of cases) {
    assert.equal(readDocument(document).why, why, document);
    assert.equal(readDocument(new TextEncoder().encode(document)).why, why, document);
  }
  assert.equal(readDocument(new Uint8Array([123, 34, 111, 107, 34, 58, 0xff, 125])).why, "not-json");
});

test("a tools/call result carries its document in either channel, isError mirroring it", () => {
  const structured = { structuredContent: FAILURE, isError: true };
  const onlyText = { content: [{ type: "text", text: text(FAILURE) }], isError: true };
  for (const carrier of [structured, onlyText]) {
    const reading = readCallToolResult(text(carrier));
    assert.equal(reading.decision, "observe-then-retry");
    assert.deepEqual(read(text(carrier)), reading);
    assert.deepEqual(readValue(carrier), reading);
  }
  for (const [value, isError] of [
    [FAILURE, false],
    [DENY, false],
    [LIMITED, false],
    [DEFER, true],
  ] as const) {
    assert.equal(read(text({ structuredContent: value, isError })).why, "not-a-tool-result");
  }
});

test("REST responses by the profile", () => {
  const deferred = readRest(202, { "Content-Type": "application/json", "Retry-After": "120" }, text(DEFER));
  assert.deepEqual([deferred.decision, deferred.retryAfter, deferred.retryAt], ["look-up", 120, undefined]);
  const dated = readRest(202, [["retry-after", "Sun, 06 Dec 2026 09:00:00 GMT"]], text(DEFER));
  assert.equal(dated.retryAt, "2026-12-06T09:00:00Z");
  const problem = { type: "https://agentsfirst.ai/problems/policy-deny", title: "t", status: 422 };
  assert.equal(
    readRest(422, new Headers({ "content-type": "application/problem+json" }), text({ ...problem, ...DENY })).decision,
    "ask-person",
  );
  const scoped = readRest(403, { "www-authenticate": 'Bearer error="insufficient_scope", scope="a b"' }, "");
  assert.deepEqual([scoped.decision, scoped.scopes], ["step-up", ["a", "b"]]);
  assert.equal(readRest(401, {}, "").why, "not-a-profile-response");
  const busy = readRest(503, { "retry-after": "5" }, "");
  assert.deepEqual([busy.refusal, busy.retryAfter, busy.status], ["unavailable", 5, 503]);
});

test("one key per action, kept across its retries", () => {
  const actions = new Actions();
  const first = actions.key("send_sms", { to: "+1", body: "hi" });
  assert.equal(actions.key("send_sms", { body: "hi", to: "+1" }), first);
  assert.notEqual(actions.key("send_sms", { to: "+2", body: "hi" }), first);
  actions.settle("send_sms", { to: "+1", body: "hi" });
  assert.notEqual(actions.key("send_sms", { to: "+1", body: "hi" }), first);
});

test("the command prints a line per answer", () => {
  const dir = mkdtempSync(join(tmpdir(), "atr-ts-"));
  writeFileSync(join(dir, "result.json"), '{"ok":true}');
  writeFileSync(
    join(dir, "session.ndjson"),
    '{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n\n{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"ok":true}}}\n',
  );
  let out = "";
  const write = (chunk: string): void => {
    out += chunk;
  };
  assert.equal(main([join(dir, "result.json")], write, write), 0);
  assert.equal(main(["--ndjson", join(dir, "session.ndjson")], write, write), 0);
  const lines = out.trim().split("\n").map((line) => JSON.parse(line) as { source: string; decision: string });
  assert.deepEqual(lines.map((line) => line.decision), ["continue", "continue"]);
  assert.equal(lines[1]!.source, `${join(dir, "session.ndjson")}:3`);
  assert.equal(main([join(dir, "missing.json")], write, write), 2);
});

test("a rate limit standing from its fields", () => {
  const standing = rateLimit({ "RateLimit-Policy": '"per-account";q=4;w=120', RateLimit: '"per-account";r=0;t=37' });
  assert.deepEqual(standing, { policy: "per-account", remaining: 0, reset: 37, quota: 4, window: 120 });
  assert.equal(rateLimit({ ratelimit: "nonsense" }), undefined);
});

test("base64 image data in lastObservation: every length and padding, as groups of four decide", () => {
  // The rule as the schema writes it: groups of four, the last of two or three characters
  // padded or not.
  const grouped = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const body = Array.from({ length: 5000 }, (_, i) => alphabet[(i * 7) % 64]).join("");
  let seen = 0;
  for (let cut = 0; cut < 4; cut++) {
    for (const tail of ["", "=", "==", "===", "=A", "A=A"]) {
      const data = body.slice(cut) + tail;
      const failure = {
        ok: false,
        error: { code: "e", category: "stale-element", detail: "d", lastObservation: { screenshot: data } },
      };
      // base64 data in an observation breaks the contract; anything else is just text.
      const expected = grouped.test(data) ? "not-contract" : "envelope";
      assert.equal(read(text(failure)).kind, expected, `${data.length} ${JSON.stringify(tail)}`);
      if (expected === "not-contract") seen++;
    }
  }
  // Whole groups bare; three over, bare or with one `=`; two over, bare or with `==`.
  assert.equal(seen, 5);
});
