//! The crate's keyed example (`examples/keyed_mcp_server.rs`, a stdio server): its guarantee
//! tool and its ordinary `#[tool]` in one rmcp router, and the calls every SDK's test makes of
//! it, with what each must answer.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::typescript::{KEY_MISSING, assert_refused};

/// The example's binary, built.
pub fn server() -> PathBuf {
    super::workspace_binary("examples/keyed_mcp_server")
}

/// Every answer the example gives: committed, its replay, a deny, a key missing, arguments
/// that do not fit, and the ordinary tool.
pub fn steps() -> Value {
    json!([
        [
            { "tool": "send_note", "arguments": { "to": "+15550199", "text": "hi", "idempotencyKey": "note-1" } },
            { "tool": "send_note", "arguments": { "to": "+15550100", "text": "hi", "idempotencyKey": "note-2" } },
            { "tool": "send_note", "arguments": { "to": "+15550199", "text": "hi" } },
            { "tool": "send_note", "arguments": { "to": "+15550199", "text": 5, "idempotencyKey": "note-3" } },
            { "tool": "note_limits", "arguments": {} },
        ],
        [
            { "tool": "send_note", "arguments": { "to": "+15550199", "text": "hi", "idempotencyKey": "note-1" } },
        ],
    ])
}

/// What an SDK read of [`steps`] must be: both tools listed, every answer the contract's.
pub fn check(tools: &Value, answers: &[Vec<Value>]) {
    let mut listed: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, ["note_limits", "send_note"]);
    let first = &answers[0];
    assert_eq!(first[0]["isError"], false, "{}", first[0]);
    let committed = &first[0]["structuredContent"];
    assert_eq!(committed["settlement"]["state"], "committed");
    assert!(committed["noteId"].as_str().unwrap().starts_with("note_"));
    assert_eq!(first[1]["isError"], true);
    assert_eq!(first[1]["structuredContent"]["policy"]["decision"], "deny");
    assert_refused(&first[2], KEY_MISSING, 400);
    assert_refused(&first[3], "about:blank", 400);
    assert_eq!(first[4]["isError"], false);
    assert_eq!(
        first[4]["structuredContent"]["result"],
        json!({ "maxText": 1600 })
    );
    // The same key answers the first result again.
    assert_eq!(answers[1][0], first[0]);
}
