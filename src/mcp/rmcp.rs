//! `rmcp` integration (feature `rmcp`): tools return envelopes, results convert both ways, and
//! bad arguments become envelopes too.
//!
//! An `rmcp` `#[tool]` function may return an [`Envelope`] directly, or a
//! [`CallToolResult`] when it hands over images too; advertise the envelope's schema with
//! `#[tool(output_schema = Envelope::<T>::rmcp_output_schema())]`. Take the arguments with
//! this crate's [`Parameters`] rather than rmcp's: arguments that do not deserialize then
//! answer an `invalid-argument` envelope (code `bad-arguments`) naming the argument, where
//! rmcp's would answer a plain-text error outside the contract.
//!
//! A guarantee tool returns a [`GuaranteeResult`](crate::guarantee::GuaranteeResult), or an
//! [`Answer`] when it may refuse the call, and advertises
//! `GuaranteeResult::<T>::rmcp_output_schema()`, which admits every answer (results and
//! refusals). With the `replay` feature it takes its arguments with [`KeyedParameters`]: the
//! `idempotencyKey` argument is required by its input schema, taken out before the tool reads
//! its own arguments, and a missing or malformed key, like arguments that do not fit, answers
//! the refusal the tool's output schema admits.
//!
//! Conversions go through the wire form both types model, so nothing is lost between them.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::{IntoCallToolResult, ToolCallContext};
use rmcp::model::CallToolResponse;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{CallToolResult, McpError};
use crate::guarantee::{Answer, Refusal};
use crate::{Classified, Envelope, JsonObject, ToolError};

/// A tool's arguments, for `rmcp` tools: a drop-in for rmcp's own `Parameters` (the `#[tool]`
/// macro takes the input schema from it the same way) whose failure is a [`ToolError`], so
/// the tool answers an `invalid-argument` envelope instead of rmcp's plain-text error.
///
/// ```
/// use agent_tool_result::mcp::Parameters;
/// use agent_tool_result::{Envelope, ErrorCategory};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct FindArgs {
///     title: String,
/// }
///
/// // What a `#[tool]` function body does with them:
/// fn find_window(args: Parameters<FindArgs>) -> Envelope<serde_json::Value> {
///     args.run(|FindArgs { title }| Envelope::success(serde_json::json!({ "title": title })))
/// }
///
/// let bad = Parameters::<FindArgs>::from_arguments(serde_json::json!({ "title": 5 }));
/// let envelope = find_window(bad);
/// let error = envelope.error().unwrap();
/// assert_eq!(error.category(), ErrorCategory::InvalidArgument);
/// assert!(error.detail().contains("`title`"), "{}", error.detail());
/// ```
pub struct Parameters<T>(Result<T, ToolError>);

impl<T: DeserializeOwned> Parameters<T> {
    /// Reads the arguments of a call (`null` or absent is an empty object, as rmcp takes it).
    #[must_use]
    pub fn from_arguments(arguments: serde_json::Value) -> Self {
        let arguments = match arguments {
            serde_json::Value::Null => serde_json::Value::Object(JsonObject::new()),
            other => other,
        };
        Parameters(serde_path_to_error::deserialize(&arguments).map_err(|err| {
            let path = err.path().to_string();
            let detail = if err.path().iter().next().is_none() {
                format!(
                    "the arguments do not fit the tool's input schema: {}",
                    err.inner()
                )
            } else {
                format!(
                    "argument `{path}` does not fit the tool's input schema: {}",
                    err.inner()
                )
            };
            ToolError::new(Classified::BAD_ARGUMENTS, detail)
        }))
    }
}

impl<T> Parameters<T> {
    /// The arguments, or the `invalid-argument` error that says why they do not fit.
    ///
    /// # Errors
    ///
    /// The [`ToolError`] (`bad-arguments`, `invalid-argument`) when the arguments did not
    /// deserialize.
    pub fn into_result(self) -> Result<T, ToolError> {
        self.0
    }

