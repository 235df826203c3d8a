//! A stdio MCP server whose tools return envelopes, usable from any MCP client.
//!
//! Run with `cargo run --example mcp_server --features rmcp`, or point a client at that
//! command. Tools:
//!
//! - `find_window { title }`: succeeds for "Notepad", fails `no-target` for anything else, and
//!   `ambiguous-selector` (`selector-matched-3`) for "Save"; arguments that do not fit (no
//!   title, a title that is not a string) fail `invalid-argument` with an envelope too;
//! - `capture`: succeeds with a tiny PNG as an image block, referenced from the result.

use agent_tool_result::mcp::{CallToolResult, Parameters};
use agent_tool_result::observation::WindowInfo;
use agent_tool_result::{Classified, Envelope, ToolError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A 1x1 transparent PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0x64, 0x60, 0xF8, 0x5F,
    0x0F, 0x00, 0x02, 0x87, 0x01, 0x80, 0xEB, 0x47, 0xBA, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

#[derive(Deserialize, JsonSchema)]
struct FindArgs {
    /// The window title to look for.
    title: String,
}

/// What `capture` returns besides the image block.
#[derive(Serialize, JsonSchema)]
struct Capture {
    width: u32,
    height: u32,
    /// Where the image was written, for agents that cannot see image blocks.
    artifact: String,
}

#[derive(Clone)]
struct Demo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Demo {
    fn new() -> Self {
        Demo {
            tool_router: Self::tool_router(),
        }
    }

    /// Finds a top-level window by its title.
    #[tool(output_schema = Envelope::<WindowInfo>::rmcp_output_schema())]
    async fn find_window(&self, args: Parameters<FindArgs>) -> Envelope<WindowInfo> {
        args.run(|FindArgs { title }| Envelope::from(find(&title)))
            .with_session("s-demo")
    }

    /// Captures the screen; the PNG rides as an image block.
    #[tool(output_schema = Envelope::<Capture>::rmcp_output_schema())]
    async fn capture(&self) -> CallToolResult {
        let envelope = Envelope::success(Capture {
            width: 1,
            height: 1,
            artifact: "sessions/demo/capture-1.png".into(),
        })
        .with_session("s-demo");
        CallToolResult::from_envelope(&envelope)
            .expect("a struct result serializes to an object")
            .with_image(PNG, "image/png")
    }
}

/// The demo's window lookup.
fn find(title: &str) -> Result<WindowInfo, ToolError> {
    match title {
        "Notepad" => {
            Ok(
                WindowInfo::new(1_312_674, "Untitled - Notepad", "Notepad", "notepad", 8124)
                    .at(120, 80, 1024, 768),
            )
        }
        "Save" => Err(ToolError::new(
            Classified::selector_matched(3).expect("3 matches are ambiguous"),
            "Selector title='Save' matched 3 windows; refine with processName or className.",
        )),
        other => Err(ToolError::new(
            Classified::WINDOW_NOT_FOUND,
            format!("No window titled '{other}'; query to list the open windows."),
        )),
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Demo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Demo::new().serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
