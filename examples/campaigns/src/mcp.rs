//! The MCP side, served over Streamable HTTP at `/mcp`: the same tools on the same service.
//! A guarantee tool takes its key as the `idempotencyKey` argument (named once, by the crate,
//! and required by its input schema); its answer is the REST response the ledger keeps, read
//! back by the crate's classifier and projected for MCP, so a replay over MCP is the first
//! result too. Lookups answer the tool's envelope.

use std::sync::Arc;

use agent_tool_result::guarantee::GuaranteeResult;
use agent_tool_result::http::{KeyProblem, RestOutcome, classify};
use agent_tool_result::mcp::CallToolResult as AtrCallToolResult;
use agent_tool_result::replay::{IdempotencyKey, MCP_ARGUMENT};
use agent_tool_result::{Envelope, ErrorCategory, ErrorCode, JsonObject, ToolError};
use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::service::{
    Answer, BatchArgs, CampaignArgs, CampaignRef, CampaignStatus, Command, LOOKUP_CAMPAIGNS,
    LOOKUP_SMS, MessageArgs, MessageRef, MessageStatus, SEND_CAMPAIGN_BATCH, SEND_SMS, Service,
    SmsArgs,
};

/// One MCP session's handler; every session shares the service.
#[derive(Clone)]
pub struct Mcp {
    /// The service.
    pub service: Arc<Service>,
    /// The principal every call runs as.
    pub principal: String,
}

fn input_schema<T: JsonSchema>(keyed: bool) -> JsonObject {
    let Ok(Value::Object(mut schema)) = serde_json::to_value(schemars::schema_for!(T)) else {
        unreachable!("a derived schema is an object")
    };
    if keyed {
        IdempotencyKey::add_to_input_schema(&mut schema);
        // The key is one more property: the tool's own schema closes the others.
        schema.remove("additionalProperties");
    }
    schema
}

/// The tools, with their input and output schemas, built once.
fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        vec![
            Tool::new(
                SEND_SMS,
                "Sends one SMS. An opted-out number is denied by contact policy before the \
             provider (isError, policy.decision deny).",
                input_schema::<SmsArgs>(true),
            )
            .with_raw_output_schema(GuaranteeResult::<MessageRef>::rmcp_output_schema()),
            Tool::new(
                SEND_CAMPAIGN_BATCH,
                "Sends a campaign: up to the window's cap now, the rest held durably for later \
             windows (committed + defer). Read campaignId and look it up with \
             lookup_marketing_campaigns; never send the batch again to resume it.",
                input_schema::<BatchArgs>(true),
            )
            .with_raw_output_schema(GuaranteeResult::<CampaignRef>::rmcp_output_schema()),
            Tool::new(
                LOOKUP_CAMPAIGNS,
                "Where a campaign stands, by campaignId: status, counts, updatedAt, next attempt. \
             The authority: re-query it rather than trusting notes.",
                input_schema::<CampaignArgs>(false),
            )
            .with_raw_output_schema(Envelope::<CampaignStatus>::rmcp_output_schema()),
            Tool::new(
                LOOKUP_SMS,
                "Whether a message was sent, by messageId.",
                input_schema::<MessageArgs>(false),
            )
            .with_raw_output_schema(Envelope::<MessageStatus>::rmcp_output_schema()),
        ]
    })
}

/// A failure envelope for arguments that do not fit, or a key the call cannot run under.
fn refused(code: String, category: ErrorCategory, detail: String) -> Envelope {
    let code = ErrorCode::new(code).expect("a kebab-case code");
    Envelope::failure(
        ToolError::classified(code, category, detail).expect("the service's own code"),
    )
}

fn bad_arguments(err: &impl std::fmt::Display) -> Envelope {
    Envelope::failure(ToolError::new(
        ErrorCode::BAD_ARGUMENTS,
        format!("the arguments do not fit the tool's input schema: {err}"),
    ))
}

fn key_refused(problem: KeyProblem, detail: String) -> Envelope {
    let category = match problem {
        KeyProblem::InFlight => ErrorCategory::Timeout,
        _ => ErrorCategory::InvalidArgument,
    };
    refused(format!("idempotency-key-{problem}"), category, detail)
}

impl Mcp {
    fn lookup<A: DeserializeOwned>(
        arguments: &Value,
        look: impl FnOnce(A) -> Result<CallToolResponse, ErrorData>,
    ) -> Result<CallToolResponse, ErrorData> {
        match A::deserialize(arguments) {
            Ok(args) => look(args),
            Err(err) => bad_arguments(&err).into_call_tool_result(),
        }
    }

    async fn guarantee(
        &self,
        tool: &str,
        mut arguments: JsonObject,
    ) -> Result<CallToolResponse, ErrorData> {
        let key = match IdempotencyKey::from_arguments(&arguments) {
            Ok(key) => key,
            Err(err) => return key_refused(err.refusal(), err.to_string()).into_call_tool_result(),
        };
        arguments.remove(MCP_ARGUMENT);
        let arguments = Value::Object(arguments);
        let command = match Command::parse(tool, &arguments) {
            Some(Ok(command)) => command,
            Some(Err(err)) => return bad_arguments(&err).into_call_tool_result(),
            None => unreachable!("only guarantee tools come here"),
        };
        let (service, principal) = (Arc::clone(&self.service), self.principal.clone());
        let answer = tokio::task::spawn_blocking(move || {
            service.call(&command, &arguments, &principal, &key)
        })
        .await
        .map_err(|err| ErrorData::internal_error(err.to_string(), None))?
        .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        let response = match answer {
            Answer::Response(response) => response,
            Answer::Refused(problem) => {
                return key_refused(problem, problem.title().to_owned()).into_call_tool_result();
            }
        };
        match classify(&response) {
            RestOutcome::Settled(result)
            | RestOutcome::Deferred { result, .. }
            | RestOutcome::PolicyDenied { result, .. } => {
                AtrCallToolResult::from_guarantee(&result)
                    .map_err(|err| ErrorData::internal_error(err.to_string(), None))?
                    .into_call_tool_result()
            }
            other => Err(ErrorData::internal_error(
                format!("the service answered outside the contract: {other:?}"),
                None,
            )),
        }
    }
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        match &*request.name {
            SEND_SMS | SEND_CAMPAIGN_BATCH => self.guarantee(&request.name, arguments).await,
            LOOKUP_CAMPAIGNS => Mcp::lookup(&Value::Object(arguments), |args: CampaignArgs| {
                self.service
                    .lookup_campaign(&args.campaign_id)
                    .map_err(|err| ErrorData::internal_error(err.to_string(), None))?
                    .into_call_tool_result()
            }),
            LOOKUP_SMS => Mcp::lookup(&Value::Object(arguments), |args: MessageArgs| {
                self.service
                    .lookup_message(&args.message_id)
                    .map_err(|err| ErrorData::internal_error(err.to_string(), None))?
                    .into_call_tool_result()
            }),
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }
}
