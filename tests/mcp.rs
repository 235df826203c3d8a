//! The MCP projection: `CallToolResult` shape, revisions, images, reading back, output schema,
//! and JSON-RPC faults kept apart.

use agent_tool_result::mcp::{
    CallToolResult, Content, JsonRpcCode, JsonRpcError, McpErrorKind, McpRevision,
};
use agent_tool_result::{
    Classified, Envelope, ErrorCategory, Observation, ToolError, Warning, WarningCode, error_code,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A sample tool's result type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Found {
    automation_id: String,
    bounds: [i32; 4],
}

fn found() -> Found {
    Found {
        automation_id: "btnOk".into(),
        bounds: [412, 310, 80, 24],
    }
}

fn failure() -> Envelope<Found> {
    Envelope::failure(ToolError::new(
        Classified::selector_matched(3).expect("3 matches are ambiguous"),
        "Selector title='Save' matched 3 windows.",
    ))
    .with_session("s-4f2a")
}

fn parsed(result: &CallToolResult) -> Value {
    serde_json::from_str(&result.to_json()).unwrap()
}

#[test]
fn the_envelope_rides_in_a_text_block_and_identically_in_structured_content() {
    for envelope in [Envelope::success(found()).with_session("s-1"), failure()] {
        let result = CallToolResult::from_envelope(&envelope).unwrap();
        let wire = parsed(&result);
        let text = wire["content"][0]["text"].as_str().unwrap();
        assert_eq!(wire["content"][0]["type"], "text");
        assert_eq!(text, envelope.to_json().unwrap(), "compact envelope JSON");
        let structured = result.structured_content().unwrap();
        assert_eq!(structured, text, "the same bytes");
        assert_eq!(
            wire["structuredContent"],
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert_eq!(wire["isError"], !envelope.is_ok());
        assert_eq!(wire["resultType"], "complete");
        assert_eq!(wire["content"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn older_revisions_drop_what_they_do_not_know() {
    let envelope = failure();
    for revision in McpRevision::ALL {
        let wire = parsed(&CallToolResult::from_envelope_for(&envelope, revision).unwrap());
        assert_eq!(
            wire.get("structuredContent").is_some(),
            revision >= McpRevision::V2025_06_18,
            "{revision}"
        );
        assert_eq!(
            wire.get("resultType").is_some(),
            revision >= McpRevision::V2026_07_28,
            "{revision}"
        );
        assert_eq!(wire["isError"], true);
        let back: Envelope<Found> = Envelope::from_call_tool_result(&wire.to_string()).unwrap();
        assert_eq!(back, envelope, "{revision}: read back from the text block");
    }
    for revision in McpRevision::ALL {
        assert_eq!(revision.as_str().parse::<McpRevision>(), Ok(revision));
    }
    assert!("2025-01-01".parse::<McpRevision>().is_err());
}

#[test]
fn images_ride_as_extra_blocks_encoded_once() {
    let png = [0x89, b'P', b'N', b'G', 1, 2, 3];
    let result = CallToolResult::from_envelope(&Envelope::success(json!({
        "artifact": "sessions/20261130-101500-s-4f2a/capture-20261130-101502123-1.png"
    })))
    .unwrap()
    .with_image(&png, "image/png");
    let wire = parsed(&result);
    assert_eq!(
        wire["content"][1],
        json!({ "type": "image", "data": "iVBORwECAw==", "mimeType": "image/png" })
    );
    let read = CallToolResult::from_json(&result.to_json()).unwrap();
    let Content::Image(image) = &read.content()[1] else {
        panic!("{:?}", read.content())
    };
    assert_eq!(image.decode().unwrap(), png);
    assert_eq!(image.mime_type(), "image/png");
}

#[test]
fn reading_prefers_structured_content_and_passes_other_blocks_through() {
    let envelope = Envelope::success(found());
    let mut wire = parsed(&CallToolResult::from_envelope(&envelope).unwrap());
    // A text block that says something else: structuredContent wins.
    wire["content"][0]["text"] = json!("Found it.");
    let audio = json!({ "type": "audio", "data": "AAAA", "mimeType": "audio/wav" });
    let link = json!({ "type": "resource_link", "uri": "file:///tmp/x.png", "name": "x" });
    wire["content"]
        .as_array_mut()
        .unwrap()
        .extend([audio.clone(), link.clone()]);
    let read = CallToolResult::from_json(&wire.to_string()).unwrap();
    assert_eq!(read.envelope::<Found>().unwrap(), envelope);
    let again = parsed(&read);
    assert_eq!(again["content"][1], audio);
    assert_eq!(again["content"][2], link);
}

#[test]
fn reading_rejects_what_is_not_an_envelope_with_a_clear_error() {
    let good = parsed(&CallToolResult::from_envelope(&failure()).unwrap());
    let text_only = |text: &str| {
        json!({ "content": [{ "type": "text", "text": text }], "isError": false }).to_string()
    };
    let mut flipped = good.clone();
    flipped["isError"] = json!(false);
    let mut missing_is_error = good.clone();
    missing_is_error.as_object_mut().unwrap().remove("isError");
    let mut task = good.clone();
    task["resultType"] = json!("task");
    let mut bad_image = good.clone();
    bad_image["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "type": "image", "data": "%%%", "mimeType": "image/png" }));
    let cases = [
        ("not json".to_owned(), McpErrorKind::NotJson),
        ("[1, 2]".to_owned(), McpErrorKind::Malformed),
        (text_only("this is not JSON"), McpErrorKind::NotAnEnvelope),
        (text_only("[1, 2, 3]"), McpErrorKind::NotAnEnvelope),
        (text_only(r#"{"ok":false}"#), McpErrorKind::NotAnEnvelope),
        (
            json!({ "content": [] }).to_string(),
            McpErrorKind::NoEnvelope,
        ),
        (
            json!({ "content": [{ "type": "image", "data": "AAAA", "mimeType": "image/png" }] })
                .to_string(),
            McpErrorKind::NoEnvelope,
        ),
        (flipped.to_string(), McpErrorKind::IsErrorMismatch),
        (missing_is_error.to_string(), McpErrorKind::IsErrorMismatch),
        (task.to_string(), McpErrorKind::Incomplete),
        (bad_image.to_string(), McpErrorKind::Malformed),
        (
            json!({ "content": [{ "text": "no type" }] }).to_string(),
            McpErrorKind::Malformed,
        ),
    ];
    for (json, kind) in cases {
        let err = Envelope::<Value>::from_call_tool_result(&json).unwrap_err();
        assert_eq!(err.kind(), kind, "{json}: {err}");
        assert!(!err.to_string().is_empty());
    }
    let err = Envelope::<Value>::from_call_tool_result(&text_only("[1, 2, 3]")).unwrap_err();
    assert_eq!(
        err.envelope_error().unwrap().rule(),
        agent_tool_result::Rule::EnvelopeIsObject
    );
    // An absent isError is false, which a success agrees with.
    let mut success = parsed(&CallToolResult::from_envelope(&Envelope::success(found())).unwrap());
    success.as_object_mut().unwrap().remove("isError");
    assert!(Envelope::<Found>::from_call_tool_result(&success.to_string()).is_ok());
}

#[test]
fn a_fifty_megabyte_text_block_is_read_or_rejected_without_trouble() {
    let junk = json!({ "content": [{ "type": "text", "text": "x".repeat(50 << 20) }] }).to_string();
    let err = Envelope::<Value>::from_call_tool_result(&junk).unwrap_err();
    assert_eq!(err.kind(), McpErrorKind::NotAnEnvelope);
    assert!(
        err.to_string().len() < 1_000,
        "the message does not echo the block"
    );

    let detail = "d".repeat(50 << 20);
    let big: Envelope = Envelope::failure(ToolError::new(Classified::UNHANDLED, detail.clone()));
    let result = CallToolResult::from_envelope(&big).unwrap();
    let back = Envelope::<Value>::from_call_tool_result(&result.to_json()).unwrap();
    assert_eq!(back.error().unwrap().detail().len(), detail.len());
}

#[test]
fn the_output_schema_accepts_every_success_and_failure_of_the_tool() {
    let schema = Value::Object(Envelope::<Found>::output_schema());
    jsonschema::draft202012::meta::validate(&schema).unwrap();
    assert_eq!(schema["type"], "object");
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let mut envelopes = vec![
        Envelope::success(found()),
        Envelope::success_empty(),
        Envelope::success(found())
            .with_session("s-1")
            .with_warning(Warning::new(WarningCode::MINIMIZED_WINDOW, "Restored.")),
    ];
    for category in ErrorCategory::ALL {
        let code = Classified::new(error_code!("sample-code"), category).unwrap();
        let error = ToolError::new(code, "x")
            .with_last_observation(
                Observation::try_from(json!({ "kind": "find", "matches": 0 })).unwrap(),
            )
            .with_partial_result(json!({ "base64": "QUJD" }).as_object().unwrap().clone());
        envelopes.push(Envelope::failure(error).with_session("s-2"));
    }
    for envelope in &envelopes {
        let result = CallToolResult::from_envelope(envelope).unwrap();
        let structured: Value = serde_json::from_str(result.structured_content().unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{structured}: {errors:?}");
    }
    // The result's own schema is enforced: a result of the wrong shape is refused.
    for wrong in [
        json!({ "ok": true, "result": { "automationId": 7, "bounds": [0, 0, 1, 1] } }),
        json!({ "ok": true, "result": "btnOk" }),
        json!({ "ok": false, "result": { "automationId": "x", "bounds": [0, 0, 1, 1] },
                "error": { "code": "x", "category": "internal", "detail": "" } }),
    ] {
        assert!(!validator.is_valid(&wrong), "{wrong}");
    }
}

#[test]
fn json_rpc_faults_have_their_reserved_codes() {
    for (error, code) in [
        (
            JsonRpcError::parse_error("expected value at line 1"),
            -32700,
        ),
        (JsonRpcError::invalid_request("missing method"), -32600),
        (JsonRpcError::method_not_found("tools/destroy"), -32601),
        (JsonRpcError::unknown_tool("destroy"), -32602),
        (
            JsonRpcError::invalid_params("name must be a string"),
            -32602,
        ),
        (JsonRpcError::internal_error("worker crashed"), -32603),
    ] {
        assert_eq!(error.code().get(), code);
        let wire: Value = serde_json::to_value(&error).unwrap();
        assert_eq!(wire["code"], code);
        let back: JsonRpcError = serde_json::from_value(wire).unwrap();
        assert_eq!(back, error);
    }
    assert_eq!(JsonRpcCode::new(-32001).get(), -32001);
    let with_data = JsonRpcError::unknown_tool("x").with_data(json!({ "known": ["find"] }));
    assert_eq!(with_data.data().unwrap()["known"][0], "find");
}

#[test]
fn the_fast_writer_and_serde_agree() {
    let result = CallToolResult::from_envelope(&failure())
        .unwrap()
        .with_image(b"png", "image/png")
        .with_meta(json!({ "progressToken": 7 }).as_object().unwrap().clone());
    let fast: Value = serde_json::from_str(&result.to_json()).unwrap();
    let through_serde = serde_json::to_value(&result).unwrap();
    assert_eq!(fast, through_serde);
    assert_eq!(fast["_meta"]["progressToken"], 7);
}
