//! [`GuaranteeTool`]: a guarantee tool written once (its name, arguments, fields, effect and
//! recovery), served by the replay [`Sequence`] over any transport.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::call::Call;
use super::done::Done;
use super::key::IdempotencyKey;
use super::lease::Lease;
use super::ledger::Abandoned;
use super::ledger::Ledger;
use super::probe::EffectProbe;
use super::recovery::{
    Declared, Examined, OperationFields, Recovered, RecoveryError, context_of, round_trip,
};
use super::reply::Reply;
use super::sequence::Sequence;
use super::stored::StoredAnswer;
use crate::guarantee::Refusal;
use crate::guarantee::{Answer, GuaranteeResult};

/// A guarantee tool, written once: its name, what it does, the prefix of the ids of the
/// operations it creates and the lookup that finds them, its typed arguments and fields, its
/// effect, and how its abandoned key is recovered. From it, [`Sequence::serve`] runs a call
/// under the replay sequence (the arguments read, the key begun or replayed, the operation's
/// id and the tool stored with the key, the answer recorded), and the transports describe it:
/// `mcp::guarantee_tool` (its MCP tool, with the input schema of its arguments plus the key and
/// the output schema of its fields) and, over REST, `http::KeyedJson` (the key and the JSON
/// body).
///
/// The answer's type is the fields' type for every decision
/// ([`GuaranteeResult<Self::Fields>`](crate::guarantee::GuaranteeResult)), so the schema a
/// transport advertises is the type the tool returns: a tool that answers another type does
/// not compile.
///
/// **Recovery.** A key whose call stopped between beginning and answering (its process killed,
/// paused past its lease, cut off from its store) is found abandoned by whoever comes next,
/// in any process. The sequence asks the tool that began it, [`GuaranteeTool::recover`], what
/// its operation came to: never started (the call runs now), settled (that answer, final), or
/// not known. A tool that declares nothing answers not known: the safe answer, `unknown`
/// naming [`GuaranteeTool::LOOKUP`] and the operation's id, and the call is never run again.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, SettlementState, Tally};
/// use agent_tool_result::replay::{
///     Done, GuaranteeTool, IdempotencyKey, MemoryLedger, Operation, OperationFields, Recovered,
///     RecoveryError, Sequence,
/// };
/// use serde::{Deserialize, Serialize};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// #[derive(Deserialize)]
/// struct SmsArgs {
///     to: String,
/// }
///
/// #[derive(Serialize)]
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
/// struct SendSms;
///
/// impl GuaranteeTool for SendSms {
///     const NAME: &'static str = "send_sms";
///     const DESCRIPTION: &'static str = "Sends one SMS.";
///     const OPERATION: &'static str = "msg";
///     const LOOKUP: &'static str = "lookup_sms";
///     type Arguments = SmsArgs;
///     type Fields = Sent;
///
///     async fn run(&self, args: SmsArgs, operation: Operation) -> Done<Sent> {
///         if args.to == "+15550100" {
///             return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into();
///         }
///         // ... send, under operation.lease()'s fence ...
///         GuaranteeResult::committed_with(Tally::sent(1), Sent::of_operation(operation.id())).into()
///     }
///
///     /// An abandoned key: the provider is asked whether it sent the message.
///     async fn recover(&self, operation: Operation) -> Result<Recovered<Sent>, RecoveryError> {
///         let sent_by_provider = operation.id().is_empty(); // the provider's own record
///         Ok(if sent_by_provider {
///             Recovered::Settled(GuaranteeResult::committed_with(
///                 Tally::sent(1),
///                 Sent::of_operation(operation.id()),
///             ))
///         } else {
///             Recovered::Unknown
///         })
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let sequence = Sequence::new(MemoryLedger::new());
/// let tool = Arc::new(SendSms);
/// let key = IdempotencyKey::new("sms-1").unwrap();
/// let reply = sequence.serve(&tool, "acct_1", key, json!({ "to": "+15550199" })).await;
/// let id = reply.answer().result().and_then(|r| r.field("messageId")).cloned();
/// assert!(id.unwrap().as_str().unwrap().starts_with("msg_"));
///
/// // Arguments that do not fit are refused, naming the argument, and begin no key.
/// let key = IdempotencyKey::new("sms-2").unwrap();
/// let reply = sequence.serve(&tool, "acct_1", key, json!({ "to": 5 })).await;
/// let refusal = reply.answer().refusal().unwrap();
/// assert!(refusal.detail().starts_with("`to`: "), "{}", refusal.detail());
/// # });
/// ```
pub trait GuaranteeTool: Send + Sync {
    /// The tool's name, as MCP lists it and a REST route names it: written once, here.
    const NAME: &'static str;
    /// What the tool does, for an agent choosing among tools.
    const DESCRIPTION: &'static str;
    /// The prefix of the ids of the operations its calls create (`msg`, `cmp`): see
    /// [`Call::operation_id`].
    const OPERATION: &'static str;
    /// The read-only tool that finds an operation of this tool by its id (`lookup_sms`): what
    /// an `unknown` answer names as `recovery.suggestedNextTool`, beside the fields naming the
    /// operation.
    const LOOKUP: &'static str;
    /// What the tool's effect is like, for clients deciding whether to ask first (MCP's
    /// annotations): whether it destroys, whether it reaches beyond its service. A guarantee
    /// tool is listed idempotent (per key) and not read-only whatever this says. MCP's
    /// defaults unless the tool says otherwise.
    const HINTS: crate::Hints = crate::Hints::new();
    /// The tool's arguments, the idempotency key apart.
    type Arguments: DeserializeOwned + Send + 'static;
    /// The tool's own fields, on every result it answers (none on a deny), built from the
    /// operation's id for the answers that know nothing more ([`OperationFields`]).
    type Fields: OperationFields;

