//! [`Registry`]: a server's tools, declared once, from which every transport is served
//! (features `replay` and `schemars`).
//!
//! A server lists its tools in one place: its guarantee tools (each a
//! [`GuaranteeTool`], run under the replay [`Sequence`] the
//! registry holds), its lookups and its other envelope tools (each an [`EnvelopeTool`]).
//! From that one list come:
//!
//! - MCP `tools/list` and `tools/call`, as an `rmcp` [`ToolRouter`](rmcp::handler::server::router::tool::ToolRouter)
//!   (feature `rmcp`: [`Registry::tool_router`]), which adds to the router of the server's
//!   own `#[tool]` methods with `+`;
//! - the REST routes, as an `axum` router (feature `axum`: `Registry::rest_routes`): a
//!   guarantee tool at `POST {tools path}/{name}` with its `Idempotency-Key`, a lookup at
//!   `GET` its path, an envelope tool at `POST` its path;
//! - the OpenAPI operations (feature `openapi`: `Registry::openapi`);
//! - each tool's [`Hints`] as MCP annotations, in `tools/list` and on its OpenAPI operation
//!   ([`ANNOTATIONS_EXTENSION`]): a guarantee tool idempotent (per key), a lookup read-only.
//!
//! Every keyed call, whichever transport carried it, enters the sequence by one call,
//! [`Sequence::serve`]. Adding a tool is one module with its logic and one line in the list.
//!
//! What is checked once, at registration, rather than at each call (a registration that
//! breaks one panics, naming the tool, as `axum` does for two routes at one path): two tools
//! of one name; a guarantee tool whose fields' type names a contract field (`settlement`, ...)
//! or a problem member (`type`, `status`, ...), so that its results are built without
//! fallibility ([`GuaranteeResult::committed_with`](crate::guarantee::GuaranteeResult::committed_with));
//! a lookup, served by `GET`, whose tool does not declare itself read-only.
//!
//! ```
//! use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Tally};
//! use agent_tool_result::registry::{EnvelopeTool, Principal, Registry};
//! use agent_tool_result::replay::{
//!     Done, GuaranteeTool, MemoryLedger, Operation, OperationFields, Sequence,
//! };
//! use agent_tool_result::{Envelope, Hints};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct SmsArgs {
//!     to: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! struct Sent {
//!     message_id: String,
//! }
//!
//! // The field naming the operation, named once: the answer and an abandoned key's
//! // `unknown` both carry it.
//! impl OperationFields for Sent {
//!     fn of_operation(id: &str) -> Self {
//!         Sent { message_id: id.to_owned() }
//!     }
//! }
//!
//! struct SendSms;
//!
//! impl GuaranteeTool for SendSms {
//!     const NAME: &'static str = "send_sms";
//!     const DESCRIPTION: &'static str = "Sends one SMS.";
//!     const OPERATION: &'static str = "msg";
//!     const LOOKUP: &'static str = LookupSms::NAME;
//!     const HINTS: Hints = Hints::new().destructive(false);
//!     type Arguments = SmsArgs;
//!     type Fields = Sent;
//!
//!     async fn run(&self, args: SmsArgs, operation: Operation) -> Done<Sent> {
//!         if args.to == "+15550100" {
//!             return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into();
//!         }
//!         GuaranteeResult::committed_with(Tally::sent(1), Sent::of_operation(operation.id())).into()
//!     }
//! }
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! struct MessageArgs {
//!     message_id: String,
//! }
//!
//! struct LookupSms;
//!
//! impl EnvelopeTool for LookupSms {
//!     const NAME: &'static str = "lookup_sms";
//!     const DESCRIPTION: &'static str = "Whether a message was sent, by messageId.";
//!     const HINTS: Hints = Hints::READ_ONLY;
//!     type Arguments = MessageArgs;
//!     type Output = String;
//!     type Error = std::convert::Infallible;
//!
//!     async fn run(&self, args: MessageArgs, _: &Principal) -> Result<Envelope<String>, Self::Error> {
//!         Ok(Envelope::success(format!("{} was sent", args.message_id)))
//!     }
//! }
//!
//! let tools = Registry::new(Sequence::new(MemoryLedger::new()))
//!     .guarantee(SendSms)
//!     .lookup(LookupSms, "/v1/messages/{messageId}");
//! assert_eq!(tools.names().collect::<Vec<_>>(), ["send_sms", "lookup_sms"]);
//! ```

#![cfg_attr(
    not(any(feature = "rmcp", feature = "axum")),
    allow(
        dead_code,
        reason = "a registry without a transport feature only documents its tools"
    )
)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::guarantee::Refusal;
use crate::guarantee::fields::{CONTRACT_FIELDS, is_problem_member};
use crate::replay::arguments_misfit;
use crate::replay::{
    AssumeStarted, EffectProbe, GuaranteeTool, IdempotencyKey, Ledger, Reply, Sequence,
};
use crate::{Envelope, Hints};

