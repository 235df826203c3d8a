//! How a guarantee tool's abandoned key is recovered, declared with the tool: what its
//! operation came to ([`Recovered`]), the fields that name the operation
//! ([`OperationFields`]), and how the sequence finds the tool that began a key.
//!
//! A key begun by [`Sequence::serve`](super::Sequence::serve) stores, as its context, the
//! tool's name and the operation's id; the sequence remembers every tool it served, so
//! whoever finds the key abandoned (a request with the key, or the background
//! [`Sequence::settle`](super::Sequence::settle) of any process) asks that tool, and no
//! application-wide table of operation kinds is needed.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError, RwLock};

use serde::Serialize;

use super::ledger::Abandoned;
use super::stored::StoredAnswer;
use crate::guarantee::{Answer, GuaranteeResult};

/// A guarantee tool's own fields, built from the id of the operation its call creates. The
/// tool's answers carry them, and so does the `unknown` answer of its abandoned key (with the
/// lookup the tool declares), so the member that names the operation (`messageId`, say) is
/// named once: by this type.
///
/// ```
/// use agent_tool_result::replay::OperationFields;
///
/// #[derive(serde::Serialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Sent {
///     message_id: String,
/// }
///
/// impl OperationFields for Sent {
///     fn of_operation(id: &str) -> Self {
///         Sent { message_id: id.to_owned() }
///     }
/// }
///
/// let json = serde_json::to_value(Sent::of_operation("msg_1")).unwrap();
/// assert_eq!(json, serde_json::json!({ "messageId": "msg_1" }));
/// ```
pub trait OperationFields: Serialize + Send + 'static {
    /// The fields naming operation `id` (its id is [`Operation::id`](super::Operation::id)).
    fn of_operation(id: &str) -> Self;
}

/// The error of a tool's [`recover`](super::GuaranteeTool::recover): its store, say, did not answer.
/// The sequence then answers `unavailable` (retry in a second), runs nothing, and asks again.
pub type RecoveryError = Box<dyn std::error::Error + Send + Sync>;

/// What a guarantee tool found of the operation of its abandoned key (its call stopped, or
/// lost its store, between beginning and answering), asked once the key is held under a new,
/// greater fence.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, Tally};
/// use agent_tool_result::replay::Recovered;
///
/// // A message found sent: its answer, final.
/// let sent: Recovered<agent_tool_result::JsonObject> =
///     Recovered::Settled(GuaranteeResult::committed_one());
/// assert!(matches!(sent, Recovered::Settled(_)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Recovered<F> {
    /// Running the call again repeats nothing: the operation never started, or its only
    /// effect outside is deduplicated by its provider on the call's effect key and its own
    /// record never committed (under the new fence, it never can). The call runs now (or, in
    /// the background, the key is released for the same request).
    NotStarted,
    /// It may have started, and what it came to is not known: the key answers
    /// `settlement.state: unknown`, naming the tool's lookup and the operation's id, and is
    /// never run again. The call that began the key replaces it with its own answer, should
    /// it come back. What a tool that declares nothing answers.
    Unknown,
    /// It came to this answer, recorded as the key's final answer.
    Settled(GuaranteeResult<F>),
}

/// What the sequence found of an abandoned key's operation, in the stored form.
#[derive(Debug)]
pub(crate) enum Examined {
    /// It never started: run it now (or release the key).
    NotStarted,
    /// Not known: answer `unknown` (provisional).
    Unknown,
    /// Settled: this answer, final (boxed: the other two carry nothing).
    Settled(Box<(StoredAnswer, Answer)>),
}

impl Examined {
    /// `result`, settled, or `unknown` when it does not serialize and read back.
    pub(crate) fn settled<T: Serialize>(result: GuaranteeResult<T>) -> Self {
        round_trip(&Answer::Result(result)).map_or(Examined::Unknown, |settled| {
            Examined::Settled(Box::new(settled))
        })
    }
}

/// A future a declared tool answers.
type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A served tool, as the sequence asks it about its abandoned keys.
pub(crate) trait Declared: Send + Sync {
    /// What the operation `id` of `abandoned` came to.
    fn examine<'a>(
        &'a self,
        abandoned: &'a Abandoned,
        id: String,
    ) -> Boxed<'a, Result<Examined, String>>;

    /// The `unknown` answer of operation `id`: the tool's lookup and the fields naming it.
    fn unknown(&self, id: &str) -> Option<(StoredAnswer, Answer)>;
}

/// An answer in its stored form and read back from it, or `None` when it does not serialize
/// to an object or does not read back.
pub(crate) fn round_trip<T: Serialize>(answer: &Answer<T>) -> Option<(StoredAnswer, Answer)> {
    let stored = StoredAnswer::of(answer).ok()?;
    let read = stored.answer().ok()?;
    Some((stored, read))
}

/// The context a served call stores with its key: the tool's name, a space (which no tool
/// name holds), and the operation's id.
pub(crate) fn context_of(tool: &str, id: &str) -> String {
    format!("{tool} {id}")
}

/// The tools a sequence served, by name: which one began a key, from its context.
#[derive(Default)]
pub(crate) struct Tools(RwLock<HashMap<&'static str, Arc<dyn Declared>>>);

impl Tools {
    /// Remembers the tool `name` as `tool()` makes it, unless a tool of that name is known
    /// already.
    pub(crate) fn declare(&self, name: &'static str, tool: impl FnOnce() -> Arc<dyn Declared>) {
        let known = self
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(name);
        if !known {
            self.0
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(name)
                .or_insert_with(tool);
        }
    }

    /// The tool that began the key of `context`, and its operation's id, when a served call
    /// stored it.
    pub(crate) fn of(&self, context: &str) -> Option<(Arc<dyn Declared>, String)> {
        let (tool, id) = context.split_once(' ')?;
        let tools = self.0.read().unwrap_or_else(PoisonError::into_inner);
        Some((Arc::clone(tools.get(tool)?), id.to_owned()))
    }

    /// How many tools are known.
    pub(crate) fn len(&self) -> usize {
        self.0.read().unwrap_or_else(PoisonError::into_inner).len()
    }
}
