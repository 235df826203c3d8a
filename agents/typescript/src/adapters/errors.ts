/** What the adapters raise when a final answer is not `continue`, and the words they give a
 * model. */

import type { Decision, Reading } from "../reading.js";

const STEPS: Record<Decision, string> = {
  continue: "go on",
  retry: "wait, then call again with the same idempotency key",
  "look-up": "look the operation up; do not send it again",
  "observe-then-retry": "observe again (query, find, capture), then call again",
  "ask-person": "ask a person",
  "fix-arguments": "change the arguments, then call again",
  reauthenticate: "get a fresh token, then call again",
  "step-up": "get a token with the scopes named, then call again",
  stop: "stop: the answer is not a result of the contracts",
};

/** A sentence for a model: what was answered and what to do next. */
export function explain(reading: Reading): string {
  const facts = Object.entries(reading)
    .filter(([name]) => name !== "decision")
    .map(([name, value]) => `${name} ${Array.isArray(value) ? value.join(" ") : String(value)}`)
    .join(", ");
  return `The tool answered ${facts}: ${STEPS[reading.decision]}.`;
}

/** A final answer other than `continue`: its reading says what to do. */
export class ContractAnswer extends Error {
  override name = "ContractAnswer";
  constructor(readonly reading: Reading) {
    super(explain(reading));
  }
}