mod keyed;
#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub mod mcp;
#[cfg(feature = "openapi")]
mod openapi;
#[cfg(feature = "axum")]
mod rest;

/// The vendor extension of an OpenAPI operation that carries its tool's hints, as MCP's
/// annotations write them (`readOnlyHint`, ...): OpenAPI has no member of its own for them.
#[cfg(feature = "openapi")]
#[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
pub const ANNOTATIONS_EXTENSION: &str = "x-mcp-annotations";

/// The principal a call runs as (the account whose keys, limits and records it uses): put on
/// the request by the server's authentication (an `axum` middleware inserts it into the
/// request's extensions, where the REST routes and, over Streamable HTTP, the MCP router read
/// it), or the registry's default ([`Registry::with_default_principal`]: a stdio server's one
/// caller).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Principal(String);

impl Principal {
    /// The principal named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Principal(name.into())
    }

    /// Its name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether a guarantee call may go on, decided before the sequence begins anything (an
/// account's rate limit, say): admitted, or the refusal to answer, with the account's
/// `RateLimit` fields for REST to write either way.
#[derive(Clone, Debug, Default)]
pub struct Admission {
    refusal: Option<Refusal>,
    #[cfg(feature = "http")]
    rate_limit: Option<(crate::http::ratelimit::Quota, u64, std::time::Duration)>,
}

impl Admission {
    /// Admitted.
    #[must_use]
    pub fn admitted() -> Self {
        Admission::default()
    }

    /// Refused with `refusal` (`rate-limited`, say): nothing runs and the key is not used.
    #[must_use]
    pub fn refused(refusal: Refusal) -> Self {
        Admission {
            refusal: Some(refusal),
            #[cfg(feature = "http")]
            rate_limit: None,
        }
    }

    /// The account's quota, with `remaining` calls left and whole again after `reset`: REST
    /// writes them as `RateLimit-Policy` and `RateLimit`.
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    #[must_use]
    pub fn with_rate_limit(
        mut self,
        quota: &crate::http::ratelimit::Quota,
        remaining: u64,
        reset: std::time::Duration,
    ) -> Self {
        self.rate_limit = Some((quota.clone(), remaining, reset));
        self
    }

    /// The refusal, when the call is refused.
    #[must_use]
    pub fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_ref()
    }
}

/// A tool that answers its own envelope (the first contract): a lookup, or any tool whose
/// result is not a guarantee. Its name, arguments and output are written once, here; the
/// registry serves it over MCP (its output schema the envelope of its output) and REST (200
/// with the envelope, whatever `ok`).
pub trait EnvelopeTool: Send + Sync + 'static {
    /// The tool's name, as MCP lists it.
    const NAME: &'static str;
    /// What the tool does, for an agent choosing among tools.
    const DESCRIPTION: &'static str;
    /// What its effect is like ([`Hints::READ_ONLY`] for a lookup). MCP's defaults unless
    /// the tool says otherwise.
    const HINTS: Hints = Hints::new();
    /// Its arguments.
    type Arguments: DeserializeOwned + JsonSchema + Send + 'static;
    /// What a success carries.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// A failure of the service itself (its store down): answered as a fault (503 over REST,
    /// an internal error over MCP), never as the tool's result.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Runs one call for `principal`.
    fn run(
        &self,
        arguments: Self::Arguments,
        principal: &Principal,
    ) -> impl Future<Output = Result<Envelope<Self::Output>, Self::Error>> + Send;
}

