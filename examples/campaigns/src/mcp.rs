//! The MCP side, served over Streamable HTTP at `/mcp`: the same tools on the same service,
//! behind the same bearer gate. A guarantee tool is listed from its `GuaranteeTool` (the
//! crate's `guarantee_tool`: its input schema requires the `idempotencyKey` argument); its
//! answer is the replay sequence's reply, from the transport-neutral answer the ledger keeps,
//! so a replay over MCP is the first result too (whichever transport or process ran it), and a
//! refusal is the problem the tool's `outputSchema` admits. Lookups answer the tool's envelope.

use std::sync::Arc;

use agent_tool_result::mcp::{TraceParent, guarantee_tool};
use agent_tool_result::{Classified, Envelope, ToolError};
use rmcp::ErrorData;
use rmcp::handler::server::tool::{IntoCallToolResult, schema_for_type};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::Deserialize;
use serde_json::Value;
use tracing::Instrument;

use crate::limits::Standing;
use crate::rest::Principal;
use crate::service::Service;
use crate::tools::{
    CampaignArgs, CampaignStatus, LOOKUP_CAMPAIGNS, LOOKUP_SMS, MessageArgs, MessageStatus,
    SendBatch, SendSms,
};

/// The handler every request shares: the server is stateless (no session is kept between
/// requests), so any process can answer any request.
#[derive(Clone)]
pub struct Mcp {
    /// The service.
    pub service: Arc<Service>,
}

/// The tools, with their input and output schemas, built once.
fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        vec![
            guarantee_tool::<SendSms<'static>>(),
            guarantee_tool::<SendBatch<'static>>(),
            Tool::new(
                LOOKUP_CAMPAIGNS,
                "Where a campaign stands, by campaignId: status, counts, updatedAt, next attempt. \
             The authority: re-query it rather than trusting notes.",
                schema_for_type::<CampaignArgs>(),
            )
            .with_raw_output_schema(Envelope::<CampaignStatus>::rmcp_output_schema()),
            Tool::new(
                LOOKUP_SMS,
                "Whether a message was sent, by messageId.",
                schema_for_type::<MessageArgs>(),
            )
            .with_raw_output_schema(Envelope::<MessageStatus>::rmcp_output_schema()),
        ]
    })
}

fn bad_arguments(err: &impl std::fmt::Display) -> Envelope {
    Envelope::failure(ToolError::new(
        Classified::BAD_ARGUMENTS,
        format!("the arguments do not fit the tool's input schema: {err}"),
    ))
}

fn internal(err: &impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(err.to_string(), None)
}

impl rmcp::ServerHandler for Mcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("campaigns", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The bearer gate in front of `/mcp` put the caller's principal on the HTTP request.
        let principal = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .map(|Principal(principal)| principal.clone())
            .ok_or_else(|| internal(&"the request reached no bearer gate"))?;
        let name = &*request.name;
        if Service::is_guarantee_tool(name)
            && let Standing::Refused { refusal, .. } = self.service.admit(name, &principal)
        {
            return refusal.into_call_tool_result();
        }
        // The client's trace, from the request's `_meta`: the crate's span of the keyed call
        // is a child of this one, so it carries the trace id and the caller's span id.
        let parent = request
            .meta
            .as_deref()
            .or(Some(&*context.meta))
            .and_then(|meta| TraceParent::from_meta(meta));
        let span = tracing::info_span!(
            "mcp_call",
            tool = name,
            trace_id = parent.as_ref().map(TraceParent::trace_id),
            parent_id = parent.as_ref().map(TraceParent::parent_id),
        );
        if let Some(reply) = self
            .service
            .call_keyed(name, &principal, request.arguments.clone())
            .instrument(span)
            .await
        {
            return reply.into_call_tool_result();
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        match name {
            LOOKUP_CAMPAIGNS => match CampaignArgs::deserialize(&arguments) {
                Ok(args) => self
                    .service
                    .lookup_campaign(&args.campaign_id, &principal)
                    .await
                    .map_err(|err| internal(&err))?
                    .into_call_tool_result(),
                Err(err) => bad_arguments(&err).into_call_tool_result(),
            },
            LOOKUP_SMS => match MessageArgs::deserialize(&arguments) {
                Ok(args) => self
                    .service
                    .lookup_message(&args.message_id, &principal)
                    .await
                    .map_err(|err| internal(&err))?
                    .into_call_tool_result(),
                Err(err) => bad_arguments(&err).into_call_tool_result(),
            },
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }
}
