//! The envelope on the MCP tool-result transport: [`CallToolResult`].
//!
//! The envelope rides inside a `tools/call` result, it does not replace it:
//!
//! - one **text** content block holds the compact envelope JSON, for agents that parse text;
//! - **`structuredContent`** holds the same envelope as an object, byte for byte the same JSON
//!   (left out for clients older than MCP 2025-06-18);
//! - **`isError`** mirrors the envelope: `isError = !ok`;
//! - binary payloads (a capture's PNG) ride as extra **image** blocks, encoded once, while the
//!   result refers to them (by artifact path, say) for text-only agents;
//! - from MCP 2026-07-28 on, **`resultType`** is `"complete"` (absent means the same).
//!
//! Transport faults are not tool outcomes: a malformed request or an unknown tool is a JSON-RPC
//! error response ([`JsonRpcError`]), which has no conversion from or into an envelope.
//!
//! ```
//! use agent_tool_result::mcp::CallToolResult;
//! use agent_tool_result::{Classified, Envelope, ToolError};
//!
//! let envelope: Envelope = Envelope::failure(ToolError::new(
//!     Classified::selector_matched(3).expect("3 matches are ambiguous"),
//!     "Selector title='Save' matched 3 windows.",
//! ));
//! let result = CallToolResult::from_envelope(&envelope)?;
//! assert!(result.is_error());
//! let wire = result.to_json();
//!
//! // The agent side: read it back.
//! let read = CallToolResult::from_json(&wire)?.envelope()?;
//! assert_eq!(read, envelope);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod content;
mod jsonrpc;
mod read;
mod result;
mod revision;
#[cfg(feature = "rmcp")]
mod rmcp;
mod trace;

pub use content::{Content, ImageContent, InvalidImageData, TextContent};
pub use jsonrpc::{JsonRpcCode, JsonRpcError};
pub use read::{McpError, McpErrorKind};
pub use result::CallToolResult;
pub use revision::{McpRevision, ParseRevisionError};
#[cfg(feature = "rmcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp")))]
pub use rmcp::Parameters;
#[cfg(all(feature = "rmcp", feature = "replay"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "rmcp", feature = "replay"))))]
pub use rmcp::{KeyedParameters, guarantee_tool};
pub use trace::{InvalidTraceParent, TRACEPARENT, TraceParent};