/// A future a route awaits.
type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Whether a guarantee call that would run may go on: asked once, by the sequence, after its
/// key is begun (a replay never asks).
type AdmitOnce = Box<dyn FnOnce() -> Boxed<Result<(), Refusal>> + Send>;

/// A guarantee tool's call, its arguments as they came, and its admission: the sequence's
/// reply.
type ServeKeyed = dyn Fn(Principal, IdempotencyKey, Value, AdmitOnce) -> Boxed<Reply> + Send + Sync;

/// An envelope tool's call: its envelope, or why the service could not answer.
type ServeEnvelope =
    dyn Fn(Principal, Value) -> Boxed<Result<Envelope<Value>, String>> + Send + Sync;

/// How an entry is called.
#[derive(Clone)]
enum Serve {
    /// Under the replay sequence, with a key.
    Keyed(Arc<ServeKeyed>),
    /// Directly, answering an envelope.
    Envelope(Arc<ServeEnvelope>),
}

/// Where REST serves an envelope tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    /// `GET`, its arguments the path's `{parameters}`.
    Get,
    /// `POST`, its arguments the JSON body.
    Post,
}

/// One registered tool.
#[derive(Clone)]
struct Entry {
    name: &'static str,
    /// The hints as served (a guarantee tool's made idempotent and not read-only).
    hints: Hints,
    serve: Serve,
    /// An envelope tool's REST method and path (a guarantee tool's path is the registry's).
    #[cfg_attr(
        not(any(feature = "axum", feature = "openapi")),
        allow(dead_code, reason = "read by REST and OpenAPI")
    )]
    rest: Option<(Method, String)>,
    /// The tool as MCP lists it, without its annotations.
    #[cfg(feature = "rmcp")]
    mcp_tool: fn() -> rmcp::model::Tool,
    /// The tool's operation added to an OpenAPI document at a path.
    #[cfg(feature = "openapi")]
    operation: fn(crate::http::openapi::OpenApi, &str) -> crate::http::openapi::OpenApi,
}

/// Decides whether a guarantee call goes on.
type Admit = dyn Fn(&str, &Principal) -> std::pin::Pin<Box<dyn Future<Output = Admission> + Send>>
    + Send
    + Sync;

/// What every route shares: the admission and the default principal.
#[derive(Clone)]
struct Shared {
    admission: Option<Arc<Admit>>,
    default_principal: Option<Principal>,
}

impl Shared {
    /// The call's principal: the one its request carries, or the default.
    fn principal(&self, carried: Option<&Principal>) -> Option<Principal> {
        carried.or(self.default_principal.as_ref()).cloned()
    }

    async fn admit(&self, tool: &str, principal: &Principal) -> Admission {
        match &self.admission {
            Some(admit) => admit(tool, principal).await,
            None => Admission::admitted(),
        }
    }
}

/// A server's tools, declared once: see [the module](self).
pub struct Registry<L, P = AssumeStarted> {
    sequence: Arc<Sequence<L, P>>,
    entries: Vec<Entry>,
    shared: Shared,
    tools_path: String,
}

impl<L, P> std::fmt::Debug for Registry<L, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("tools_path", &self.tools_path)
            .finish_non_exhaustive()
    }
}

/// The names the fields' type `F` declares (its JSON Schema's `properties`), checked against
/// the contract's fields and a problem's members.
///
/// # Panics
///
/// When one collides, naming the tool and the field.
fn check_fields_type<F: JsonSchema>(tool: &str) {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<F>();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    if let Some(name) = properties
        .keys()
        .find(|name| CONTRACT_FIELDS.contains(&name.as_str()) || is_problem_member(name))
    {
        panic!(
            "guarantee tool `{tool}`: its fields' type names `{name}`, which the contract (or a \
             policy deny's problem) writes itself; rename the field"
        );
    }
}

impl<L: Ledger + 'static, P: EffectProbe + 'static> Registry<L, P> {
    /// A registry whose guarantee tools run under `sequence` (shared: an `Arc` of it may be
    /// kept to [`settle`](Sequence::settle) in the background), with no tools yet, guarantee
    /// tools at `/tools/{name}` over REST, and no principal but the one a request carries.
    pub fn new(sequence: impl Into<Arc<Sequence<L, P>>>) -> Self {
        Registry {
            sequence: sequence.into(),
            entries: Vec::new(),
            shared: Shared {
                admission: None,
                default_principal: None,
            },
            tools_path: "/tools".to_owned(),
        }
    }

