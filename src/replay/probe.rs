//! What a tool and the application tell the replay sequence: [`Done`], whether a tool recorded
//! its answer itself, and [`EffectProbe`], whether the operation of an abandoned key may have
//! taken effect.

use std::convert::Infallible;
use std::future::Future;

use super::ledger::Abandoned;
use super::stored::StoredAnswer;
use crate::guarantee::{Answer, GuaranteeResult};

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

/// What the sequence asks the application of a key it found abandoned (its call stopped, or
/// lost its store, between beginning and completing): whether the operation the key began
/// may have taken effect. The answer decides between `unknown` (it may have: the caller looks
/// it up) and running the call after all (it did not), so that a key is never burned as
/// `unknown` for a call that did nothing.
///
/// The sequence asks only once it holds the key under a new, greater [`Fence`]: a call that
/// still runs under the old fence, and whose writes check their fence (see
/// [`crate::replay`]), can no longer start anything, so an answer of `false` is final.
///
/// [`Fence`]: super::Fence
///
/// ```
/// use agent_tool_result::replay::{Abandoned, EffectProbe, MemoryLedger, Sequence};
/// use std::collections::HashSet;
/// use std::convert::Infallible;
/// use std::sync::Mutex;
///
/// /// The application's own record of the operations it started, by id.
/// struct Started(Mutex<HashSet<String>>);
///
/// impl EffectProbe for Started {
///     type Error = Infallible;
///
///     async fn started(&self, abandoned: &Abandoned) -> Result<bool, Infallible> {
///         // The key's context is the id of the operation its call would create.
///         Ok(self.0.lock().unwrap().contains(abandoned.context()))
///     }
/// }
///
/// let sequence = Sequence::new(MemoryLedger::new()).with_probe(Started(Mutex::default()));
/// ```
pub trait EffectProbe: Send + Sync {
    /// The probe's error: the sequence then answers `unavailable` and asks again later.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Whether the operation of `abandoned` (its [`context`](Abandoned::context) names it)
    /// may have started a side effect: `true` when it might have, `false` only when it
    /// certainly did not.
    fn started(
        &self,
        abandoned: &Abandoned,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;

    /// The operation's actual answer, when [`EffectProbe::started`] said it may have
    /// started and the application knows what it came to (a campaign's own counts, say):
    /// recorded as the key's final answer instead of a provisional `unknown`. `None` (the
    /// default) answers `unknown`, which the call that began the key replaces with its own
    /// answer if it comes back.
    fn outcome(
        &self,
        abandoned: &Abandoned,
    ) -> impl Future<Output = Result<Option<GuaranteeResult>, Self::Error>> + Send {
        let _ = abandoned;
        async { Ok(None) }
    }
}

/// A probe shared with the rest of the application (its store, say).
impl<P: EffectProbe> EffectProbe for std::sync::Arc<P> {
    type Error = P::Error;

    fn started(
        &self,
        abandoned: &Abandoned,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        (**self).started(abandoned)
    }

    fn outcome(
        &self,
        abandoned: &Abandoned,
    ) -> impl Future<Output = Result<Option<GuaranteeResult>, Self::Error>> + Send {
        (**self).outcome(abandoned)
    }
}

/// The probe of a sequence given none: every abandoned key may have taken effect, and is
/// answered `unknown`.
///
/// ```
/// use agent_tool_result::replay::{AssumeStarted, MemoryLedger, Sequence};
///
/// // A sequence given no probe answers every abandoned key `unknown`.
/// let sequence: Sequence<MemoryLedger, AssumeStarted> = Sequence::new(MemoryLedger::new());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AssumeStarted;

impl EffectProbe for AssumeStarted {
    type Error = Infallible;

    async fn started(&self, _: &Abandoned) -> Result<bool, Infallible> {
        Ok(true)
    }
}
