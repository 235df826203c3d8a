//! [`GuaranteeTool`]: a guarantee tool written once (its name, arguments, fields and effect),
//! served by the replay [`Sequence`] over any transport.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::call::Call;
use super::key::IdempotencyKey;
use super::lease::Lease;
use super::ledger::Ledger;
use super::probe::{Done, EffectProbe};
use super::reply::Reply;
use super::sequence::Sequence;
use crate::guarantee::Refusal;

/// A guarantee tool, written once: its name, what it does, the prefix of the ids of the
/// operations it creates, its typed arguments and fields, and its effect. From it,
/// [`Sequence::serve`] runs a call under the replay sequence (the arguments read, the key begun
/// or replayed, the operation's id and context stored, the answer recorded), and the
/// transports describe it: `mcp::guarantee_tool` (its MCP tool, with the input schema of its
/// arguments plus the key and the output schema of its fields) and, over REST,
/// `http::KeyedJson` (the key and the JSON body).
///
/// The answer's type is the fields' type for every decision
/// ([`GuaranteeResult<Self::Fields>`](crate::guarantee::GuaranteeResult)), so the schema a
/// transport advertises is the type the tool returns: a tool that answers another type does
/// not compile.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode};
/// use agent_tool_result::replay::{Done, GuaranteeTool, IdempotencyKey, MemoryLedger, Operation, Sequence};
/// use serde::{Deserialize, Serialize};
/// use serde_json::json;
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
/// struct SendSms;
///
/// impl GuaranteeTool for SendSms {
///     const NAME: &'static str = "send_sms";
///     const DESCRIPTION: &'static str = "Sends one SMS.";
///     const OPERATION: &'static str = "msg";
///     type Arguments = SmsArgs;
///     type Fields = Sent;
///
///     async fn run(&self, args: SmsArgs, operation: Operation) -> Done<Sent> {
///         if args.to == "+15550100" {
///             return Done::Answer(GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into());
///         }
///         // ... send, under operation.lease()'s fence ...
///         let sent = Sent { message_id: operation.id().to_owned() };
///         Done::Answer(
///             GuaranteeResult::committed()
///                 .with_impact(Impact::new().with_requested(1).with_committed(1))
///                 .and_then(|result| result.with_fields(sent))
///                 .expect("one of one")
///                 .into(),
///         )
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let sequence = Sequence::new(MemoryLedger::new());
/// let key = IdempotencyKey::new("sms-1").unwrap();
/// let reply = sequence.serve(&SendSms, "acct_1", key, json!({ "to": "+15550199" })).await;
/// let id = reply.answer().result().and_then(|r| r.field("messageId")).cloned();
/// assert!(id.unwrap().as_str().unwrap().starts_with("msg_"));
///
/// // Arguments that do not fit are refused, naming the argument, and begin no key.
/// let key = IdempotencyKey::new("sms-2").unwrap();
/// let reply = sequence.serve(&SendSms, "acct_1", key, json!({ "to": 5 })).await;
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
    /// What the tool's effect is like, for clients deciding whether to ask first (MCP's
    /// annotations): whether it destroys, whether it reaches beyond its service. A guarantee
    /// tool is listed idempotent (per key) and not read-only whatever this says. MCP's
    /// defaults unless the tool says otherwise.
    const HINTS: crate::Hints = crate::Hints::new();
    /// The tool's arguments, the idempotency key apart.
    type Arguments: DeserializeOwned + Send + 'static;
    /// The tool's own fields, on every result it answers (none on a deny).
    type Fields: Serialize + Send + 'static;

    /// Runs one call, once for its key: the arguments, and the operation it creates (its id,
    /// the caller, and the lease on the key, whose fence every write that creates the
    /// operation checks). Answer [`Done::Recorded`] when the tool recorded its answer with
    /// its key in the transaction of its effect.
    fn run(
        &self,
        arguments: Self::Arguments,
        operation: Operation,
    ) -> impl Future<Output = Done<Self::Fields>> + Send;

    /// Whether the tool's every effect is a write in the typed transaction on the ledger's own
    /// database, so that its key is begun in that transaction
    /// ([`Call::with_effect_in_ledger`]): one round trip and one commit fewer. `false` by
    /// default; a tool may answer by where it runs (its store, say).
    fn effect_in_ledger(&self) -> bool {
        false
    }
}

/// The operation a call of a [`GuaranteeTool`] creates: its id (stable for the key, stored as
/// the key's context, so that a call found abandoned is looked up by it), the principal that
/// called, and the lease the sequence holds on the key.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, Impact};
/// use agent_tool_result::replay::{Done, GuaranteeTool, Operation};
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
/// struct SendSms;
///
/// impl GuaranteeTool for SendSms {
///     const NAME: &'static str = "send_sms";
///     const DESCRIPTION: &'static str = "Sends one SMS.";
///     const OPERATION: &'static str = "msg";
///     type Arguments = Args;
///     type Fields = Sent;
///
///     async fn run(&self, args: Args, operation: Operation) -> Done<Sent> {
///         // The id is the same for every retry of the key: the provider's idempotency key,
///         // and the record the send creates.
///         let effect = operation.lease().effect_key(&args.to);
///         let _ = (effect, operation.principal());
///         let sent = Sent { message_id: operation.id().to_owned() };
///         let result = GuaranteeResult::committed()
///             .with_impact(Impact::new().with_requested(1).with_committed(1))
///             .and_then(|result| result.with_fields(sent));
///         Done::Answer(result.expect("one of one").into())
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
    #[must_use]
    pub fn lease(&self) -> &Lease {
        &self.lease
    }
}

/// `arguments` read as `T`, or the `invalid-arguments` refusal that names the argument that
/// does not fit (`` `to`: invalid type: integer `5`, expected a string ``).
///
/// # Errors
///
/// The refusal, when they do not fit.
pub(crate) fn read_arguments<T: DeserializeOwned>(arguments: &Value) -> Result<T, Refusal> {
    serde_path_to_error::deserialize(arguments).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        Refusal::invalid_arguments(if path == "." {
            format!("the arguments do not fit the tool's input schema: {inner}")
        } else {
            format!("`{path}`: {inner}")
        })
    })
}

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    /// Serves one call of `tool` by `principal` under `key`, with `arguments` as they came
    /// (a REST body): reads them (arguments that do not fit are refused, naming the argument,
    /// before the key is begun), then runs the call under the sequence, as
    /// [`Sequence::run_recording`] does, with the operation's id as the key's context.
    ///
    /// # Panics
    ///
    /// As [`Sequence::run`].
    pub async fn serve<T: GuaranteeTool>(
        &self,
        tool: &T,
        principal: &str,
        key: IdempotencyKey,
        arguments: Value,
    ) -> Reply {
        let parsed = match read_arguments::<T::Arguments>(&arguments) {
            Ok(parsed) => parsed,
            Err(refusal) => {
                super::telemetry::refused_before(T::NAME, principal, &refusal);
                return refusal.into();
            }
        };
        let mut call = Call::of(T::NAME, principal, key, &arguments);
        if tool.effect_in_ledger() {
            call = call.with_effect_in_ledger();
        }
        let id = call.operation_id(T::OPERATION);
        let operation = |lease| Operation {
            id: id.clone(),
            principal: principal.to_owned(),
            lease,
        };
        self.run_recording(call.with_context(&id), |lease| {
            tool.run(parsed, operation(lease))
        })
        .await
    }
}
