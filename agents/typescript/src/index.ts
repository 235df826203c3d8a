/**
 * Read any agent tool's result and take the next step it calls for.
 *
 * The readers of the result contracts for agents written in TypeScript: an envelope (MCEC
 * 3.0), a guarantee result or a guarantee tool's refusal, from a `tools/call` result, a REST
 * response or raw JSON, to one {@link Reading} whose {@link Decision} says what to do next.
 * The verdicts are the Rust crate's `agent-tool-result` and `atr classify`'s, line for line.
 */

export { read, readCallToolResult, readDocument, readValue, type Text } from "./read.js";
export { rateLimit, readRest, type HeadersLike, type RateLimit } from "./rest.js";
export { DECISIONS, notContract, toJson, type Decision, type Kind, type Reading, type Why } from "./reading.js";
export { documentOf, isCallToolResult, type Document } from "./document.js";
export { Actions, idempotencyKey, keyHeader, newKey, type IdempotencyKey } from "./keys.js";
export { follow, payload, readAnswer, waitFor, type FollowOptions, type Followed } from "./follow.js";
export {
  CATEGORIES,
  POLICY_DECISIONS,
  REFUSALS,
  SETTLEMENTS,
  type Category,
  type PolicyDecision,
  type RefusalKind,
  type RetryClass,
  type Settlement,
} from "./vocabulary.js";
export { ContractAnswer, explain } from "./adapters/errors.js";
