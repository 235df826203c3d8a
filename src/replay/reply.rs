//! [`Reply`]: what the replay sequence answers, and [`ReplyKind`], how it came to it.

use super::stored::StoredAnswer;
use crate::guarantee::{Answer, Refusal};

impl From<Refusal> for Reply {
    /// A refusal of the call before the sequence began it (a key missing, arguments that do
    /// not fit): nothing ran.
    fn from(refusal: Refusal) -> Self {
        Reply::refused(refusal)
    }
}

/// How the sequence came to its reply.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
/// use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, ReplyKind, Sequence};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sequence = Sequence::new(MemoryLedger::new());
/// let key = || IdempotencyKey::new("k-5").unwrap();
/// let tool = |_lease| async { Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed()) };
/// let first = sequence.run(Call::of("send_sms", "acct_1", key(), &json!({ "to": "a" })), tool).await;
/// let again = sequence.run(Call::of("send_sms", "acct_1", key(), &json!({ "to": "a" })), tool).await;
/// let other = sequence.run(Call::of("send_sms", "acct_1", key(), &json!({ "to": "b" })), tool).await;
/// assert_eq!(
///     [first.kind(), again.kind(), other.kind()],
///     [ReplyKind::Ran, ReplyKind::Replayed, ReplyKind::Refused]
/// );
/// assert!(again.is_replay() && again.answer() == first.answer());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplyKind {
    /// The tool ran; its result is recorded (or, for a refusal, the key released).
    Ran,
    /// The key's first answer, again; nothing ran.
    Replayed,
    /// The sequence refused the call (a mismatch, a key in flight, a ledger that failed);
    /// nothing ran.
    Refused,
    /// The key was abandoned by a call that stopped: answered `unknown` with the lookup its
    /// context names, and completed with that answer; nothing ran.
    Recovered,
    /// The tool ran, and its answer could not be recorded yet (the ledger failed): the reply
    /// is `unknown`, naming the operation to look up, and the answer is written by the next
    /// [`Sequence::settle`](super::Sequence::settle), replacing it.
    Unrecorded,
    /// The tool ran past its lease and another holder answered the key first: the reply is
    /// the answer the ledger keeps for the key, as every replay gives it.
    LeaseLost,
}

/// What the sequence answers: the answer in its stored form and read back, and how it came
/// to it. Project it with `RestProfile::reply_response` or as an MCP tool result.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult, PolicyCode};
/// use agent_tool_result::mcp::CallToolResult;
/// use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, Sequence};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sequence = Sequence::new(MemoryLedger::new());
/// let call = Call::of("send_sms", "acct_1", IdempotencyKey::new("k-6")?, &serde_json::json!({}));
/// let reply = sequence
///     .run(call, |_lease| async {
///         Answer::<agent_tool_result::JsonObject>::from(GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT))
///     })
///     .await;
/// // The answer as recorded, projected per transport: a deny is an MCP error result.
/// assert!(reply.answer().result().is_some_and(GuaranteeResult::is_deny));
/// let denied = reply.answer().result().expect("a result, not a refusal");
/// assert!(CallToolResult::from_guarantee(denied)?.is_error());
/// assert!(!reply.stored().is_refusal());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    kind: ReplyKind,
    pub(super) stored: StoredAnswer,
    pub(super) answer: Answer,
}

impl Reply {
    pub(super) fn new(kind: ReplyKind, stored: StoredAnswer, answer: Answer) -> Self {
        Reply {
            kind,
            stored,
            answer,
        }
    }

    /// A refusal of the sequence's own.
    pub(super) fn refused(refusal: Refusal) -> Self {
        let answer = Answer::Refused(refusal);
        let stored = StoredAnswer::from_stored(true, answer.to_json().unwrap_or_default());
        Reply::new(ReplyKind::Refused, stored, answer)
    }

    /// How the sequence came to this reply.
    #[must_use]
    pub fn kind(&self) -> ReplyKind {
        self.kind
    }

    /// Whether this is a replay of the key's first answer (REST marks it
    /// `Idempotent-Replayed: true`).
    #[must_use]
    pub fn is_replay(&self) -> bool {
        self.kind == ReplyKind::Replayed
    }

    /// The answer, as stored: its JSON is the body a projection sends.
    #[must_use]
    pub fn stored(&self) -> &StoredAnswer {
        &self.stored
    }

    /// The answer.
    #[must_use]
    pub fn answer(&self) -> &Answer {
        &self.answer
    }

    /// The answer, owned.
    #[must_use]
    pub fn into_answer(self) -> Answer {
        self.answer
    }
}
