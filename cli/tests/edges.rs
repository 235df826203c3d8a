//! The edges of a recorded session that the specs define and a capture from another tool
//! meets: a server-sent event whose message spans several `data:` lines, an empty batch, an
//! `outputSchema` that is not an object schema, a result of a session that negotiated MCP
//! 2026-07-28 without its `resultType`, and a result whose contract check stops early: each
//! gets the finding its spec calls for, and the same findings every run, at every `--jobs`.

use crate::common;

use std::fmt::Write as _;

use common::sessions::{ndjson, verdict};
use serde_json::{Value, json};

/// A session's opening: `initialize` negotiating `revision`, and a listing of tool `count`
/// whose `outputSchema` is `schema`.
fn opening(revision: &str, schema: &Value) -> Vec<Value> {
    vec![
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": revision, "capabilities": {},
            "clientInfo": { "name": "t", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "id": 0, "result": { "protocolVersion": revision,
            "capabilities": { "tools": {} }, "serverInfo": { "name": "s", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }),
        json!({ "jsonrpc": "2.0", "id": 1, "result": { "tools": [{
            "name": "count", "inputSchema": { "type": "object" }, "outputSchema": schema }] } }),
    ]
}

/// The object schema the tests' tool advertises: an envelope whose result counts.
fn schema() -> Value {
    json!({ "type": "object", "properties": { "ok": { "type": "boolean" } } })
}

/// A call of `count` and its answer, `result` (an envelope in both carriers when `None`).
fn call(id: u32, result: Option<Value>) -> [Value; 2] {
    let envelope = json!({ "ok": true, "result": { "n": id } });
    let result = result.unwrap_or_else(|| {
        json!({
            "content": [{ "type": "text", "text": envelope.to_string() }],
            "structuredContent": envelope,
        })
    });
    [
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "count", "arguments": {} } }),
        json!({ "jsonrpc": "2.0", "id": id, "result": result }),
    ]
}

