//! [`EffectProbe`]: what the application tells the replay sequence of a hand-built call's
//! abandoned key (whether its operation may have taken effect, and what it came to). A
//! guarantee tool served by the sequence answers for its own keys instead
//! ([`GuaranteeTool::recover`](super::GuaranteeTool::recover)).

use std::convert::Infallible;
use std::future::Future;

use super::ledger::Abandoned;
use crate::guarantee::GuaranteeResult;

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
