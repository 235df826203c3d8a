//! What a tool and the application tell the replay sequence: [`Done`], whether a tool recorded
//! its answer itself, and [`EffectProbe`], whether the operation of an abandoned key may have
//! taken effect.

use std::convert::Infallible;
use std::future::Future;

use super::ledger::{Abandoned, StoredAnswer};
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
    /// The answer the tool recorded with its key itself, last in the transaction that
    /// performed its effect, which committed only because it did (`PostgresLedger::RECORD`,
    /// `SqliteLedger::RECORD`, which check the fence): the effect and the answer committed
    /// together, and the sequence writes nothing more. It carries the very bytes recorded, so
    /// the first reply is the one every replay gives.
    Recorded(StoredAnswer),
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
