//! Projecting an envelope into MCP `CallToolResult` JSON, side by side with serializing the
//! envelope alone and with the route through `rmcp`'s `CallToolResult::structured`.
//!
//! Run with `cargo bench -p agent-tool-result-tests --bench mcp`. The envelope is written twice by design (text block and
//! `structuredContent`); the projection serializes it once and reuses the bytes.

use agent_tool_result::mcp::CallToolResult;
use agent_tool_result::{Envelope, Warning, WarningCode};
use divan::{Bencher, black_box};
use serde::Serialize;

fn main() {
    divan::main();
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Element {
    automation_id: String,
    name: String,
    class_name: String,
    bounds: [i32; 4],
    enabled: bool,
}

/// A typical ~1 KB success.
fn envelope() -> Envelope<serde_json::Value> {
    let elements: Vec<Element> = ["OK", "Cancel", "Apply", "Help", "Save as", "Print", "Close"]
        .iter()
        .enumerate()
        .map(|(i, name)| Element {
            automation_id: format!("btn{}", name.replace(' ', "")),
            name: (*name).into(),
            class_name: "Button".into(),
            bounds: [400 + 90 * i32::try_from(i).unwrap(), 310, 80, 24],
            enabled: i != 3,
        })
        .collect();
    let result = serde_json::json!({ "window": "Untitled - Notepad", "elements": elements });
    let envelope = Envelope::success(result)
        .with_session("s-4f2a9c1e")
        .with_warning(Warning::new(
            WarningCode::TREE_TRUNCATED,
            "Tree clipped at 500 nodes; raise maxNodes for a \"deeper\" search.",
        ));
    let size = envelope.to_json().unwrap().len();
    assert!((800..1400).contains(&size), "~1 KB: {size}");
    envelope
}

#[divan::bench]
fn envelope_serialize(bencher: Bencher) {
    let envelope = envelope();
    bencher.bench_local(|| black_box(&envelope).to_json().unwrap());
}

#[divan::bench]
fn call_tool_result_json(bencher: Bencher) {
    let envelope = envelope();
    bencher.bench_local(|| {
        CallToolResult::from_envelope(black_box(&envelope))
            .unwrap()
            .to_json()
    });
}

#[divan::bench]
fn rmcp_structured_json(bencher: Bencher) {
    let envelope = envelope();
    bencher.bench_local(|| {
        let value = serde_json::to_value(black_box(&envelope)).unwrap();
        let mut result = rmcp::model::CallToolResult::structured(value);
        result.is_error = Some(!envelope.is_ok());
        serde_json::to_string(&result).unwrap()
    });
}