    /// Runs one call, once for its key: the arguments, and the operation it creates (its id,
    /// the caller, and the lease on the key, whose fence every write that creates the
    /// operation checks). Answer [`Done::Recorded`] when the tool recorded its answer with
    /// its key in the transaction of its effect.
    fn run(
        &self,
        arguments: Self::Arguments,
        operation: Operation,
    ) -> impl Future<Output = Done<Self::Fields>> + Send;

    /// What the operation of an abandoned key came to, asked by whoever finds the key
    /// abandoned, once it holds the key under a new, greater fence (so that the call that
    /// began it can make no fenced write any more): [`Recovered::NotStarted`] only when the
    /// operation certainly never took effect (the call then runs now), its answer when it is
    /// known ([`Recovered::Settled`]), [`Recovered::Unknown`] otherwise. Ask where the effect
    /// lands: the tool's own record (committed with the answer, under the fence), or the
    /// provider, by the effect key the call handed it.
    ///
    /// Declaring nothing is safe: every abandoned key answers `unknown`, naming
    /// [`GuaranteeTool::LOOKUP`] and the operation's id, and is never run again.
    ///
    /// # Errors
    ///
    /// When it cannot tell (its store did not answer): the caller is refused `unavailable`,
    /// nothing runs, and the key is asked about again.
    fn recover(
        &self,
        operation: Operation,
    ) -> impl Future<Output = Result<Recovered<Self::Fields>, RecoveryError>> + Send {
        let _ = operation;
        async { Ok(Recovered::Unknown) }
    }

    /// Whether the tool's every effect is a write in the typed transaction on the ledger's own
    /// database, so that its key is begun in that transaction
    /// ([`Call::with_effect_in_ledger`]): one round trip and one commit fewer. `false` by
    /// default; a tool may answer by where it runs (its store, say).
    fn effect_in_ledger(&self) -> bool {
        false
    }
}

/// The operation a call of a [`GuaranteeTool`] creates: its id (stable for the key, stored with
/// the key, so that a call found abandoned is recovered by it), the principal that called,
/// and the lease the sequence holds on the key.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, Tally};
/// use agent_tool_result::replay::{Done, GuaranteeTool, Operation, OperationFields};
///
/// #[derive(serde::Deserialize)]
/// struct Args {
///     to: String,
/// }
///
/// #[derive(serde::Serialize)]
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
/// struct SendSms;
///
/// impl GuaranteeTool for SendSms {
///     const NAME: &'static str = "send_sms";
///     const DESCRIPTION: &'static str = "Sends one SMS.";
///     const OPERATION: &'static str = "msg";
///     const LOOKUP: &'static str = "lookup_sms";
///     type Arguments = Args;
///     type Fields = Sent;
///
///     async fn run(&self, args: Args, operation: Operation) -> Done<Sent> {
///         // The id is the same for every retry of the key: the provider's idempotency key,
///         // and the record the send creates.
///         let effect = operation.lease().effect_key(&args.to);
///         let _ = (effect, operation.principal());
///         GuaranteeResult::committed_with(Tally::sent(1), Sent::of_operation(operation.id())).into()
///     }
/// }
/// ```
#[derive(Debug)]
pub struct Operation {
    id: String,
    principal: String,
    lease: Lease,
}

