//! `atr validate` on what MCP traces hold: JSON-RPC messages, one a line, as the TypeScript
//! and the Python SDK write them (their members in each SDK's order), and a single response
//! wrapping a tool result. Tool results are checked, under every `--contract`, with their
//! findings placed in the message; requests, notifications, errors and other methods' results
//! are passed over and counted as such.

use crate::common;

use common::run;
use serde_json::Value;

const TRACES: [&str; 2] = [
    "cli/tests/fixtures/jsonrpc/typescript-sdk.ndjson",
    "cli/tests/fixtures/jsonrpc/python-sdk.jsonl",
];

/// The findings and the summary of `--format json`.
fn verdict(args: &[&str]) -> (i32, Vec<Value>, Value) {
    let out = run(args, None);
    let mut lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary = lines.pop().unwrap()["summary"].clone();
    (out.code, lines, summary)
}

#[test]
fn each_sdks_trace_has_its_tool_results_checked_and_the_rest_passed_over() {
    for trace in TRACES {
        for contract in ["auto", "call-tool-result", "guarantee", "envelope"] {
            let (code, findings, summary) = verdict(&[
                "validate",
                "--format",
                "json",
                "--contract",
                contract,
                trace,
            ]);
            assert_eq!(code, 1, "{trace} {contract}");
            // Four tools/call results: a success, a failure, a deny, and a failure whose
            // isError says false; eleven requests and notifications, an error, and the
            // results of initialize, tools/list and ping.
            assert_eq!(
                summary,
                serde_json::json!({"documents": 4, "valid": 3, "invalid": 1, "lints": 0,
                    "ioErrors": 0, "passedOver": 13}),
                "{trace} {contract}"
            );
            assert_eq!(findings.len(), 1, "{findings:?}");
            let finding = &findings[0];
            assert_eq!(finding["rule"], "mcp-is-error-mirror");
            assert_eq!(finding["pointer"], "/result/isError");
            assert_eq!(finding["line"], 15);
            // The column is where `false` stands on that line.
            let text = std::fs::read_to_string(common::root().join(trace)).unwrap();
            let line = text.lines().nth(14).unwrap();
            let column = usize::try_from(finding["column"].as_u64().unwrap()).unwrap();
            assert!(
                line[column - 1..].starts_with("false"),
                "{line} at {column}"
            );
        }
    }
}

#[test]
fn a_wrapped_response_is_read_as_its_tool_result() {
    let wrapped = "cli/tests/fixtures/jsonrpc/wrapped-deny.json";
    for contract in ["auto", "call-tool-result", "guarantee"] {
        let out = run(&["validate", "--contract", contract, wrapped], None);
        assert_eq!(out.code, 0, "{contract}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stdout
                .ends_with("1 document checked: 1 valid, 0 invalid, 0 lints\n"),
            "{}",
            out.stdout
        );
    }
    let broken = "cli/tests/fixtures/jsonrpc/wrapped-not-mirrored.json";
    let out = run(&["validate", broken], None);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.starts_with(&format!(
            "{broken}:20:16: error[mcp-is-error-mirror] /result/isError:"
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn every_kind_of_message_is_told_apart_on_standard_input() {
    let envelope = r#"{"ok":true,"result":{"n":1}}"#;
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
        // A tool result with only structuredContent (the envelope is there: valid), and one
        // with only isError (no envelope anywhere: invalid): both are tool results.
        r#"{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"ok":true}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"isError":false}}"#,
        // Not a message: checked as the document it is.
        envelope,
    ];
    let input = lines.join("\n");
    let out = common::atr()
        .args(["validate", "--format", "json", "--ndjson", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(summary["summary"]["documents"], 3, "{text}");
    assert_eq!(summary["summary"]["valid"], 2, "{text}");
    assert_eq!(summary["summary"]["passedOver"], 4, "{text}");
    let lines_found: Vec<u64> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok()?["line"].as_u64())
        .collect();
    assert_eq!(lines_found, [6], "{text}");
}
