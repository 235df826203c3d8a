//! The registry over MCP: an `rmcp` `ToolRouter` of its tools (feature `rmcp`).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::{IntoCallToolResult, ToolCallContext};
use rmcp::model::{CallToolRequestParams, CallToolResponse, ToolAnnotations};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::{Principal, Registry, Serve, Shared};
use crate::replay::{EffectProbe, IdempotencyKey, Ledger};

/// `hints` as `rmcp` writes a tool's annotations.
fn annotations(hints: crate::Hints) -> ToolAnnotations {
    let annotations = ToolAnnotations::new()
        .read_only(hints.is_read_only())
        .open_world(hints.is_open_world());
    if hints.is_read_only() {
        annotations
    } else {
        annotations
            .destructive(hints.is_destructive())
            .idempotent(hints.is_idempotent())
    }
}

/// The principal the request carries: put on the MCP request by the server, or (over
/// Streamable HTTP) on the HTTP request its authentication checked.
fn carried(context: &RequestContext<RoleServer>) -> Option<&Principal> {
    let own = context.extensions.get::<Principal>();
    #[cfg(feature = "http")]
    let own = own.or_else(|| {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
    });
    own
}

impl<L: Ledger + 'static, P: EffectProbe + 'static> Registry<L, P> {
    /// The registry's tools as an `rmcp` router, for any server type `S`: their listing
    /// (input and output schemas, annotations from their [`Hints`](crate::Hints)) and their
    /// calls. A guarantee tool's key is its `idempotencyKey` argument; every keyed call enters
    /// the sequence by [`Sequence::serve`](crate::replay::Sequence::serve). Add it to the
    /// router of the server's own `#[tool]` methods with `+`:
    ///
    /// ```
    /// # use agent_tool_result::registry::Registry;
    /// # use agent_tool_result::replay::{MemoryLedger, Sequence};
    /// use rmcp::handler::server::router::tool::ToolRouter;
    ///
    /// struct Server;
    ///
    /// let tools = Registry::new(Sequence::new(MemoryLedger::new()));
    /// let router: ToolRouter<Server> = ToolRouter::new() + tools.tool_router();
    /// assert!(router.list_all().is_empty());
    /// ```
    #[must_use]
    pub fn tool_router<S: Send + Sync + 'static>(&self) -> ToolRouter<S> {
        let shared = Arc::new(self.shared.clone());
        let mut router = ToolRouter::new();
        for entry in &self.entries {
            let tool = (entry.mcp_tool)().with_annotations(annotations(entry.hints));
            // Per call, only what the call needs is cloned: the name and the handle to serve.
            let (name, serve, shared) = (entry.name, entry.serve.clone(), Arc::clone(&shared));
            router.add_route(ToolRoute::new_dyn(
                tool,
                move |context: ToolCallContext<'_, S>| {
                    let ToolCallContext {
                        request_context,
                        arguments,
                        ..
                    } = context;
                    Box::pin(call(
                        Arc::clone(&shared),
                        name,
                        serve.clone(),
                        request_context,
                        arguments.unwrap_or_default(),
                    ))
                },
            ));
        }
        router
    }
}

/// Calls the tool `request` names on `router` (a [`Registry::tool_router`], the server's own
/// `#[tool]`s added or not): the `call_tool` of a server's `ServerHandler`. A tool the router
/// does not hold is refused by name, as REST's 404 names it
/// ([`JsonRpcError::unknown_tool`](crate::mcp::JsonRpcError::unknown_tool)), where `rmcp`'s
/// router says only "tool not found".
///
/// ```
/// use agent_tool_result::registry::Registry;
/// use agent_tool_result::registry::mcp::call_tool;
/// use agent_tool_result::replay::{MemoryLedger, Sequence};
/// use rmcp::handler::server::router::tool::ToolRouter;
/// use rmcp::model::{CallToolRequestParams, CallToolResponse};
/// use rmcp::service::{RequestContext, RoleServer};
/// use rmcp::{ErrorData, ServerHandler};
///
/// struct Server {
///     tool_router: ToolRouter<Server>,
/// }
///
/// impl ServerHandler for Server {
///     async fn call_tool(
///         &self,
///         request: CallToolRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<CallToolResponse, ErrorData> {
///         call_tool(&self.tool_router, self, request, context).await
///     }
/// }
///
/// let tools = Registry::new(Sequence::new(MemoryLedger::new()));
/// let server = Server { tool_router: tools.tool_router() };
/// # let _ = server;
/// ```
///
/// # Errors
///
/// The `-32602` error of an unknown tool, or the error the tool's route gives.
pub async fn call_tool<S: Send + Sync + 'static>(
    router: &ToolRouter<S>,
    server: &S,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    if !router.has_route(&request.name) {
        let fault = crate::mcp::JsonRpcError::unknown_tool(request.name.as_ref());
        return Err(ErrorData::invalid_params(fault.message().to_owned(), None));
    }
    router
        .call(ToolCallContext::new(server, request, context))
        .await
}

/// One call of tool `name`, served by `serve`.
async fn call(
    shared: Arc<Shared>,
    name: &'static str,
    serve: Serve,
    context: RequestContext<RoleServer>,
    mut arguments: crate::JsonObject,
) -> Result<CallToolResponse, ErrorData> {
    let Some(principal) = shared.principal(carried(&context)) else {
        return Err(ErrorData::invalid_request(
            "the call is not authenticated: no principal reached the tools",
            None,
        ));
    };
    match &serve {
        Serve::Keyed(serve) => {
            let key = IdempotencyKey::take_from_arguments(&mut arguments);
            let run = super::keyed::serve_keyed(
                &shared,
                name,
                serve.as_ref(),
                principal,
                key,
                Value::Object(arguments),
            );
            // The client's trace, from the request's `_meta`: the span of the keyed call is a
            // child of this one, so it carries the trace id and the caller's span id.
            #[cfg(feature = "tracing")]
            let run = {
                let parent = crate::mcp::TraceParent::from_meta(&context.meta);
                tracing::Instrument::instrument(
                    run,
                    tracing::info_span!(
                        "mcp_call",
                        tool = name,
                        trace_id = parent.as_ref().map(crate::mcp::TraceParent::trace_id),
                        parent_id = parent.as_ref().map(crate::mcp::TraceParent::parent_id),
                    ),
                )
            };
            let (reply, _) = run.await;
            reply.into_call_tool_result()
        }
        Serve::Envelope(serve) => match serve(principal, Value::Object(arguments)).await {
            Ok(envelope) => envelope.into_call_tool_result(),
            Err(err) => Err(ErrorData::internal_error(err, None)),
        },
    }
}
