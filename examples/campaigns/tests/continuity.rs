//! Thin continuity over MCP, with the official Rust SDK as the client over Streamable HTTP:
//! session 1 sends a batch and disconnects; a fresh session looks the campaign up by id and
//! reads the same counts, and so does REST, on the same database. Replays over MCP answer the
//! first result and send nothing; a deny is a tool result with `isError`, never a JSON-RPC
//! error; a hold is an ordinary result, never a task.

use crate::support;

use agent_tool_result::Envelope;
use agent_tool_result::guarantee::{
    Answer, GuaranteeResult, PolicyDecision, Refusal, RefusalKind, SettlementState,
};
use agent_tool_result::replay::MCP_ARGUMENT;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use support::{Scratch, Service, numbers, provider_sends};

const FLAGS: &[&str] = &[
    "--cap",
    "5",
    "--window-secs",
    "3600",
    "--opt-out",
    "+15550100000",
];

async fn session(service: &Service) -> RunningService<RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", service.base))
        .auth_header(support::TOKEN);
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport).await.expect("the session initializes")
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        unreachable!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("a tool result, not a JSON-RPC error")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_session_reads_the_counts_the_first_one_left() {
    let scratch = Scratch::new("continuity");
    let service = Service::start(scratch.db(), FLAGS);
    let batch =
        json!({ "recipients": numbers(8), "message": "Winter sale", MCP_ARGUMENT: "winter-mcp" });

    // Session 1: send the batch, read the id and the next tool, disconnect.
    let first = session(&service).await;
    let tools = first.list_all_tools().await.unwrap();
    let send = tools
        .iter()
        .find(|t| t.name == "send_campaign_batch")
        .unwrap();
    assert!(
        send.input_schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!(MCP_ARGUMENT)),
        "the key is a required argument: {:?}",
        send.input_schema
    );
    let held = call(&first, "send_campaign_batch", batch.clone()).await;
    assert_eq!(held.is_error, Some(false));
    let wire = serde_json::to_value(&held).unwrap();
    assert!(
        wire.get("task").is_none() && wire.get("taskId").is_none(),
        "{wire}"
    );
    let result = GuaranteeResult::<Value>::from_rmcp(&held).unwrap();
    assert_eq!(result.settlement(), SettlementState::Committed);
    assert_eq!(result.policy().decision(), PolicyDecision::Defer);
    assert!(result.policy().retry_at().is_some());
    let impact = result.impact().unwrap();
    assert_eq!(
        (
            impact.requested(),
            impact.committed(),
            impact.deferred(),
            impact.denied()
        ),
        (Some(8), Some(5), Some(2), Some(1))
    );
    assert_eq!(
        result.suggested_next_tool(),
        Some("lookup_marketing_campaigns")
    );
    let campaign = support::named(&result, "campaignId");
    first.cancel().await.unwrap();

    // Session 2, fresh: the id alone is enough.
    let second = session(&service).await;
    let found = call(
        &second,
        "lookup_marketing_campaigns",
        json!({ "campaignId": campaign }),
    )
    .await;
    assert_eq!(found.is_error, Some(false));
    let status = Envelope::<Value>::from_rmcp(&found).unwrap();
    let status = status.result().unwrap().clone();
    assert_eq!(status["campaignId"], campaign.as_str());
    assert_eq!(
        status["counts"],
        json!({ "requested": 8, "sent": 5, "sending": 0, "held": 2, "denied": 1 })
    );
    assert_eq!(status["status"], "held");
    assert!(status["updatedAt"].is_string() && status["nextAttemptAt"].is_string());

    // REST reads the same campaign from the same database.
    let over_rest = service.lookup(&campaign);
    assert_eq!(over_rest["result"]["counts"], status["counts"]);

    // The same key in the new session replays the first result: nothing is sent again.
    let replay = call(&second, "send_campaign_batch", batch.clone()).await;
    assert_eq!(replay.structured_content, held.structured_content);
    assert_eq!(provider_sends(&scratch.db()).len(), 5);

    // The same key with another payload is refused, and so is a call without a key.
    let mut other = batch.clone();
    other["message"] = json!("Another sale");
    let mismatch = call(&second, "send_campaign_batch", other).await;
    assert_eq!(mismatch.is_error, Some(true));
    let refused = Answer::<Value>::from_rmcp(&mismatch).unwrap();
    assert_eq!(
        refused.refusal().map(Refusal::kind),
        Some(RefusalKind::KeyMismatch)
    );
    let unkeyed = call(
        &second,
        "send_sms",
        json!({ "to": "+15550100009", "body": "hi" }),
    )
    .await;
    assert_eq!(unkeyed.is_error, Some(true));
    let refused = Answer::<Value>::from_rmcp(&unkeyed).unwrap();
    assert_eq!(
        refused.refusal().map(Refusal::kind),
        Some(RefusalKind::KeyMissing)
    );

    // A deny is a tool result with isError and the whole result as structured content.
    let denied = call(
        &second,
        "send_sms",
        json!({ "to": "+15550100000", "body": "hi", MCP_ARGUMENT: "sms-denied" }),
    )
    .await;
    assert_eq!(denied.is_error, Some(true));
    let result = GuaranteeResult::<Value>::from_rmcp(&denied).unwrap();
    assert!(result.is_deny());
    assert_eq!(result.settlement(), SettlementState::NotStarted);
    assert_eq!(provider_sends(&scratch.db()).len(), 5);
    second.cancel().await.unwrap();
}
