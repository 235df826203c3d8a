//! `atr validate` on recorded MCP sessions: sessions the real SDK clients had with the keyed
//! example (`fixtures/sessions/`, recorded with `atr record`), whole and with results broken on
//! purpose; JSON-RPC framing, family by family, under every `--contract`; each `tools/call`
//! result checked in its session as `atr` checks it bare; SARIF naming the call; a Streamable
//! HTTP capture's server-sent events read as its messages.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use common::atr;
use common::sessions::{
    answers, call_id, calls, ndjson, nth_call_with, response, restructure, rules_by_call, session,
    validates_whole, verdict,
};
use serde_json::{Value, json};

const SESSIONS: [&str; 3] = [
    "cli/tests/fixtures/sessions/typescript-v1.ndjson",
    "cli/tests/fixtures/sessions/typescript-v2.ndjson",
    "cli/tests/fixtures/sessions/python.ndjson",
];

const CONTRACTS: [&str; 4] = ["auto", "call-tool-result", "guarantee", "envelope"];

#[test]
fn each_recorded_session_validates_and_every_result_is_held_to_its_advertised_schema() {
    for path in SESSIONS {
        // Five calls and a replay; both tools advertise an outputSchema.
        validates_whole(path, 6);
    }
}

/// In each recorded session, five results broken on purpose, each another way: a success
/// whose structuredContent breaks its tool's outputSchema (and nothing else), a success of the
/// other tool that carries no structuredContent (its text block still carries the envelope),
/// two error results whose structuredContent breaks the schema (strict clients check error
/// results too), and a null result. `atr validate` finds those
/// five calls and no other, names each one's id and tool, and finds the schema's breaks as
/// `output-schema` under `/result/structuredContent`.
#[test]
fn results_broken_on_purpose_are_found_exactly_with_their_calls() {
    for path in SESSIONS {
        let mut messages = session(path);
        let tools = calls(&messages);
        let committed = call_id(&messages, "send_note", "note-1");
        let limits = call_id(&messages, "note_limits", "");
        let denied = call_id(&messages, "send_note", "note-2");
        let refused = call_id(&messages, "send_note", "note-3");
        let replayed = nth_call_with(&messages, "note-1", 1);
        restructure(&mut response(&mut messages, &committed)["result"], |s| {
            s["noteId"] = json!(42);
        });
        let result = &mut response(&mut messages, &limits)["result"];
        result.as_object_mut().unwrap().remove("structuredContent");
        restructure(&mut response(&mut messages, &denied)["result"], |s| {
            s["policy"]["decision"] = json!("refuse");
        });
        restructure(&mut response(&mut messages, &refused)["result"], |s| {
            s["title"] = json!(5);
        });
        response(&mut messages, &replayed)["result"] = Value::Null;

        let (code, findings, summary) = verdict(&["--ndjson", "-"], &ndjson(&messages));
        assert_eq!(code, 1, "{path}");
        assert_eq!(summary["documents"], 6, "{path}: {summary}");
        assert_eq!(summary["invalid"], 5, "{path}: {summary}");
        let found = rules_by_call(&findings, &tools);
        let broken: BTreeSet<&String> = [&committed, &limits, &denied, &refused, &replayed].into();
        assert_eq!(
            found.keys().collect::<BTreeSet<_>>(),
            broken,
            "{path}: {findings:?}"
        );
        for id in [&committed, &limits, &denied, &refused] {
            assert!(
                found[id].contains("output-schema"),
                "{path} {id}: {found:?}"
            );
        }
        // Only the schema is broken where only the schema was changed.
        for id in [&committed, &limits] {
            assert_eq!(found[id].len(), 1, "{path} {id}: {found:?}");
        }
        assert_eq!(
            found[&replayed],
            BTreeSet::from(["mcp-result-shape".to_owned()])
        );
        let schema_breaks: Vec<&Value> = findings
            .iter()
            .filter(|f| f["rule"] == "output-schema" && f["callId"] == committed.as_str())
            .collect();
        assert_eq!(
            schema_breaks[0]["pointer"],
            "/result/structuredContent/noteId"
        );
        assert!(
            schema_breaks[0]["message"]
                .as_str()
                .unwrap()
                .contains("schema rule `type`"),
            "{schema_breaks:?}"
        );
    }
}