/// The rule and pointer of each finding.
fn found(findings: &[Value]) -> Vec<(String, String)> {
    findings
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A Streamable HTTP capture whose events carry each message over several `data:` lines (the
/// message pretty-printed), with comments, `event:`, `id:` and `retry:` fields between them,
/// and a last event that ends without a blank line: each event is one message, its `data:`
/// lines joined by newlines, as the event stream format reads it; spread over a capture long
/// enough to span many chunks.
#[test]
fn server_sent_events_over_several_data_lines_are_one_message_each() {
    let mut messages = opening("2025-11-25", &schema());
    for id in 2..3000 {
        messages.extend(call(id, None));
    }
    let mut capture = String::new();
    for (n, message) in messages.iter().enumerate() {
        let pretty = serde_json::to_string_pretty(message).unwrap();
        let _ = writeln!(capture, ": keep-alive\nevent: message\nid: {n}");
        for (at, line) in pretty.lines().enumerate() {
            if at == 1 {
                capture.push_str("retry: 1000\n");
            }
            let _ = writeln!(capture, "data: {line}");
        }
        capture.push('\n');
    }
    // The last event, ended by the end of the capture.
    let [request, broken] = call(3000, Some(json!({ "content": "not an array" })));
    let _ = write!(capture, "data: {request}\n\ndata: {broken}");
    let (code, findings, summary) = verdict(&["--ndjson", "-"], &capture);
    assert_eq!(code, 1, "{findings:?}");
    assert_eq!(summary["documents"], 2998 + 1, "{summary}");
    assert_eq!(summary["invalid"], 1, "{summary}");
    // Its content is not an array, and it carries no structuredContent its tool's schema
    // asks for.
    assert_eq!(
        found(&findings),
        [
            ("mcp-result-shape".to_owned(), "/result".to_owned()),
            ("output-schema".to_owned(), "/result".to_owned())
        ],
        "{findings:?}"
    );
    // Each event is read at its first data line: the last one's is the capture's last.
    assert_eq!(
        findings[0]["line"].as_u64(),
        Some(capture.lines().count() as u64),
        "{findings:?}"
    );
}

/// An empty batch, `[]` (whitespace aside), is no JSON-RPC message: JSON-RPC 2.0 (section 6)
/// answers it as an invalid request, so it is `jsonrpc-message`, under every contract.
#[test]
fn an_empty_batch_is_an_invalid_jsonrpc_message() {
    for batch in ["[]", "[ ]", " [\t] "] {
        for contract in ["auto", "envelope", "call-tool-result", "guarantee"] {
            let (code, findings, _) = verdict(
                &["--ndjson", "--contract", contract, "-"],
                &format!("{batch}\n"),
            );
            assert_eq!(code, 1, "{batch:?} {contract}");
            assert_eq!(
                found(&findings),
                [("jsonrpc-message".to_owned(), String::new())],
                "{batch:?} {contract}: {findings:?}"
            );
        }
    }
}

/// An `outputSchema` is an object schema (`"type": "object"`): `true`, `{}` and an array
/// schema, JSON Schemas all, are findings of the listing, at the tool's schema.
#[test]
fn an_output_schema_that_is_not_an_object_schema_is_a_finding_of_the_listing() {
    for schema in [
        json!(true),
        json!({}),
        json!({ "type": "array" }),
        json!({ "type": ["object", "null"] }),
    ] {
        let mut messages = opening("2025-11-25", &schema);
        messages.extend(call(2, None));
        let (code, findings, _) = verdict(&["--ndjson", "-"], &ndjson(&messages));
        assert_eq!(code, 1, "{schema}");
        assert_eq!(
            found(&findings),
            [(
                "output-schema".to_owned(),
                "/result/tools/0/outputSchema".to_owned()
            )],
            "{schema}: {findings:?}"
        );
    }
}

/// Under MCP 2026-07-28, negotiated in `initialize` or named in a request's `_meta` (a
/// stateless request), a `tools/call` result says whether it is complete: one without
/// `resultType` is `mcp-result-shape`; under 2025-11-25 it needs none.
#[test]
fn a_2026_07_28_result_without_result_type_is_a_finding() {
    let envelope = json!({ "ok": true, "result": { "n": 2 } });
    let without = json!({
        "content": [{ "type": "text", "text": envelope.to_string() }],
        "structuredContent": envelope,
    });
    let mut with = without.clone();
    with["resultType"] = json!("complete");
    for (revision, result, expected) in [
        ("2026-07-28", &without, 1),
        ("2026-07-28", &with, 0),
        ("2025-11-25", &without, 0),
        ("2025-06-18", &without, 0),
    ] {
        let mut messages = opening(revision, &schema());
        messages.extend(call(2, Some(result.clone())));
        let (code, findings, _) = verdict(&["--ndjson", "-"], &ndjson(&messages));
        assert_eq!(
            found(&findings),
            vec![("mcp-result-shape".to_owned(), "/result".to_owned()); expected],
            "{revision} {result}: {findings:?}"
        );
        assert_eq!(code, i32::from(expected == 1));
    }
    // A result naming `resultType` and no other member of a result: it says it is complete
    // (what else it lacks is another finding).
    let mut messages = opening("2026-07-28", &schema());
    messages.extend(call(2, Some(json!({ "resultType": "complete" }))));
    let (_, findings, _) = verdict(&["--ndjson", "-"], &ndjson(&messages));
    assert!(
        found(&findings)
            .iter()
            .all(|(rule, _)| rule != "mcp-result-shape"),
        "{findings:?}"
    );
    // Stateless: no `initialize`, the revision in each request's `_meta`.
    let mut messages = opening("2026-07-28", &schema()).split_off(2);
    let [mut request, _] = call(2, None);
    request["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    messages.extend([
        request,
        json!({ "jsonrpc": "2.0", "id": 2, "result": without }),
    ]);
    let (code, findings, _) = verdict(&["--ndjson", "-"], &ndjson(&messages));
    assert_eq!(code, 1);
    assert_eq!(
        found(&findings),
        [("mcp-result-shape".to_owned(), "/result".to_owned())],
        "{findings:?}"
    );
}

/// The results a differential fuzzer found judged differently from run to run (a string
/// `isError` beside a valid `structuredContent` sometimes also drew "carries no
/// structuredContent"), and their family (every member whose refusal stops the contract's
/// check): one set of findings over 200 runs at `--jobs` 1, 2 and 4, none of them about the
/// schema the structuredContent keeps.
#[test]
fn results_whose_check_stops_early_get_one_verdict_every_run() {
    let envelope = json!({ "ok": true, "result": { "n": 2 } });
    let stops = [
        ("isError", json!("true")),
        ("isError", json!(1)),
        ("content", json!("text")),
        ("content", json!([{ "type": 5 }])),
        ("_meta", json!([])),
        ("resultType", json!(7)),
    ];
    let mut messages = opening("2025-11-25", &schema());
    // Many calls before them, so that some are read ahead with their requests and some not.
    for id in 2..120 {
        messages.extend(call(id, None));
    }
    for (at, (member, value)) in stops.iter().enumerate() {
        let mut result = json!({
            "content": [{ "type": "text", "text": envelope.to_string() }],
            "structuredContent": envelope,
        });
        result[*member] = value.clone();
        let id = 1000 + u32::try_from(at).unwrap();
        messages.extend(call(id, Some(result)));
        messages.extend(call(id + 100, None));
    }
    let input = ndjson(&messages);
    let mut first: Option<Vec<Value>> = None;
    for jobs in ["1", "2", "4"] {
        for _ in 0..200 {
            let (_, findings, _) = verdict(&["--ndjson", "--jobs", jobs, "-"], &input);
            assert!(
                findings.iter().all(|f| f["rule"] != "output-schema"),
                "--jobs {jobs}: {findings:?}"
            );
            match &first {
                None => first = Some(findings),
                Some(first) => assert_eq!(&findings, first, "--jobs {jobs}"),
            }
        }
    }
    let flagged: std::collections::BTreeSet<String> = first
        .unwrap()
        .iter()
        .map(|f| f["callId"].as_str().unwrap().to_owned())
        .collect();
    let stopped = (1000..1000 + stops.len())
        .map(|id| id.to_string())
        .collect();
    assert_eq!(flagged, stopped);
}

/// Where `ok` stands among a line's members changes nothing (`atr` tries a line that starts
/// with `ok` as an envelope first): a JSON-RPC response that also has an `ok` member is read
/// as a message with `ok` first as with `ok` last, and an envelope, a broken envelope and a
/// guarantee result whose tool field is `ok` get the same findings either way, under
/// `--contract auto` and `--contract envelope`, in one session and line by line.
#[test]
fn a_line_gets_one_verdict_wherever_its_ok_member_stands() {
    let result = json!({
        "content": [{ "type": "text", "text": r#"{"ok":true,"result":{"n":2}}"# }],
        "structuredContent": { "ok": true, "result": { "n": 2 } },
    });
    let guarantee = r#""schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"impact":{"requested":1,"committed":1}"#;
    // Each line's members after `ok`; the line is written with `ok` first, then last.
    let rest = [
        format!(r#""jsonrpc":"2.0","id":2,"result":{result}"#),
        r#""result":{"n":1}"#.to_owned(),
        r#""result":{"n":1},"command":"find""#.to_owned(),
        r#""error":{"code":"x","category":"Timeout","detail":"d"}"#.to_owned(),
        guarantee.to_owned(),
    ];
    let request = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": { "name": "count", "arguments": {} } });
    let mut head = ndjson(&opening("2025-11-25", &schema()));
    writeln!(head, "{request}").unwrap();
    for ok in ["true", "false", r#""yes""#] {
        let (mut first, mut last) = (String::new(), String::new());
        for r in &rest {
            writeln!(first, "{{\"ok\":{ok},{r}}}").unwrap();
            writeln!(last, "{{{r},\"ok\":{ok}}}").unwrap();
        }
        for contract in ["auto", "envelope"] {
            let args = ["--ndjson", "--contract", contract, "-"];
            let (code_first, findings_first, _) = verdict(&args, &format!("{head}{first}"));
            let (code_last, findings_last, _) = verdict(&args, &format!("{head}{last}"));
            assert_eq!(code_first, code_last, "ok {ok}, --contract {contract}");
            // The same findings on each line (in document order, so the order of a line's
            // findings follows its members').
            let placed = |findings: &[Value]| -> Vec<(u64, String, String)> {
                let mut placed: Vec<_> = findings
                    .iter()
                    .map(|f| {
                        let (rule, pointer) = found(std::slice::from_ref(f)).remove(0);
                        (f["line"].as_u64().unwrap(), rule, pointer)
                    })
                    .collect();
                placed.sort();
                placed
            };
            assert_eq!(
                placed(&findings_first),
                placed(&findings_last),
                "ok {ok}, --contract {contract}"
            );
            // The response is read as a message, never as an envelope with a `jsonrpc` member.
            assert!(
                findings_first
                    .iter()
                    .all(|f| !f["message"].as_str().unwrap().contains("`jsonrpc`")),
                "{findings_first:?}"
            );
        }
    }
}
