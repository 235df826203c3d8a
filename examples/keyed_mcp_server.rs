//! A stdio MCP server with one guarantee tool, written once as a `GuaranteeTool` and served
//! under the replay sequence on a SQLite ledger: the same `idempotencyKey` answers the first
//! result again, whatever the client retries, across restarts of the server.
//!
//! Run with `cargo run --example keyed_mcp_server --features rmcp,sqlite`, or point a client
//! at that command. The tool:
//!
//! - `send_note { to, text, idempotencyKey }`: `committed` with the `noteId` it created, or a
//!   policy deny (`isError`, no fields) for the opted-out `+15550100`; arguments that do not
//!   fit, and a key missing or malformed, are refused with the problem the output schema
//!   admits, naming what is wrong.

use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode};
use agent_tool_result::mcp::guarantee_tool;
use agent_tool_result::replay::{Done, GuaranteeTool, Operation, Sequence, SqliteLedger};
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `send_note`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    /// The recipient (E.164).
    pub to: String,
    /// The note.
    pub text: String,
}

/// What `send_note` created.
#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Noted {
    /// The note, to look up by id.
    pub note_id: String,
}

/// The tool: its name, once, its types and its effect.
pub struct SendNote;

impl GuaranteeTool for SendNote {
    const NAME: &'static str = "send_note";
    const DESCRIPTION: &'static str =
        "Sends a note. An opted-out number is denied by contact policy (isError, no fields).";
    const OPERATION: &'static str = "note";
    type Arguments = NoteArgs;
    type Fields = Noted;

    async fn run(&self, args: NoteArgs, operation: Operation) -> Done<Noted> {
        if args.to == "+15550100" {
            return Done::Answer(GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into());
        }
        // The effect goes here, under `operation.lease()`'s fence; this demo sends nothing.
        let noted = Noted {
            note_id: operation.id().to_owned(),
        };
        let result = GuaranteeResult::committed()
            .with_impact(Impact::new().with_requested(1).with_committed(1))
            .and_then(|result| result.with_fields(noted));
        Done::Answer(
            result
                .expect("one of one, and no contract field named")
                .into(),
        )
    }
}

/// The server: the sequence its calls run under.
pub struct Notes {
    /// The replay sequence, on the server's ledger.
    pub sequence: Sequence<SqliteLedger>,
}

/// The one caller of a stdio server.
const PRINCIPAL: &str = "local";

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![guarantee_tool::<
            SendNote,
        >()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == SendNote::NAME).then(guarantee_tool::<SendNote>)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match &*request.name {
            SendNote::NAME => self
                .sequence
                .serve_keyed(&SendNote, PRINCIPAL, request.arguments)
                .await
                .into_call_tool_result(),
            other => Err(ErrorData::invalid_params(
                format!("no tool named `{other}`"),
                None,
            )),
        }
    }
}

#[allow(dead_code, reason = "the tests include this file as a module")]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::var("NOTES_LEDGER").unwrap_or_else(|_| "notes-ledger.db".to_owned());
    let notes = Notes {
        sequence: Sequence::new(SqliteLedger::open(path)?),
    };
    notes
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