/// Every `tools/call` result of a session (whole, and with results broken) gets from
/// `atr validate` on the session what `atr validate --contract call-tool-result` gives it
/// bare, but for the session's own check, the advertised schema.
#[test]
fn a_result_in_its_session_and_the_bare_result_agree() {
    for path in SESSIONS {
        let whole = session(path);
        let mut broken = whole.clone();
        let denied = call_id(&broken, "send_note", "note-2");
        restructure(&mut response(&mut broken, &denied)["result"], |s| {
            s["policy"]["decision"] = json!("refuse");
            s["extra"] = json!(1);
        });
        let limits = call_id(&broken, "note_limits", "");
        response(&mut broken, &limits)["result"]["isError"] = json!(true);
        for messages in [whole, broken] {
            let (_, findings, _) = verdict(&["--ndjson", "-"], &ndjson(&messages));
            for (id, _) in calls(&messages) {
                let result = &messages.iter().find(|m| answers(m, &id)).unwrap()["result"];
                let (_, bare, _) = verdict(
                    &["--contract", "call-tool-result", "-"],
                    &result.to_string(),
                );
                let bare: BTreeSet<(String, String)> = bare
                    .iter()
                    .map(|f| {
                        (
                            f["rule"].to_string(),
                            format!("/result{}", f["pointer"].as_str().unwrap()),
                        )
                    })
                    .collect();
                let in_session: BTreeSet<(String, String)> = findings
                    .iter()
                    .filter(|f| f["callId"] == id.as_str() && f["rule"] != "output-schema")
                    .map(|f| {
                        (
                            f["rule"].to_string(),
                            f["pointer"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
                assert_eq!(in_session, bare, "{path} call {id}");
            }
        }
    }
}

/// Every way a line breaks JSON-RPC 2.0 gets one `jsonrpc-message` finding, and every valid
/// message none, the same under every `--contract`: the verdict is the line's.
#[test]
fn framing_is_judged_family_by_family_the_same_under_every_contract() {
    let broken = [
        // Both, or neither, of result and error.
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":5,"isError":"yes"},"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":2}"#,
        // A method with a result or an error.
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"x","error":{"code":1,"message":"x"}}"#,
        // No id on a response; ids of the wrong type.
        r#"{"jsonrpc":"2.0","result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":{"n":1},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
        // The version.
        r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
        r#"{"jsonrpc":null,"id":1,"result":{}}"#,
        // A member twice, spelt out or escaped.
        r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"r\u0065sult":{}}"#,
        // The method's, the params' and the error's types.
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"p"}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"c","message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
    ];
    let valid = [
        r#"{"jsonrpc":"2.0","id":2,"result":null}"#,
        r#"{"\u006asonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
    ];
    for line in broken {
        let mut seen = None;
        for contract in CONTRACTS {
            let (code, findings, _) = verdict(&["--ndjson", "--contract", contract, "-"], line);
            assert_eq!(code, 1, "{line} {contract}");
            assert!(
                findings.iter().any(|f| f["rule"] == "jsonrpc-message"),
                "{line} {contract}: {findings:?}"
            );
            assert_eq!(
                seen.get_or_insert_with(|| findings.clone()),
                &findings,
                "{line}"
            );
        }
    }
    for line in valid {
        for contract in CONTRACTS {
            let (code, findings, summary) =
                verdict(&["--ndjson", "--contract", contract, "-"], line);
            assert_eq!(
                (code, findings.len()),
                (2, 0),
                "{line} {contract}: {findings:?}"
            );
            assert!(
                summary["passedOver"].as_u64().unwrap() >= 1,
                "{line}: {summary}"
            );
        }
    }
    // A batch is read element by element: an element that is no message is one finding,
    // and a tool result in it is paired with its call.
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}},{"ok":true}]
[{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":"yes"}}]"#;
    let (_, findings, summary) = verdict(&["--ndjson", "-"], batch);
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == "jsonrpc-message" && f["line"] == 1)
    );
    assert!(
        findings
            .iter()
            .any(|f| f["line"] == 2 && f["tool"] == "t" && f["callId"] == "1")
    );
    assert_eq!(summary["documents"], 2, "{summary}");
}

/// A `tools/call` result is one by its request, not its shape: a null or non-object result of
/// a call is a finding, and another method's result that looks like a tool result is passed
/// over.
#[test]
fn results_are_known_by_their_requests() {
    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":[1]}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":5,"isError":"yes"}}"#,
        r#"{"jsonrpc":"2.0","id":"3","method":"tools/call","params":{"name":"u"}}"#,
        r#"{"jsonrpc":"2.0","id":"3","result":{}}"#,
        // No request for it: a tool result by its members, whatever their values.
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":null,"structuredContent":null}}"#,
        r#"{"jsonrpc":"2.0","id":10,"result":{"isError":null}}"#,
        r#"{"jsonrpc":"2.0","id":11,"result":{"tools":[]}}"#,
    ]
    .join("\n");
    let (code, findings, summary) = verdict(&["--ndjson", "-"], &session);
    assert_eq!(code, 1);
    let by_line: BTreeMap<u64, (String, String)> = findings
        .iter()
        .map(|f| {
            (
                f["line"].as_u64().unwrap(),
                (
                    f["rule"].as_str().unwrap().to_owned(),
                    f["callId"].as_str().unwrap_or_default().to_owned(),
                ),
            )
        })
        .collect();
    assert_eq!(by_line[&2], ("mcp-result-shape".into(), "1".into()));
    assert_eq!(by_line[&4], ("mcp-result-shape".into(), "2".into()));
    assert!(
        !by_line.contains_key(&6),
        "another method's result: {findings:?}"
    );
    // The string id "3" is another call than the number 3.
    assert_eq!(by_line[&8].1, "\"3\"");
    assert!(
        by_line.contains_key(&9) && by_line.contains_key(&10),
        "{findings:?}"
    );
    assert!(!by_line.contains_key(&11), "{findings:?}");
    assert_eq!(summary["documents"], 5, "{summary}");
}