    /// Serves the guarantee tools at `POST {path}/{name}` over REST (`/v1/tools`, say).
    #[must_use]
    pub fn with_tools_path(mut self, path: &str) -> Self {
        path.trim_end_matches('/').clone_into(&mut self.tools_path);
        self
    }

    /// Runs a call that carries no principal as `principal` (a stdio server's one caller);
    /// without it, such a call is refused as unauthenticated.
    #[must_use]
    pub fn with_default_principal(mut self, principal: impl Into<String>) -> Self {
        self.shared.default_principal = Some(Principal::new(principal));
        self
    }

    /// Asks `admit` about every guarantee call, before the sequence begins anything: a
    /// refusal is answered at once (over REST with the `RateLimit` fields the admission
    /// carries, written on admitted calls too). The answer is a future, so a limit kept where
    /// every process of a service counts (its database) can be asked; one kept in memory
    /// answers with [`std::future::ready`].
    #[must_use]
    pub fn with_admission<F>(
        mut self,
        admit: impl Fn(&str, &Principal) -> F + Send + Sync + 'static,
    ) -> Self
    where
        F: Future<Output = Admission> + Send + 'static,
    {
        self.shared.admission = Some(Arc::new(move |tool, principal| {
            Box::pin(admit(tool, principal))
        }));
        self
    }

    /// Adds guarantee tool `tool`: served under the sequence, listed idempotent (per key).
    ///
    /// # Panics
    ///
    /// When a tool of its name is registered already, or its fields' type names a contract
    /// field or a problem member.
    #[must_use]
    pub fn guarantee<T>(self, tool: T) -> Self
    where
        T: GuaranteeTool + 'static,
        T::Arguments: JsonSchema,
        T::Fields: JsonSchema,
    {
        check_fields_type::<T::Fields>(T::NAME);
        let tool = Arc::new(tool);
        // Its abandoned keys are its own to recover, in the background too.
        self.sequence.declare(&tool);
        let sequence = Arc::clone(&self.sequence);
        let serve: Arc<ServeKeyed> = Arc::new(move |principal, key, arguments, admit| {
            let (tool, sequence) = (Arc::clone(&tool), Arc::clone(&sequence));
            Box::pin(async move {
                sequence
                    .serve_admitted(&tool, principal.as_str(), key, arguments, admit)
                    .await
            })
        });
        let hints = T::HINTS;
        self.add(Entry {
            name: T::NAME,
            hints: Hints::new()
                .destructive(hints.is_destructive())
                .open_world(hints.is_open_world())
                .idempotent(true),
            serve: Serve::Keyed(serve),
            rest: None,
            #[cfg(feature = "rmcp")]
            mcp_tool: crate::mcp::guarantee_tool::<T>,
            #[cfg(feature = "openapi")]
            operation: |document, path| document.tool::<T>(path),
        })
    }

    /// Adds lookup `tool`, served over REST at `GET path`, whose `{parameters}` are its
    /// arguments (`/v1/messages/{messageId}` for `{ "messageId": ... }`).
    ///
    /// # Panics
    ///
    /// When a tool of its name is registered already, or the tool does not declare itself
    /// read-only ([`Hints::READ_ONLY`]): a `GET` changes nothing.
    #[must_use]
    pub fn lookup<T: EnvelopeTool>(self, tool: T, path: &str) -> Self {
        assert!(
            T::HINTS.is_read_only(),
            "lookup `{}` is served by GET, which changes nothing: declare it `Hints::READ_ONLY`, \
             or register it with `envelope`",
            T::NAME
        );
        self.envelope_at(tool, Method::Get, path)
    }

