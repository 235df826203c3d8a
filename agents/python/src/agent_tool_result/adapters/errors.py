"""What the adapters raise when no framework exception fits, and the words they give a model."""

from __future__ import annotations

from ..reading import Decision, Reading

_STEPS = {
    Decision.RETRY: "wait, then call again with the same idempotency key",
    Decision.LOOK_UP: "look the operation up; do not send it again",
    Decision.OBSERVE_THEN_RETRY: "observe again (query, find, capture), then call again",
    Decision.ASK_PERSON: "ask a person",
    Decision.FIX_ARGUMENTS: "change the arguments, then call again",
    Decision.REAUTHENTICATE: "get a fresh token, then call again",
    Decision.STEP_UP: "get a token with the scopes named, then call again",
    Decision.STOP: "stop: the answer is not a result of the contracts",
}


def explain(reading: Reading) -> str:
    """A sentence for a model: what was answered and what to do next."""
    facts = ", ".join(f"{k} {v}" for k, v in reading.to_dict().items() if k != "decision")
    return f"The tool answered {facts}: {_STEPS.get(reading.decision, 'go on')}."


class Unanswered(RuntimeError):
    """An answer the agent cannot act on by itself: credentials to renew or step up, or an
    answer that is no contract's. Its reading says which."""

    def __init__(self, reading: Reading) -> None:
        super().__init__(explain(reading))
        self.reading = reading