#[test]
fn sarif_names_the_call_of_a_finding_in_a_session() {
    let mut messages = session(SESSIONS[0]);
    let committed = call_id(&messages, "send_note", "note-1");
    restructure(&mut response(&mut messages, &committed)["result"], |s| {
        s["noteId"] = json!(42);
    });
    let out = atr()
        .args(["validate", "--format", "sarif", "--ndjson", "-"])
        .write_stdin(ndjson(&messages))
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["ruleId"], "output-schema");
    assert_eq!(
        results[0]["properties"],
        json!({ "callId": committed, "tool": "send_note" })
    );
}

/// A Streamable HTTP capture (server-sent events: `event:`, `id:`, `data:` lines and blank
/// ones) gets the verdict its messages get as NDJSON.
#[test]
fn a_streamable_http_capture_is_read_by_its_data_frames() {
    let mut messages = session(SESSIONS[0]);
    let limits = call_id(&messages, "note_limits", "");
    restructure(&mut response(&mut messages, &limits)["result"], |s| {
        s["result"]["maxText"] = json!("1600");
    });
    let sse = messages
        .iter()
        .enumerate()
        .fold(String::new(), |mut text, (n, m)| {
            let _ = write!(text, "event: message\nid: {n}\ndata: {m}\n\n");
            text
        });
    let (code, findings, summary) = verdict(&["--ndjson", "-"], &sse);
    let (_, plain, plain_summary) = verdict(&["--ndjson", "-"], &ndjson(&messages));
    assert_eq!(code, 1);
    assert_eq!(summary, plain_summary);
    let rules = |findings: &[Value]| -> Vec<(String, String)> {
        findings
            .iter()
            .map(|f| (f["rule"].to_string(), f["callId"].to_string()))
            .collect()
    };
    assert_eq!(rules(&findings), rules(&plain));
}

/// A later listing replaces a tool's schema: every result after it is held to the new schema
/// and none before it, however far the reading threads ran ahead of the pairing (the session
/// spans many chunks, so results are checked ahead under the schemas published so far).
#[test]
fn a_later_listing_replaces_the_schema_for_the_results_after_it() {
    let listing = |id: u32, maximum: u32| {
        json!({ "jsonrpc": "2.0", "id": id, "result": { "tools": [{
            "name": "count",
            "inputSchema": { "type": "object" },
            "outputSchema": {
                "type": "object",
                "properties": { "ok": { "type": "boolean" }, "result": {
                    "type": "object",
                    "properties": { "n": { "type": "integer", "maximum": maximum } },
                } },
            },
        }] } })
    };
    let call = |id: u32, n: u32| {
        let envelope = json!({ "ok": true, "result": { "n": n } });
        [
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": { "name": "count", "arguments": {} } }),
            json!({ "jsonrpc": "2.0", "id": id, "result": {
                "content": [{ "type": "text", "text": envelope.to_string() }],
                "structuredContent": envelope,
            } }),
        ]
    };
    let mut messages = vec![
        json!({ "jsonrpc": "2.0", "id": 0, "method": "tools/list" }),
        listing(0, 1000),
    ];
    // Enough calls to span several chunks, every one within both schemas but for n = 500,
    // which only the later one refuses.
    for id in 1..4000 {
        messages.extend(call(id, if id % 400 == 0 { 500 } else { 7 }));
    }
    messages.push(json!({ "jsonrpc": "2.0", "id": 9000, "method": "tools/list" }));
    messages.push(listing(9000, 100));
    for id in 9001..9011 {
        messages.extend(call(id, 500));
    }
    let (code, findings, summary) = verdict(&["--ndjson", "--jobs", "2", "-"], &ndjson(&messages));
    assert_eq!(code, 1);
    assert_eq!(summary["documents"], 3999 + 10, "{summary}");
    let flagged: BTreeSet<u64> = findings
        .iter()
        .map(|f| f["callId"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(flagged, (9001..9011).collect(), "{findings:?}");
    for finding in &findings {
        assert_eq!(finding["rule"], "output-schema", "{finding}");
        assert_eq!(
            finding["pointer"], "/result/structuredContent/result/n",
            "{finding}"
        );
        assert!(
            finding["message"]
                .as_str()
                .unwrap()
                .contains("schema rule `maximum`"),
            "{finding}"
        );
    }
}