impl Operation {
    pub(crate) fn new(id: String, principal: String, lease: Lease) -> Self {
        Operation {
            id,
            principal,
            lease,
        }
    }

    /// The operation's id: `OPERATION` and 16 hex digits of the call's key and principal.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The principal whose call this is.
    #[must_use]
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The lease on the call's key: its fence, for every write that creates the operation.
    /// For [`GuaranteeTool::recover`], the lease of whoever found the key abandoned, under
    /// the new fence.
    #[must_use]
    pub fn lease(&self) -> &Lease {
        &self.lease
    }
}

/// The detail of arguments that do not fit a tool's input schema, naming the argument
/// (`` `to`: invalid type: integer `5`, expected a string ``): what the `invalid-arguments`
/// refusal of a guarantee tool and the `invalid-argument` envelope of any other say.
pub(crate) fn arguments_misfit(err: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = err.path().to_string();
    let inner = err.into_inner();
    if path == "." {
        format!("the arguments do not fit the tool's input schema: {inner}")
    } else {
        format!("`{path}`: {inner}")
    }
}

/// `arguments` read as `T`, or the `invalid-arguments` refusal that names the argument that
/// does not fit.
///
/// # Errors
///
/// The refusal, when they do not fit.
pub(crate) fn read_arguments<T: DeserializeOwned>(arguments: &Value) -> Result<T, Refusal> {
    serde_path_to_error::deserialize(arguments)
        .map_err(|err| Refusal::invalid_arguments(arguments_misfit(err)))
}

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    /// Serves one call of `tool` by `principal` under `key`, with `arguments` as they came
    /// (a REST body): reads them (arguments that do not fit are refused, naming the argument,
    /// before the key is begun), then runs the call under the sequence, as
    /// [`Sequence::run_recording`] does, storing the tool's name and the operation's id with
    /// the key. The sequence remembers the tool, so that whoever finds one of its keys
    /// abandoned (a request, or [`Sequence::settle`] in the background) asks it
    /// ([`GuaranteeTool::recover`]).
    ///
    /// # Panics
    ///
    /// As [`Sequence::run`].
    pub async fn serve<T: GuaranteeTool + 'static>(
        &self,
        tool: &Arc<T>,
        principal: &str,
        key: IdempotencyKey,
        arguments: Value,
    ) -> Reply {
        self.serve_admitted(tool, principal, key, arguments, || async { Ok(()) })
            .await
    }
}

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    /// Remembers `tool`, so that [`Sequence::settle`] asks it about its abandoned keys before
    /// any call of it reached this process ([`Sequence::serve`] remembers the tools it
    /// serves, and a registry every tool it lists). A key begun by a tool this process does
    /// not know is answered a bare `unknown` in the background, and recovered by its tool
    /// at its next request.
    pub fn declare<T: GuaranteeTool + 'static>(&self, tool: &Arc<T>) {
        self.tools.declare(T::NAME, || Arc::new(Arc::clone(tool)));
    }

    /// [`Sequence::serve`], in the one order every transport keeps: the arguments read (a
    /// misfit refused, no key begun), the key begun (a settled key's replay, a refusal of the
    /// ledger's, or an abandoned key's recovery answered at once: none of them does work, so
    /// none asks `admit`), then `admit` asked (an account's rate limit: a refusal is
    /// answered, and the key released, for the same request later), then the tool run.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{GuaranteeResult, Refusal, RefusalKind, Tally};
    /// use agent_tool_result::replay::{
    ///     Done, GuaranteeTool, IdempotencyKey, MemoryLedger, Operation, OperationFields,
    ///     ReplyKind, Sequence,
    /// };
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// #[derive(serde::Serialize)]
    /// struct Sent {
    ///     id: String,
    /// }
    ///
    /// impl OperationFields for Sent {
    ///     fn of_operation(id: &str) -> Self {
    ///         Sent { id: id.to_owned() }
    ///     }
    /// }
    ///
    /// struct Ping;
    ///
    /// impl GuaranteeTool for Ping {
    ///     const NAME: &'static str = "ping";
    ///     const DESCRIPTION: &'static str = "Pings.";
    ///     const OPERATION: &'static str = "png";
    ///     const LOOKUP: &'static str = "lookup_ping";
    ///     type Arguments = serde_json::Value;
    ///     type Fields = Sent;
    ///
    ///     async fn run(&self, _: serde_json::Value, operation: Operation) -> Done<Sent> {
    ///         GuaranteeResult::committed_with(Tally::sent(1), Sent::of_operation(operation.id())).into()
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let (sequence, tool) = (Sequence::new(MemoryLedger::new()), Arc::new(Ping));
    /// let key = || IdempotencyKey::new("p-1").unwrap();
    /// let limited = || async { Err(Refusal::new(RefusalKind::RateLimited, "over the limit")) };
    /// let first = sequence.serve_admitted(&tool, "acct_1", key(), json!({}), || async { Ok(()) }).await;
    /// // At the limit, the settled key still replays its answer; a new key is refused.
    /// let again = sequence.serve_admitted(&tool, "acct_1", key(), json!({}), limited).await;
    /// assert_eq!(again.kind(), ReplyKind::Replayed);
    /// assert_eq!(again.stored(), first.stored());
    /// let other = IdempotencyKey::new("p-2").unwrap();
    /// let refused = sequence.serve_admitted(&tool, "acct_1", other, json!({}), limited).await;
    /// assert_eq!(refused.answer().refusal().map(|r| r.kind()), Some(RefusalKind::RateLimited));
    /// # });
    /// ```
    ///
    /// # Panics
    ///
    /// As [`Sequence::run`].
    pub async fn serve_admitted<T, A, AFut>(
        &self,
        tool: &Arc<T>,
        principal: &str,
        key: IdempotencyKey,
        arguments: Value,
        admit: A,
    ) -> Reply
    where
        T: GuaranteeTool + 'static,
        A: FnOnce() -> AFut,
        AFut: Future<Output = Result<(), Refusal>>,
    {
        let parsed = match read_arguments::<T::Arguments>(&arguments) {
            Ok(parsed) => parsed,
            Err(refusal) => {
                super::telemetry::refused_before(T::NAME, principal, &refusal);
                return refusal.into();
            }
        };
        self.declare(tool);
        let mut call = Call::of(T::NAME, principal, key, &arguments);
        if tool.effect_in_ledger() {
            call = call.with_effect_in_ledger();
        }
        let id = call.operation_id(T::OPERATION);
        let call = call.with_context(context_of(T::NAME, &id));
        let operation = |lease| Operation::new(id, principal.to_owned(), lease);
        self.run_admitted(call, admit, |lease| tool.run(parsed, operation(lease)))
            .await
    }
}

