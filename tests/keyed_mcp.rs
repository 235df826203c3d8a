//! The keyed MCP example (`examples/keyed_mcp_server.rs`) for real: its `GuaranteeTool`, listed
//! in the crate's registry, and its ordinary `#[tool]`, served from one rmcp router to an
//! `rmcp` client over an in-process duplex stream, through the full initialize handshake. Its
//! name is written once, its schemas come from its types, its annotations from its hints, every
//! answer (committed, a replay, a deny, each refusal) validates against the output schema it
//! advertises, and the same key answers the first result again.
#![cfg(all(feature = "rmcp", feature = "sqlite"))]

#[allow(dead_code, reason = "the example's main is not run here")]
#[path = "../examples/keyed_mcp_server.rs"]
mod example;

use agent_tool_result::guarantee::GuaranteeResult;
use agent_tool_result::replay::{GuaranteeTool, SqliteLedger};
use example::{Limits, Noted, Notes, SendNote};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

#[tokio::test]
async fn a_guarantee_tool_written_once_serves_mcp_with_its_own_schemas() {
    let notes = Notes::new(SqliteLedger::open_in_memory().unwrap());
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let (server, client) = tokio::join!(notes.serve(server_io), ().serve(client_io));
    let (server, client) = (server.unwrap(), client.unwrap());

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| &*tool.name).collect();
    assert_eq!(names, ["note_limits", SendNote::NAME]);
    let tool = &tools[1];
    let hints = tool.annotations.clone().unwrap();
    assert_eq!(
        (
            hints.idempotent_hint,
            hints.read_only_hint,
            hints.destructive_hint,
            hints.open_world_hint
        ),
        (Some(true), Some(false), Some(false), Some(true)),
        "a guarantee tool is idempotent per key, and as its hints declare"
    );
    assert_eq!(
        tools[0].annotations.clone().unwrap().read_only_hint,
        Some(true)
    );
    let input = Value::Object((*tool.input_schema).clone());
    assert_eq!(input["required"], json!(["to", "text", "idempotencyKey"]));
    let output = Value::Object((*tool.output_schema.clone().unwrap()).clone());
    assert_eq!(
        output,
        Value::Object(GuaranteeResult::<Noted>::output_schema())
    );
    let validator = jsonschema::draft202012::new(&output).unwrap();

    let call = |arguments: Value| {
        let arguments = arguments.as_object().unwrap().clone();
        client.call_tool(CallToolRequestParams::new(SendNote::NAME).with_arguments(arguments))
    };
    let ok = json!({ "to": "+15550199", "text": "hi", "idempotencyKey": "note-1" });
    let first = call(ok.clone()).await.unwrap();
    let again = call(ok).await.unwrap();
    let denied = call(json!({ "to": "+15550100", "text": "hi", "idempotencyKey": "note-2" }));
    let unkeyed = call(json!({ "to": "+15550199", "text": "hi" }));
    let misfit = call(json!({ "to": "+15550199", "text": 5, "idempotencyKey": "note-3" }));
    let (denied, unkeyed, misfit) = (
        denied.await.unwrap(),
        unkeyed.await.unwrap(),
        misfit.await.unwrap(),
    );

    // Every answer is one the advertised schema admits, error results included.
    for (name, result) in [
        ("first", &first),
        ("again", &again),
        ("denied", &denied),
        ("unkeyed", &unkeyed),
        ("misfit", &misfit),
    ] {
        let structured = result.structured_content.clone().unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?} in {structured}");
    }

    let read = GuaranteeResult::<Noted>::from_rmcp(&first).unwrap();
    let id = &read.fields().unwrap().note_id;
    assert!(id.starts_with("note_"), "{id}");
    assert_eq!(
        again.structured_content, first.structured_content,
        "a replay is the first"
    );
    assert_eq!(denied.is_error, Some(true));
    let deny = GuaranteeResult::<Noted>::from_rmcp(&denied).unwrap();
    assert!(deny.is_deny() && deny.fields().is_none());
    assert_eq!(unkeyed.is_error, Some(true));
    let misfit = misfit.structured_content.unwrap();
    assert!(
        misfit["detail"].as_str().unwrap().starts_with("`text`: "),
        "{misfit}"
    );

    // The ordinary tool answers from the same router.
    let limits = client
        .call_tool(CallToolRequestParams::new("note_limits"))
        .await
        .unwrap();
    let envelope: agent_tool_result::Envelope<Limits> =
        agent_tool_result::Envelope::from_rmcp(&limits).unwrap();
    assert_eq!(envelope.result().map(|limits| limits.max_text), Some(1_600));

    client.cancel().await.unwrap();
    server.cancel().await.unwrap();
}