    /// Runs the tool on the arguments, or answers the error that says why they do not fit:
    /// `R` is what the tool returns, an [`Envelope`] or anything else built from a
    /// [`ToolError`].
    pub fn run<R: From<ToolError>>(self, tool: impl FnOnce(T) -> R) -> R {
        match self.0 {
            Ok(arguments) => tool(arguments),
            Err(error) => R::from(error),
        }
    }
}

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<T> {
    /// Never fails: a failure to deserialize is carried to the tool as a [`ToolError`].
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        Ok(Parameters::from_arguments(serde_json::Value::Object(
            arguments,
        )))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl<T: Serialize> IntoCallToolResult for Envelope<T> {
    /// The envelope's projection; an envelope that does not serialize (its result is not an
    /// object) is a bug in the tool, reported as an internal error.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        projected(CallToolResult::from_envelope(&self), "the envelope")
    }
}

/// A projection's response, or for a value that does not serialize (a bug in the tool) an
/// internal error saying what did not.
fn projected(
    result: Result<CallToolResult, serde_json::Error>,
    what: &str,
) -> Result<CallToolResponse, ErrorData> {
    result
        .map_err(|err| {
            ErrorData::internal_error(format!("{what} does not serialize: {err}"), None)
        })?
        .into_call_tool_result()
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        rmcp::model::CallToolResult::try_from(self)
            .map(CallToolResponse::from)
            .map_err(|err| {
                ErrorData::internal_error(format!("the result does not convert: {err}"), None)
            })
    }
}

impl TryFrom<CallToolResult> for rmcp::model::CallToolResult {
    type Error = serde_json::Error;

    /// Converts through the wire form.
    fn try_from(result: CallToolResult) -> Result<Self, serde_json::Error> {
        serde_json::from_str(&result.to_json())
    }
}

impl TryFrom<&rmcp::model::CallToolResult> for CallToolResult {
    type Error = McpError;

    /// Converts through the wire form.
    fn try_from(result: &rmcp::model::CallToolResult) -> Result<Self, McpError> {
        let json = serde_json::to_string(result)
            .map_err(|err| McpError::new(super::McpErrorKind::Malformed, err.to_string()))?;
        CallToolResult::from_json(&json)
    }
}

impl<T: DeserializeOwned> Envelope<T> {
    /// Reads the envelope out of an `rmcp` `tools/call` result (the client side).
    ///
    /// # Errors
    ///
    /// [`McpError`] as for [`CallToolResult::envelope`].
    pub fn from_rmcp(result: &rmcp::model::CallToolResult) -> Result<Self, McpError> {
        CallToolResult::try_from(result)?.envelope()
    }
}

impl<T: schemars::JsonSchema> Envelope<T> {
    /// [`Envelope::output_schema`] in the form `rmcp` takes for a tool's `output_schema`.
    #[must_use]
    pub fn rmcp_output_schema() -> Arc<JsonObject> {
        Arc::new(Self::output_schema())
    }
}

impl<T: Serialize> IntoCallToolResult for crate::guarantee::GuaranteeResult<T> {
    /// The guarantee result's projection: `isError` exactly for a deny, never a JSON-RPC
    /// error. Fields that do not serialize are a bug in the tool, reported as an internal
    /// error.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        projected(CallToolResult::from_guarantee(&self), "the result")
    }
}

impl<T: Serialize> IntoCallToolResult for Answer<T> {
    /// The answer's projection: a result as [`CallToolResult::from_guarantee`], a refusal as
    /// [`CallToolResult::from_refusal`]; never a JSON-RPC error.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        projected(CallToolResult::from_answer(&self), "the result")
    }
}

#[cfg(feature = "replay")]
#[cfg_attr(docsrs, doc(cfg(feature = "replay")))]
impl IntoCallToolResult for crate::replay::Reply {
    /// The replay sequence's reply: its answer's projection, read back from the stored form,
    /// so a replay over MCP is the first result too.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        self.into_answer().into_call_tool_result()
    }
}

