/**
 * The contracts' closed sets, each in one table: the envelope's error categories, a guarantee
 * result's settlement states and policy decisions, and the refusals a guarantee tool answers.
 */

/** How a failure is recovered from. */
export type RetryClass =
  | "after-waiting"
  | "after-reobserving"
  | "after-changing-request"
  | "not-recoverable";

/** Each envelope error category (MCEC 3.0, a closed set) and how it is recovered from. */
export const CATEGORIES = {
  timeout: "after-waiting",
  "ambiguous-selector": "after-changing-request",
  "stale-element": "after-reobserving",
  "no-target": "after-reobserving",
  "invalid-argument": "after-changing-request",
  "capture-blank": "after-reobserving",
  "ocr-blank": "after-reobserving",
  "ocr-no-text": "after-changing-request",
  focus: "after-reobserving",
  elevation: "not-recoverable",
  foreground: "after-waiting",
  internal: "not-recoverable",
} as const satisfies Record<string, RetryClass>;

/** An envelope error's category. */
export type Category = keyof typeof CATEGORIES;

/** A guarantee result's `settlement.state`. */
export const SETTLEMENTS = ["not_started", "committed", "unknown"] as const;
export type Settlement = (typeof SETTLEMENTS)[number];

/** A guarantee result's `policy.decision`. */
export const POLICY_DECISIONS = ["allow", "deny", "defer"] as const;
export type PolicyDecision = (typeof POLICY_DECISIONS)[number];

export const ABOUT_BLANK = "about:blank";
/** The problem type of a policy deny over REST (HTTP 422). */
export const POLICY_DENY_TYPE = "https://agentsfirst.ai/problems/policy-deny";
const PROBLEMS = "https://agentsfirst.ai/problems/";

/** Each refusal: its HTTP status, problem type, and how the caller recovers. */
export const REFUSALS = {
  "key-missing": [400, `${PROBLEMS}idempotency-key-missing`, "after-changing-request"],
  "key-invalid": [400, `${PROBLEMS}idempotency-key-invalid`, "after-changing-request"],
  "key-mismatch": [422, `${PROBLEMS}idempotency-key-mismatch`, "after-changing-request"],
  "key-in-flight": [409, `${PROBLEMS}idempotency-key-in-flight`, "after-waiting"],
  "invalid-arguments": [400, ABOUT_BLANK, "after-changing-request"],
  unavailable: [503, ABOUT_BLANK, "after-waiting"],
  "rate-limited": [429, ABOUT_BLANK, "after-waiting"],
} as const satisfies Record<string, readonly [number, string, RetryClass]>;

/** Why a guarantee tool refused a call (nothing ran). */
export type RefusalKind = keyof typeof REFUSALS;

/** The kind a problem names: its type exactly, or for `about:blank` its status (400 invalid
 * arguments, 429 rate limited, any 5xx unavailable). */
export function refusalOfProblem(problemType: string, status: number): RefusalKind | undefined {
  if (problemType === ABOUT_BLANK) {
    if (status === 400) return "invalid-arguments";
    if (status === 429) return "rate-limited";
    if (status >= 500 && status <= 599) return "unavailable";
    return undefined;
  }
  for (const [kind, [, type]] of Object.entries(REFUSALS)) {
    if (type === problemType && type !== ABOUT_BLANK) return kind as RefusalKind;
  }
  return undefined;
}

/** RFC 9457's standard members, which a guarantee result's own fields never use. */
export const PROBLEM_MEMBERS = new Set(["type", "title", "status", "detail", "instance"]);