    /// Adds guarantee tool `tool` with the lookup of its operations, `lookup`, served over
    /// REST at `GET path`: a tool that brings a new kind of operation brings the one lookup
    /// its answers name, in one line.
    ///
    /// # Panics
    ///
    /// As [`Registry::guarantee`] and [`Registry::lookup`] do, and when `lookup` is not the
    /// tool its answers name (`U::NAME` differs from `T::LOOKUP`).
    #[must_use]
    pub fn guarantee_with_lookup<T, U>(self, tool: T, lookup: U, path: &str) -> Self
    where
        T: GuaranteeTool + 'static,
        T::Arguments: JsonSchema,
        T::Fields: JsonSchema,
        U: EnvelopeTool,
    {
        assert_eq!(
            U::NAME,
            T::LOOKUP,
            "guarantee tool `{}` names `{}` as its lookup, not `{}`",
            T::NAME,
            T::LOOKUP,
            U::NAME
        );
        self.guarantee(tool).lookup(lookup, path)
    }

    /// Adds envelope tool `tool`, served over REST at `POST path` with its arguments as the
    /// JSON body.
    ///
    /// # Panics
    ///
    /// When a tool of its name is registered already.
    #[must_use]
    pub fn envelope<T: EnvelopeTool>(self, tool: T, path: &str) -> Self {
        self.envelope_at(tool, Method::Post, path)
    }

    fn envelope_at<T: EnvelopeTool>(self, tool: T, method: Method, path: &str) -> Self {
        let tool = Arc::new(tool);
        let serve: Arc<ServeEnvelope> =
            Arc::new(move |principal, arguments| {
                let tool = Arc::clone(&tool);
                Box::pin(async move {
                    let arguments = match serde_path_to_error::deserialize(arguments) {
                        Ok(arguments) => arguments,
                        Err(err) => {
                            return Ok(Envelope::failure(crate::ToolError::new(
                                crate::Classified::BAD_ARGUMENTS,
                                arguments_misfit(err),
                            )));
                        }
                    };
                    match tool.run(arguments, &principal).await {
                        Ok(envelope) => Ok(envelope
                            .map(|output| serde_json::to_value(output).unwrap_or(Value::Null))),
                        Err(err) => Err(err.to_string()),
                    }
                })
            });
        self.add(Entry {
            name: T::NAME,
            hints: T::HINTS,
            serve: Serve::Envelope(serve),
            rest: Some((method, path.to_owned())),
            #[cfg(feature = "rmcp")]
            mcp_tool: envelope_mcp_tool::<T>,
            #[cfg(feature = "openapi")]
            operation: if method == Method::Get {
                |document, path| {
                    document.envelope_lookup::<T::Output>(path, T::NAME, T::DESCRIPTION)
                }
            } else {
                |document, path| {
                    document.envelope_tool::<T::Arguments, T::Output>(path, T::NAME, T::DESCRIPTION)
                }
            },
        })
    }

    fn add(mut self, entry: Entry) -> Self {
        assert!(
            self.entries.iter().all(|known| known.name != entry.name),
            "two tools are named `{}`: a tool's name is its address on every transport",
            entry.name
        );
        self.entries.push(entry);
        self
    }
}

impl<L, P> Registry<L, P> {
    /// The tools' names, in the order they were registered.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|entry| entry.name)
    }

    /// The hints `tool` is listed with, if it is registered.
    #[must_use]
    pub fn hints(&self, tool: &str) -> Option<Hints> {
        self.entries
            .iter()
            .find(|entry| entry.name == tool)
            .map(|entry| entry.hints)
    }

    /// The sequence the guarantee tools run under.
    #[must_use]
    pub fn sequence(&self) -> &Arc<Sequence<L, P>> {
        &self.sequence
    }

    /// Where REST serves guarantee tool `name`.
    #[cfg(any(feature = "axum", feature = "openapi"))]
    fn keyed_path(&self, name: &str) -> String {
        format!("{}/{name}", self.tools_path)
    }
}

/// The MCP tool envelope tool `T` is: its arguments' input schema, the output schema of its
/// envelope.
#[cfg(feature = "rmcp")]
fn envelope_mcp_tool<T: EnvelopeTool>() -> rmcp::model::Tool {
    rmcp::model::Tool::new(
        T::NAME,
        T::DESCRIPTION,
        rmcp::handler::server::tool::schema_for_type::<T::Arguments>(),
    )
    .with_raw_output_schema(Envelope::<T::Output>::rmcp_output_schema())
}