impl IntoCallToolResult for Refusal {
    /// [`CallToolResult::from_refusal`]: `isError: true` with the refusal's problem.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        CallToolResult::from_refusal(&self).into_call_tool_result()
    }
}

/// A guarantee tool's arguments, for `rmcp` tools (features `rmcp` and `replay`): the
/// idempotency key taken out of the `idempotencyKey` argument, and the rest read as `T`. Its
/// input schema is `T`'s with `idempotencyKey` added and required (`T` may deny unknown
/// fields: it never sees the key). A missing or malformed key, or arguments that do not fit
/// `T`, are a [`Refusal`], which the tool answers as it is.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult, Impact, RefusalKind};
/// use agent_tool_result::mcp::KeyedParameters;
/// use serde_json::json;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct SmsArgs {
///     to: String,
/// }
///
/// // What a `#[tool]` function body does with them:
/// fn send_sms(args: KeyedParameters<SmsArgs>) -> Answer {
///     args.run(|_key, SmsArgs { to: _ }| {
///         GuaranteeResult::committed().with_impact(Impact::new().with_requested(1).with_committed(1))
///             .expect("one of one")
///             .into()
///     })
/// }
///
/// let keyed = json!({ "to": "+15550100", "idempotencyKey": "sms-1" });
/// assert!(matches!(send_sms(KeyedParameters::from_arguments(keyed)), Answer::Result(_)));
/// let unkeyed = send_sms(KeyedParameters::from_arguments(json!({ "to": "+15550100" })));
/// assert_eq!(unkeyed.refusal().map(|r| r.kind()), Some(RefusalKind::KeyMissing));
/// let bad = send_sms(KeyedParameters::from_arguments(json!({ "to": 5, "idempotencyKey": "k" })));
/// assert_eq!(bad.refusal().map(|r| r.kind()), Some(RefusalKind::InvalidArguments));
/// ```
#[cfg(feature = "replay")]
#[cfg_attr(docsrs, doc(cfg(feature = "replay")))]
pub struct KeyedParameters<T>(Result<Keyed<T>, Refusal>);

/// The key, the arguments read as `T`, and the arguments as they came (without the key),
/// which the call's fingerprint is taken over, as REST takes it over the body.
#[cfg(feature = "replay")]
struct Keyed<T> {
    key: crate::replay::IdempotencyKey,
    arguments: T,
    raw: serde_json::Value,
}

#[cfg(feature = "replay")]
impl<T: DeserializeOwned> KeyedParameters<T> {
    /// Reads the arguments of a call (`null` or absent is an empty object): the key first,
    /// then the rest.
    #[must_use]
    pub fn from_arguments(arguments: serde_json::Value) -> Self {
        let mut arguments = match arguments {
            serde_json::Value::Object(arguments) => arguments,
            serde_json::Value::Null => JsonObject::new(),
            other => {
                return KeyedParameters(Err(Refusal::invalid_arguments(format!(
                    "the arguments are a JSON object, not {}",
                    crate::object::json_type(&other)
                ))));
            }
        };
        let key = match crate::replay::IdempotencyKey::take_from_arguments(&mut arguments) {
            Ok(key) => key,
            Err(err) => return KeyedParameters(Err(err.refusal())),
        };
        let raw = serde_json::Value::Object(arguments);
        let parsed = crate::replay::read_arguments::<T>(&raw);
        KeyedParameters(parsed.map(|arguments| Keyed {
            key,
            arguments,
            raw,
        }))
    }
}

#[cfg(feature = "replay")]
impl<T> KeyedParameters<T> {
    /// The key and the arguments, or the refusal that says why the call cannot run.
    ///
    /// # Errors
    ///
    /// The [`Refusal`] (a key missing or malformed, or arguments that do not fit).
    pub fn into_result(self) -> Result<(crate::replay::IdempotencyKey, T), Refusal> {
        self.0.map(|keyed| (keyed.key, keyed.arguments))
    }

