//! `rmcp` for real: a server with two envelope-returning tools and a client, connected over an
//! in-process duplex stream, through the full initialize handshake.
#![cfg(feature = "rmcp")]

use agent_tool_result::mcp::{CallToolResult as AtrCallToolResult, Parameters};
use agent_tool_result::{Classified, Envelope, ErrorCategory, ToolError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, ContentBlock, ErrorCode as RpcErrorCode, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::ServiceError;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n', 0, 0, 0, 13,
];

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Capture {
    width: u32,
    height: u32,
    artifact: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Found {
    automation_id: String,
}

#[derive(Deserialize, JsonSchema)]
struct FindArgs {
    /// The title to look for.
    title: String,
}

#[derive(Clone)]
struct Tools {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Tools {
    fn new() -> Self {
        Tools {
            tool_router: Self::tool_router(),
        }
    }

    /// Captures the target window; the image rides as an image block.
    #[tool(output_schema = Envelope::<Capture>::rmcp_output_schema())]
    async fn capture(&self) -> AtrCallToolResult {
        let envelope = Envelope::success(Capture {
            width: 800,
            height: 600,
            artifact: "sessions/20261130-101500-s-1/capture-20261130-101502123-1.png".into(),
        })
        .with_session("s-1");
        AtrCallToolResult::from_envelope(&envelope)
            .expect("the envelope serializes")
            .with_image(PNG, "image/png")
    }

    /// Finds a window by title.
    #[tool(output_schema = Envelope::<Found>::rmcp_output_schema())]
    async fn find(&self, args: Parameters<FindArgs>) -> Envelope<Found> {
        args.run(|FindArgs { title }| {
            Envelope::failure(ToolError::new(
                Classified::selector_matched(3).expect("3 matches are ambiguous"),
                format!("Selector title='{title}' matched 3 windows; refine with processName."),
            ))
        })
        .with_session("s-1")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn text_of(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(text.text.as_str()),
        _ => None,
    }
}

/// Serves `handler` to a new client over an in-process duplex stream, through the full
/// initialize handshake; the client has listed the tools.
async fn connect<S: ServerHandler>(
    handler: S,
) -> (
    rmcp::service::RunningService<rmcp::RoleServer, S>,
    rmcp::service::RunningService<rmcp::RoleClient, ()>,
    Vec<rmcp::model::Tool>,
) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(handler.serve(server_io), ().serve(client_io));
    let server = server.expect("the server initializes");
    let client = client.expect("the client initializes");
    let tools = client.list_all_tools().await.unwrap();
    (server, client, tools)
}

/// The output schema `tools` advertise for tool `name`.
fn output_schema_of(tools: &[rmcp::model::Tool], name: &str) -> Value {
    let tool = tools.iter().find(|t| t.name == name).unwrap();
    Value::Object((*tool.output_schema.clone().unwrap()).clone())
}

#[tokio::test]
async fn an_rmcp_client_calls_envelope_tools() {
    let (server, client, tools) = connect(Tools::new()).await;

    // The advertised output schemas are the envelopes' schemas.
    let schema_of = |name: &str| output_schema_of(&tools, name);
    assert_eq!(
        schema_of("capture"),
        Value::Object(Envelope::<Capture>::output_schema())
    );
    assert_eq!(
        schema_of("find"),
        Value::Object(Envelope::<Found>::output_schema())
    );

    // A success with an image.
    let result = client
        .call_tool(CallToolRequestParams::new("capture"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let text = text_of(&result.content[0]).expect("a text block first");
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        structured,
        "text equals structured content"
    );
    let ContentBlock::Image(image) = &result.content[1] else {
        panic!("{:?}", result.content)
    };
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(
        AtrCallToolResult::try_from(&result)
            .unwrap()
            .content()
            .len(),
        2
    );
    let envelope = Envelope::<Capture>::from_rmcp(&result).unwrap();
    assert_eq!(envelope.result().unwrap().width, 800);
    assert_eq!(envelope.session_id(), Some("s-1"));
    let validator = jsonschema::draft202012::new(&schema_of("capture")).unwrap();
    assert!(validator.is_valid(&structured));

    // A failure: isError, and the category and code an agent branches on.
    let arguments = json!({ "title": "Save" }).as_object().unwrap().clone();
    let result = client
        .call_tool(CallToolRequestParams::new("find").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result.content[0]).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        result.structured_content.clone().unwrap()
    );
    let envelope = Envelope::<Found>::from_rmcp(&result).unwrap();
    let error = envelope.error().unwrap();
    assert_eq!(error.category(), ErrorCategory::AmbiguousSelector);
    assert_eq!(error.code().selector_match_count(), Some(3));
    assert!(error.detail().contains("title='Save'"));
    let validator = jsonschema::draft202012::new(&schema_of("find")).unwrap();
    assert!(
        validator.is_valid(&result.structured_content.clone().unwrap()),
        "the error result fits the output schema"
    );

    // An unknown tool is a JSON-RPC error, not an envelope.
    match client
        .call_tool(CallToolRequestParams::new("destroy"))
        .await
    {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, RpcErrorCode::INVALID_PARAMS),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }

    client.cancel().await.unwrap();
    let _ = server.cancel().await;
}

/// Arguments that do not fit reach the tool's side of the contract, as an envelope.
#[tokio::test]
async fn bad_arguments_answer_an_invalid_argument_envelope() {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(Tools::new().serve(server_io), ().serve(client_io));
    let server = server.expect("the server initializes");
    let client = client.expect("the client initializes");
    // An invalid-argument envelope naming the argument, which fits the advertised output
    // schema.
    let tools = client.list_all_tools().await.unwrap();
    let input = tools.iter().find(|t| t.name == "find").unwrap();
    let schema = Value::Object((*input.output_schema.clone().unwrap()).clone());
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert_eq!(
        input.input_schema["required"],
        json!(["title"]),
        "the input schema is FindArgs'"
    );
    for (arguments, names) in [
        (json!({}), "missing field `title`"),
        (json!({ "title": 5 }), "argument `title`"),
        (json!({ "title": null }), "argument `title`"),
    ] {
        let arguments = arguments.as_object().unwrap().clone();
        let result = client
            .call_tool(CallToolRequestParams::new("find").with_arguments(arguments.clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{arguments:?}");
        let structured = result.structured_content.clone().expect("an envelope");
        assert!(validator.is_valid(&structured), "{structured}");
        let envelope = Envelope::<Found>::from_rmcp(&result).unwrap();
        let error = envelope.error().unwrap();
        assert_eq!(error.category(), ErrorCategory::InvalidArgument);
        assert_eq!(error.code().as_str(), "bad-arguments");
        assert!(error.detail().contains(names), "{}", error.detail());
        assert_eq!(envelope.session_id(), Some("s-1"));
    }

    client.cancel().await.unwrap();
    let _ = server.cancel().await;
}

mod guarantee_tools {
    use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode};
    use agent_tool_result::mcp::Parameters;
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
    use rmcp::{ServerHandler, tool, tool_handler, tool_router};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Campaign {
        campaign_id: String,
    }

    #[derive(Deserialize, JsonSchema)]
    struct SmsArgs {
        to: String,
    }

    #[derive(Clone)]
    struct Campaigns {
        tool_router: ToolRouter<Self>,
    }

    #[tool_router]
    impl Campaigns {
        fn new() -> Self {
            Campaigns {
                tool_router: Self::tool_router(),
            }
        }

        /// Sends one SMS; opted-out contacts are denied before the provider.
        #[tool(output_schema = GuaranteeResult::<Value>::rmcp_output_schema())]
        async fn send_sms(&self, args: Parameters<SmsArgs>) -> GuaranteeResult {
            match args.into_result() {
                Ok(SmsArgs { to }) if to == "+15550100" => {
                    GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)
                }
                _ => GuaranteeResult::committed()
                    .with_impact(Impact::new().with_requested(1).with_committed(1))
                    .expect("one of one"),
            }
        }

        /// Sends a batch up to the window's cap and holds the rest durably.
        #[tool(output_schema = GuaranteeResult::<Campaign>::rmcp_output_schema())]
        async fn send_campaign_batch(&self) -> GuaranteeResult<Campaign> {
            GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
                .with_impact(
                    Impact::new()
                        .with_requested(100)
                        .with_committed(40)
                        .with_deferred(60),
                )
                .expect("40 + 60 of 100")
                .with_next_tool("lookup_marketing_campaigns")
                .with_fields(Campaign {
                    campaign_id: "cmp_7f3a".into(),
                })
                .expect("no contract field")
        }
    }

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Campaigns {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }
    }

    /// Deny is a tool result with isError and the whole result as structuredContent (never a
    /// JSON-RPC error); a hold is an ordinary result, never a task.
    #[tokio::test]
    async fn an_rmcp_client_calls_guarantee_tools() {
        let (server, client, tools) = super::connect(Campaigns::new()).await;
        let schema_of = |name: &str| super::output_schema_of(&tools, name);
        assert_eq!(
            schema_of("send_campaign_batch"),
            Value::Object(GuaranteeResult::<Campaign>::output_schema())
        );

        let to = json!({ "to": "+15550100" }).as_object().unwrap().clone();
        let denied = client
            .call_tool(CallToolRequestParams::new("send_sms").with_arguments(to))
            .await
            .expect("a deny is a tool result, not a JSON-RPC error");
        assert_eq!(denied.is_error, Some(true));
        let structured = denied.structured_content.clone().unwrap();
        assert_eq!(structured["policy"]["decision"], "deny");
        let validator = jsonschema::draft202012::new(&schema_of("send_sms")).unwrap();
        assert!(
            validator.is_valid(&structured),
            "the deny fits the advertised schema"
        );
        let read = GuaranteeResult::<Value>::from_rmcp(&denied).unwrap();
        assert!(read.is_deny());

        let held = client
            .call_tool(CallToolRequestParams::new("send_campaign_batch"))
            .await
            .unwrap();
        assert_eq!(held.is_error, Some(false));
        let wire = serde_json::to_value(&held).unwrap();
        assert!(
            wire.get("task").is_none() && wire.get("taskId").is_none(),
            "{wire}"
        );
        let read = GuaranteeResult::<Campaign>::from_rmcp(&held).unwrap();
        assert_eq!(read.fields().unwrap().campaign_id, "cmp_7f3a");
        assert_eq!(read.impact().unwrap().deferred(), Some(60));
        let validator = jsonschema::draft202012::new(&schema_of("send_campaign_batch")).unwrap();
        assert!(validator.is_valid(&held.structured_content.clone().unwrap()));

        client.cancel().await.unwrap();
        let _ = server.cancel().await;
    }
}

