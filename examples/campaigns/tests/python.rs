//! Every answer of the example servers read through the official Python MCP SDK client (`mcp`,
//! pinned in `tests/python/requirements.txt`), which validates `structuredContent` against the
//! tool's advertised `outputSchema` and raises on a mismatch: the campaign service over
//! Streamable HTTP (allow, defer, deny, key refusals, bad arguments, a mismatch and a replay),
//! and the crate's keyed example over stdio.
//!
//! Needs Python 3.10 or newer with venv and pip; the SDK is installed in a virtual environment
//! of the tests' own, from the package index, the first time.

use crate::support;

use serde_json::json;
use support::typescript::{KEY_INVALID, KEY_MISMATCH, KEY_MISSING, assert_refused, sms};
use support::{Scratch, Service, TOKEN, numbers};

const OPTED_OUT: &str = "+15550100000";

#[test]
fn the_python_sdk_reads_every_answer_of_a_guarantee_tool() {
    let scratch = Scratch::new("python");
    let flags = [
        "--cap",
        "2",
        "--window-secs",
        "3600",
        "--opt-out",
        OPTED_OUT,
    ];
    let service = Service::start(scratch.db(), &flags);
    let steps = json!([
        [
            sms("+15550100001", "py-sms-1"),
            sms(OPTED_OUT, "py-deny"),
            { "tool": "send_campaign_batch", "arguments": { "recipients": numbers(4), "message": "Winter sale", "idempotencyKey": "py-batch" } },
            { "tool": "send_sms", "arguments": { "to": "+15550100003", "body": "hi" } },
            sms("+15550100003", ""),
            sms("abc", "py-bad-number"),
        ],
        [
            { "tool": "send_sms", "arguments": { "to": "+15550100001", "body": "Another text", "idempotencyKey": "py-sms-1" } },
            sms("+15550100001", "py-sms-1"),
            { "tool": "lookup_sms", "arguments": { "messageId": "msg_none" } },
            { "tool": "opt_out", "arguments": { "phone": "+15550100009", "idempotencyKey": "py-opt-out" } },
        ],
    ]);
    let url = format!("{}/mcp", service.base);
    let (tools, answers) = support::python::run_client(&["http", &url, TOKEN], &[], &steps);
    assert_eq!(
        tools,
        json!([
            "lookup_marketing_campaigns",
            "lookup_opt_out",
            "lookup_sms",
            "opt_out",
            "send_campaign_batch",
            "send_sms"
        ])
    );
    let first = &answers[0];
    assert_eq!(first[0]["isError"], false);
    assert_eq!(
        first[0]["structuredContent"]["settlement"]["state"],
        "committed"
    );
    assert_eq!(first[1]["isError"], true);
    assert_eq!(first[1]["structuredContent"]["policy"]["decision"], "deny");
    assert_eq!(first[2]["isError"], false);
    assert_eq!(first[2]["structuredContent"]["policy"]["decision"], "defer");
    assert_refused(&first[3], KEY_MISSING, 400);
    assert_refused(&first[4], KEY_INVALID, 400);
    assert_refused(&first[5], "about:blank", 400);
    assert_refused(&answers[1][0], KEY_MISMATCH, 422);
    assert_eq!(
        answers[1][1], first[0],
        "the same key replays the first answer"
    );
    // A lookup that finds nothing: its envelope, ok false, which its output schema admits.
    assert_eq!(answers[1][2]["structuredContent"]["ok"], false);
    // A tool with an operation of its own: committed, its confirmation sent.
    let opted = &answers[1][3];
    assert_eq!(opted["isError"], false, "{opted}");
    assert_eq!(opted["structuredContent"]["impact"]["committed"], 1);
    assert!(opted["structuredContent"]["optOutId"].is_string());
}

#[test]
fn the_python_sdk_reads_every_answer_of_the_keyed_example() {
    let scratch = Scratch::new("python-keyed");
    let ledger = scratch.db().with_extension("notes.db");
    let server = support::keyed::server();
    let (tools, answers) = support::python::run_client(
        &["stdio", server.to_str().unwrap()],
        &[("NOTES_LEDGER", ledger.to_str().unwrap())],
        &support::keyed::steps(),
    );
    support::keyed::check(&tools, &answers);
}