    /// `principal`'s call of `tool` for the replay [`Sequence`](crate::replay::Sequence)
    /// (fingerprinted over the arguments as they came, without the key, as a REST body is),
    /// and the arguments; or the refusal that says why the call cannot run.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
    /// use agent_tool_result::mcp::KeyedParameters;
    /// use agent_tool_result::replay::{MemoryLedger, Reply, ReplyKind, Sequence};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct SmsArgs {
    ///     to: String,
    /// }
    ///
    /// // The body of a `#[tool]` function: the sequence does the rest.
    /// async fn send_sms(sequence: &Sequence<MemoryLedger>, args: KeyedParameters<SmsArgs>) -> Reply {
    ///     let (call, args) = match args.into_call("send_sms", "acct_1") {
    ///         Ok(call) => call,
    ///         Err(refusal) => return refusal.into(),
    ///     };
    ///     let id = call.operation_id("msg");
    ///     sequence
    ///         .run(call.with_context(&id), |_| async move {
    ///             let _sent_to = args.to;
    ///             Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed())
    ///         })
    ///         .await
    /// }
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let waker = std::task::Waker::noop();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    ///
    /// let sequence = Sequence::new(MemoryLedger::new());
    /// let args = || KeyedParameters::from_arguments(json!({ "to": "+15550100", "idempotencyKey": "k" }));
    /// assert_eq!(block_on(send_sms(&sequence, args())).kind(), ReplyKind::Ran);
    /// assert_eq!(block_on(send_sms(&sequence, args())).kind(), ReplyKind::Replayed);
    /// let unkeyed = KeyedParameters::from_arguments(json!({ "to": "+15550100" }));
    /// assert_eq!(block_on(send_sms(&sequence, unkeyed)).kind(), ReplyKind::Refused);
    /// ```
    ///
    /// # Errors
    ///
    /// The [`Refusal`] (a key missing or malformed, or arguments that do not fit).
    pub fn into_call(
        self,
        tool: &str,
        principal: &str,
    ) -> Result<(crate::replay::Call, T), Refusal> {
        self.0.map(|keyed| {
            let call = crate::replay::Call::of(tool, principal, keyed.key, &keyed.raw);
            (call, keyed.arguments)
        })
    }

    /// Runs the tool on the key and the arguments, or answers the refusal.
    pub fn run<U>(
        self,
        tool: impl FnOnce(crate::replay::IdempotencyKey, T) -> Answer<U>,
    ) -> Answer<U> {
        match self.0 {
            Ok(keyed) => tool(keyed.key, keyed.arguments),
            Err(refusal) => Answer::Refused(refusal),
        }
    }
}

#[cfg(feature = "replay")]
impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for KeyedParameters<T> {
    /// Never fails: a missing key or arguments that do not fit are carried to the tool as a
    /// [`Refusal`].
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = context.arguments.take().unwrap_or_default();
        Ok(KeyedParameters::from_arguments(serde_json::Value::Object(
            arguments,
        )))
    }
}

#[cfg(feature = "replay")]
impl<T: schemars::JsonSchema + 'static> KeyedParameters<T> {
    /// The tool's input schema, in the form `rmcp` takes for a tool's `input_schema`: `T`'s,
    /// with `idempotencyKey` added and required. `rmcp`'s `#[tool]` reads an input schema by
    /// itself only from a parameter type named `Parameters`, so a keyed `#[tool]` names this
    /// one (`#[tool(input_schema = KeyedParameters::<SmsArgs>::rmcp_input_schema())]`);
    /// [`guarantee_tool`] does it for a [`GuaranteeTool`](crate::replay::GuaranteeTool).
    ///
    /// ```
    /// use agent_tool_result::mcp::KeyedParameters;
    ///
    /// #[derive(schemars::JsonSchema)]
    /// struct SmsArgs {
    ///     to: String,
    /// }
    ///
    /// let schema = KeyedParameters::<SmsArgs>::rmcp_input_schema();
    /// assert_eq!(schema["required"], serde_json::json!(["to", "idempotencyKey"]));
    /// ```
    #[must_use]
    pub fn rmcp_input_schema() -> Arc<JsonObject> {
        rmcp::handler::server::tool::schema_for_type::<Self>()
    }
}

