//! [`Done`]: what a tool run by the replay sequence answers it: its answer for the sequence to
//! record, the answer it recorded with its key itself, or that its effect did not commit.

use super::stored::StoredAnswer;
use crate::guarantee::Answer;

/// What a tool run by [`Sequence::run_recording`](super::Sequence::run_recording) answers: its
/// answer for the sequence to record, or the answer it recorded with its key itself.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult, PolicyCode};
/// use agent_tool_result::replay::{Call, Done, IdempotencyKey, MemoryLedger, ReplyKind, Sequence};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sequence = Sequence::new(MemoryLedger::new());
/// let call = Call::of("send_sms", "acct_1", IdempotencyKey::new("k-4")?, &serde_json::json!({}));
/// // A tool whose store is not the ledger's hands its answer to the sequence to record.
/// let reply = sequence
///     .run_recording(call, |_lease| async {
///         Done::Answer(Answer::<agent_tool_result::JsonObject>::from(GuaranteeResult::denied(
///             PolicyCode::CONTACT_OPTED_OUT,
///         )))
///     })
///     .await;
/// assert_eq!(reply.kind(), ReplyKind::Ran);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Done<T = crate::JsonObject> {
    /// The answer, for the sequence to record (or, for a refusal, to release the key).
    Answer(Answer<T>),
    /// The answer recorded with the key by the transaction that performed the effect
    /// (`PostgresTransaction::commit`, `SqliteTransaction::commit`, under the lease's
    /// fence): the effect and the answer committed together, and the sequence writes nothing
    /// more. It carries the very bytes recorded, so the first reply is the one every replay
    /// gives.
    Recorded(StoredAnswer),
    /// The tool's effect did not commit under its lease: the lease no longer held the key
    /// when its transaction asked, or the commit's outcome is not known. The sequence answers
    /// what the ledger holds for the key: the answer if the transaction did commit, the
    /// answer of whoever took the key over, or, when the key has no answer (so no effect
    /// committed, since each commits with its answer), the `unavailable` refusal with the key
    /// released. Answer it only from a tool whose every effect is in its typed transaction.
    Lost,
}

impl<T, E> From<super::ledger::TransactionError<E>> for Done<T> {
    /// A store that failed before the commit is the `unavailable` refusal (nothing was
    /// written), another call with the key running its own is the key-in-flight refusal (409,
    /// retry in a second); a lost lease, or a commit whose outcome is not known, is
    /// [`Done::Lost`].
    fn from(err: super::ledger::TransactionError<E>) -> Self {
        use super::ledger::TransactionError;
        match err {
            TransactionError::Failed(_) => Done::Answer(Answer::Refused(
                crate::guarantee::Refusal::unavailable(
                    "the store failed before the effect committed; nothing was done: send the \
                     same request with the same key again",
                )
                .with_retry_after(std::time::Duration::from_secs(1)),
            )),
            TransactionError::InFlight => Done::Answer(Answer::Refused(
                crate::guarantee::Refusal::new(
                    crate::guarantee::RefusalKind::KeyInFlight,
                    "the first request with this key is still running",
                )
                .with_retry_after(std::time::Duration::from_secs(1)),
            )),
            TransactionError::Fenced | TransactionError::Unsure(_) => Done::Lost,
        }
    }
}

impl<T> From<Answer<T>> for Done<T> {
    fn from(answer: Answer<T>) -> Self {
        Done::Answer(answer)
    }
}

impl<T> From<crate::guarantee::GuaranteeResult<T>> for Done<T> {
    fn from(result: crate::guarantee::GuaranteeResult<T>) -> Self {
        Done::Answer(Answer::Result(result))
    }
}

impl<T> From<crate::guarantee::Refusal> for Done<T> {
    fn from(refusal: crate::guarantee::Refusal) -> Self {
        Done::Answer(Answer::Refused(refusal))
    }
}