/// A keyed guarantee tool written with `rmcp`'s `#[tool]`: it takes `KeyedParameters`, so its
/// input schema requires `idempotencyKey` and its arguments arrive without it, and it hands
/// the call to the library's replay sequence, whose reply is its tool result.
#[cfg(feature = "replay")]
mod keyed_tools {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use agent_tool_result::JsonObject;
    use agent_tool_result::guarantee::{Answer, GuaranteeResult, Impact, Refusal, RefusalKind};
    use agent_tool_result::mcp::KeyedParameters;
    use agent_tool_result::replay::{MCP_ARGUMENT, MemoryLedger, Reply, Sequence};
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
    use rmcp::{ServerHandler, tool, tool_handler, tool_router};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct SmsArgs {
        to: String,
    }

    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Sent {
        message_id: String,
    }

    #[derive(Clone)]
    struct Keyed {
        tool_router: ToolRouter<Self>,
        sequence: Arc<Sequence<MemoryLedger>>,
        sends: Arc<AtomicUsize>,
    }

    #[tool_router]
    impl Keyed {
        #[tool(
            input_schema = KeyedParameters::<SmsArgs>::rmcp_input_schema(),
            output_schema = GuaranteeResult::<Sent>::rmcp_output_schema(),
        )]
        async fn send_sms(&self, args: KeyedParameters<SmsArgs>) -> Reply {
            let (call, args) = match args.into_call("send_sms", "acct_1") {
                Ok(call) => call,
                Err(refusal) => return refusal.into(),
            };
            let id = call.operation_id("msg");
            self.sequence
                .run(call.with_context(&id), |_| async {
                    if args.to.is_empty() {
                        return Answer::Refused(Refusal::invalid_arguments("no number"));
                    }
                    self.sends.fetch_add(1, Ordering::SeqCst);
                    GuaranteeResult::committed()
                        .with_impact(Impact::new().with_requested(1).with_committed(1))
                        .expect("one of one")
                        .with_fields(Sent {
                            message_id: id.clone(),
                        })
                        .expect("no contract field")
                        .into()
                })
                .await
        }
    }

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Keyed {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }
    }

    fn arguments(value: Value) -> JsonObject {
        match value {
            Value::Object(arguments) => arguments,
            other => panic!("not an object: {other}"),
        }
    }

    #[tokio::test]
    async fn a_keyed_tool_replays_and_refuses_through_the_sequence() {
        let sends = Arc::new(AtomicUsize::new(0));
        let handler = Keyed {
            tool_router: Keyed::tool_router(),
            sequence: Arc::new(Sequence::new(MemoryLedger::new())),
            sends: Arc::clone(&sends),
        };
        let (server, client, tools) = super::connect(handler).await;
        let tool = tools.iter().find(|t| t.name == "send_sms").unwrap();
        let required = tool.input_schema["required"].as_array().unwrap();
        assert!(
            required.contains(&json!(MCP_ARGUMENT)),
            "{:?}",
            tool.input_schema
        );
        assert!(required.contains(&json!("to")));
        let validator =
            jsonschema::draft202012::new(&super::output_schema_of(&tools, "send_sms")).unwrap();
        let call = |args: Value| {
            client.call_tool(CallToolRequestParams::new("send_sms").with_arguments(arguments(args)))
        };

        // The key is taken out before the arguments are read (`SmsArgs` denies unknown fields).
        let first = call(json!({ "to": "+15550100", MCP_ARGUMENT: "k-1" }))
            .await
            .unwrap();
        let again = call(json!({ MCP_ARGUMENT: "k-1", "to": "+15550100" }))
            .await
            .unwrap();
        assert_eq!(first.is_error, Some(false));
        assert_eq!(again.structured_content, first.structured_content);
        assert_eq!(sends.load(Ordering::SeqCst), 1);
        let read = GuaranteeResult::<Value>::from_rmcp(&first).unwrap();
        assert!(
            read.field("messageId")
                .unwrap()
                .as_str()
                .unwrap()
                .starts_with("msg_")
        );

        // Refusals: a tool result with `isError` and the problem, which the schema admits.
        for (args, kind) in [
            (json!({ "to": "+15550100" }), RefusalKind::KeyMissing),
            (
                json!({ "to": "+15550100", MCP_ARGUMENT: "" }),
                RefusalKind::KeyInvalid,
            ),
            (
                json!({ "to": "+15550199", MCP_ARGUMENT: "k-1" }),
                RefusalKind::KeyMismatch,
            ),
            (
                json!({ "to": 5, MCP_ARGUMENT: "k-2" }),
                RefusalKind::InvalidArguments,
            ),
            (
                json!({ "to": "", MCP_ARGUMENT: "k-3" }),
                RefusalKind::InvalidArguments,
            ),
        ] {
            let refused = call(args.clone()).await.unwrap();
            assert_eq!(refused.is_error, Some(true), "{args}");
            let structured = refused.structured_content.clone().unwrap();
            assert!(validator.is_valid(&structured), "{structured}");
            let answer = Answer::<Value>::from_rmcp(&refused).unwrap();
            assert_eq!(answer.refusal().map(Refusal::kind), Some(kind), "{args}");
        }
        // The tool's own refusal released its key: the same key runs once fixed.
        let fixed = call(json!({ "to": "+15550101", MCP_ARGUMENT: "k-3" }))
            .await
            .unwrap();
        assert_eq!(fixed.is_error, Some(false));
        assert_eq!(sends.load(Ordering::SeqCst), 2);

        client.cancel().await.unwrap();
        let _ = server.cancel().await;
    }
}
