//! A stdio MCP server with a guarantee tool and an ordinary `#[tool]` in one `rmcp` router:
//! the guarantee tool written once as a `GuaranteeTool` and listed in the crate's
//! `Registry`, whose router runs it under the replay sequence on a SQLite ledger (the same
//! `idempotencyKey` answers the first result again, whatever the client retries, across
//! restarts of the server), added with `+` to the router of the server's own `#[tool]`
//! methods. No hand-written `call_tool`: rmcp's `#[tool_handler]` serves both.
//!
//! Run with `cargo run --example keyed_mcp_server --features rmcp,sqlite`, or point a client
//! at that command. The tools:
//!
//! - `send_note { to, text, idempotencyKey }`: `committed` with the `noteId` it created, or a
//!   policy deny (`isError`, no fields) for the opted-out `+15550100`; arguments that do not
//!   fit, and a key missing or malformed, are refused with the problem the output schema
//!   admits, naming what is wrong. Listed idempotent (per key), not destructive.
//! - `note_limits {}`: an ordinary `#[tool]`, read-only, answering its envelope: the longest
//!   note the server sends.

use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Tally};
use agent_tool_result::registry::Registry;
use agent_tool_result::replay::{
    Done, GuaranteeTool, Operation, OperationFields, Sequence, SqliteLedger,
};
use agent_tool_result::{Envelope, Hints};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
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

impl OperationFields for Noted {
    fn of_operation(id: &str) -> Self {
        Noted {
            note_id: id.to_owned(),
        }
    }
}

/// The guarantee tool: its name, once, its hints, its types and its effect.
pub struct SendNote;

impl GuaranteeTool for SendNote {
    const NAME: &'static str = "send_note";
    const DESCRIPTION: &'static str =
        "Sends a note. An opted-out number is denied by contact policy (isError, no fields).";
    const OPERATION: &'static str = "note";
    /// An abandoned note is looked up by id (a lookup this demo leaves out).
    const LOOKUP: &'static str = "lookup_note";
    /// A note adds to the world and reaches a person: not destructive, open-world.
    const HINTS: Hints = Hints::new().destructive(false);
    type Arguments = NoteArgs;
    type Fields = Noted;

    async fn run(&self, args: NoteArgs, operation: Operation) -> Done<Noted> {
        if args.to == "+15550100" {
            return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into();
        }
        // The effect goes here, under `operation.lease()`'s fence; this demo sends nothing.
        GuaranteeResult::committed_with(Tally::sent(1), Noted::of_operation(operation.id())).into()
    }
}

/// What `note_limits` answers.
#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// The longest note sent, in characters.
    pub max_text: u32,
}

/// The server: one router, its own `#[tool]` methods and the registry's tools.
#[derive(Clone)]
pub struct Notes {
    tool_router: ToolRouter<Notes>,
}

#[tool_router]
impl Notes {
    /// The server on `ledger`: its own tools, and the registry's, in one router.
    #[must_use]
    pub fn new(ledger: SqliteLedger) -> Self {
        let tools = Registry::new(Sequence::new(ledger))
            // A stdio server has one caller.
            .with_default_principal("local")
            .guarantee(SendNote);
        Notes {
            tool_router: Self::tool_router() + tools.tool_router(),
        }
    }

    /// An ordinary tool, beside the guarantee tool in the same router.
    #[allow(clippy::unused_self, reason = "an rmcp tool is a method of its server")]
    #[tool(
        description = "The limits of the notes this server sends.",
        output_schema = Envelope::<Limits>::rmcp_output_schema(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn note_limits(&self) -> Envelope<Limits> {
        Envelope::success(Limits { max_text: 1_600 })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[allow(dead_code, reason = "the tests include this file as a module")]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::var("NOTES_LEDGER").unwrap_or_else(|_| "notes-ledger.db".to_owned());
    Notes::new(SqliteLedger::open(path)?)
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