/// The `unknown` answer of tool `T`'s operation `id`: its lookup, the fields naming the
/// operation (without them, should they name a contract field: the registry refuses such a
/// tool).
fn unknown_of<T: GuaranteeTool>(id: &str) -> GuaranteeResult<T::Fields> {
    let unknown = || GuaranteeResult::unknown().with_next_tool(T::LOOKUP);
    unknown()
        .with_fields(T::Fields::of_operation(id))
        .unwrap_or_else(|_| unknown())
}

/// A tool, as the sequence asks it about its abandoned keys: the operation of a key it
/// began, with the finder's lease under the new fence.
impl<T: GuaranteeTool + 'static> Declared for Arc<T> {
    fn examine<'a>(
        &'a self,
        abandoned: &'a Abandoned,
        id: String,
    ) -> Pin<Box<dyn Future<Output = Result<Examined, String>> + Send + 'a>> {
        let lease = abandoned.lease();
        let operation = Operation::new(id, lease.scope().as_str().to_owned(), lease.clone());
        Box::pin(async move {
            match self.recover(operation).await {
                Ok(Recovered::NotStarted) => Ok(Examined::NotStarted),
                Ok(Recovered::Unknown) => Ok(Examined::Unknown),
                Ok(Recovered::Settled(result)) => Ok(Examined::settled(result)),
                Err(err) => Err(err.to_string()),
            }
        })
    }

    fn unknown(&self, id: &str) -> Option<(StoredAnswer, Answer)> {
        round_trip(&Answer::Result(unknown_of::<T>(id)))
    }
}
