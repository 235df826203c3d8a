//! The MCP side, served over Streamable HTTP at `/mcp`: the tools of [`crate::tools`], through
//! the registry's `rmcp` router, behind the same bearer gate as REST (the gate puts the
//! caller's principal on the HTTP request, where the router reads it). A guarantee tool's
//! answer is the replay sequence's reply, from the transport-neutral answer the ledger keeps,
//! so a replay over MCP is the first result too (whichever transport or process ran it).

use agent_tool_result::registry::mcp::call_tool;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, tool_handler};

use crate::tools::Tools;

/// The handler every request shares: the server is stateless (no session is kept between
/// requests), so any process can answer any request.
#[derive(Clone)]
pub struct Mcp {
    tool_router: ToolRouter<Mcp>,
}

impl Mcp {
    /// The service's tools over MCP.
    pub fn new(tools: &Tools) -> Self {
        Mcp {
            tool_router: tools.tool_router(),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for Mcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("campaigns", env!("CARGO_PKG_VERSION")))
    }

    /// A call, an unknown tool refused by its name.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        call_tool(&self.tool_router, self, request, context).await
    }
}