#[cfg(feature = "replay")]
impl<T: schemars::JsonSchema> schemars::JsonSchema for KeyedParameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Keyed{}", T::schema_name()).into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        format!("agent_tool_result::Keyed<{}>", T::schema_id()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = T::json_schema(generator);
        if let Some(object) = schema.as_object_mut() {
            crate::replay::IdempotencyKey::add_to_input_schema(object);
        }
        schema
    }
}

impl<T: schemars::JsonSchema> crate::guarantee::GuaranteeResult<T> {
    /// [`GuaranteeResult::output_schema`](crate::guarantee::GuaranteeResult::output_schema)
    /// in the form `rmcp` takes for a tool's `output_schema`.
    #[must_use]
    pub fn rmcp_output_schema() -> Arc<JsonObject> {
        Arc::new(Self::output_schema())
    }
}

/// The MCP tool a [`GuaranteeTool`](crate::replay::GuaranteeTool) is, as `rmcp` lists it:
/// its name and description, the input schema of its arguments with the `idempotencyKey`
/// required, and the output schema of the result it answers
/// ([`GuaranteeResult<T::Fields>`](crate::guarantee::GuaranteeResult)), both from the tool's
/// own types. [`Registry::tool_router`](crate::registry::Registry::tool_router) lists it so and
/// serves its calls.
///
/// ```
/// use agent_tool_result::guarantee::GuaranteeResult;
/// use agent_tool_result::mcp::guarantee_tool;
/// use agent_tool_result::replay::{Done, GuaranteeTool, Operation};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct SmsArgs {
///     to: String,
/// }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Sent {
///     message_id: String,
/// }
///
/// impl agent_tool_result::replay::OperationFields for Sent {
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
///     async fn run(&self, _: SmsArgs, operation: Operation) -> Done<Sent> {
///         let sent = Sent { message_id: operation.id().to_owned() };
///         Done::Answer(GuaranteeResult::committed().with_fields(sent).expect("no contract name").into())
///     }
/// }
///
/// let tool = guarantee_tool::<SendSms>();
/// assert_eq!(tool.name, "send_sms");
/// assert!(tool.input_schema["required"].as_array().unwrap().contains(&"idempotencyKey".into()));
/// assert!(tool.output_schema.is_some());
/// ```
#[cfg(feature = "replay")]
#[cfg_attr(docsrs, doc(cfg(feature = "replay")))]
#[must_use]
pub fn guarantee_tool<T>() -> rmcp::model::Tool
where
    T: crate::replay::GuaranteeTool,
    T::Arguments: schemars::JsonSchema,
    T::Fields: schemars::JsonSchema,
{
    rmcp::model::Tool::new(
        T::NAME,
        T::DESCRIPTION,
        KeyedParameters::<T::Arguments>::rmcp_input_schema(),
    )
    .with_raw_output_schema(crate::guarantee::GuaranteeResult::<T::Fields>::rmcp_output_schema())
}

impl<T: DeserializeOwned> crate::guarantee::GuaranteeResult<T> {
    /// Reads the guarantee result out of an `rmcp` `tools/call` result (the client side).
    ///
    /// # Errors
    ///
    /// [`McpError`] as for [`CallToolResult::guarantee`].
    pub fn from_rmcp(result: &rmcp::model::CallToolResult) -> Result<Self, McpError> {
        CallToolResult::try_from(result)?.guarantee()
    }
}

impl<T: DeserializeOwned> Answer<T> {
    /// Reads anything a guarantee tool answered out of an `rmcp` `tools/call` result (the
    /// client side): its result or its refusal.
    ///
    /// # Errors
    ///
    /// [`McpError`] as for [`CallToolResult::answer`].
    pub fn from_rmcp(result: &rmcp::model::CallToolResult) -> Result<Self, McpError> {
        CallToolResult::try_from(result)?.answer()
    }
}
