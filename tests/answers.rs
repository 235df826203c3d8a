//! Everything a guarantee tool answers, read the same by every reader: which contract a
//! document is comes from one rule (a top-level `schemaVersion` is a guarantee result, a
//! problem without `ok` a refusal, anything else an envelope), and `isError` mirrors it.

use agent_tool_result::Rule;
use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Refusal, RefusalKind};
use agent_tool_result::mcp::CallToolResult;
use agent_tool_result::validate::Validator;
use serde_json::{Value, json};

fn call_tool_result(structured: &Value, is_error: bool) -> String {
    let text = structured.to_string();
    json!({
        "content": [{ "type": "text", "text": text }],
        "structuredContent": structured,
        "isError": is_error,
    })
    .to_string()
}

fn rules(text: &str) -> Vec<(Rule, String)> {
    Validator::shared()
        .validate_call_tool_result_text(text)
        .violations()
        .iter()
        .map(|v| (v.rule(), v.pointer().to_owned()))
        .collect()
}

/// A guarantee result whose own fields include `ok` (or `error`, `result`) is still a
/// guarantee result to the validator, as to the typed reader: `isError` follows its decision.
#[test]
fn a_tool_field_named_like_an_envelope_member_does_not_change_the_contract() {
    for own in [
        json!({ "ok": false }),
        json!({ "ok": true }),
        json!({ "ok": false, "error": { "code": "x" } }),
        json!({ "result": null, "ok": "no" }),
    ] {
        let mut allowed = json!({ "schemaVersion": 1, "settlement": { "state": "committed" },
            "policy": { "decision": "allow" } });
        let mut denied = json!({ "schemaVersion": 1, "settlement": { "state": "not_started" },
            "policy": { "decision": "deny", "code": "contact_opted_out" } });
        for (target, is_error) in [(&mut allowed, false), (&mut denied, true)] {
            for (key, value) in own.as_object().unwrap() {
                target[key] = value.clone();
            }
            let text = call_tool_result(target, is_error);
            assert_eq!(rules(&text), [], "{text}");
            let read = CallToolResult::from_json(&text).unwrap();
            assert!(read.guarantee::<Value>().is_ok(), "{text}");
            assert!(read.answer::<Value>().unwrap().result().is_some(), "{text}");
            // The mirror breaks the same way for both readers.
            let flipped = call_tool_result(target, !is_error);
            assert_eq!(
                rules(&flipped),
                [(Rule::McpIsErrorMirror, "/isError".to_owned())],
                "{flipped}"
            );
            assert!(
                CallToolResult::from_json(&flipped)
                    .unwrap()
                    .guarantee::<Value>()
                    .is_err()
            );
        }
    }
}

/// Every refusal is a valid tools/call result with `isError: true`; with `isError: false`, or
/// when the problem names no refusal, both readers refuse it under the same rules.
#[test]
fn refusals_validate_and_mirror_is_error() {
    for kind in RefusalKind::ALL {
        let refusal = Refusal::new(kind, "why");
        let result = CallToolResult::from_refusal(&refusal);
        let text = result.to_json();
        assert_eq!(rules(&text), [], "{text}");
        assert!(
            Validator::shared().validate_any_text(&text).is_valid(),
            "{text}"
        );
        let structured: Value = serde_json::from_str(&refusal.to_json()).unwrap();
        assert!(
            Validator::shared()
                .validate_any_text(&refusal.to_json())
                .is_valid()
        );
        let flipped = call_tool_result(&structured, false);
        assert_eq!(
            rules(&flipped),
            [(Rule::McpIsErrorMirror, "/isError".to_owned())]
        );
        assert!(
            CallToolResult::from_json(&flipped)
                .unwrap()
                .answer::<Value>()
                .is_err()
        );
    }
    for not_a_refusal in [
        json!({ "type": "https://example.com/other", "title": "x", "status": 400 }),
        json!({ "type": "about:blank", "title": "Not Found", "status": 404 }),
        json!({ "type": "https://agentsfirst.ai/problems/idempotency-key-in-flight", "title": "x", "status": 400 }),
        json!({ "type": "about:blank", "title": 5, "status": 400 }),
    ] {
        let text = call_tool_result(&not_a_refusal, true);
        assert_eq!(
            rules(&text),
            [(Rule::RefusalShape, "/structuredContent".to_owned())],
            "{text}"
        );
        assert!(
            CallToolResult::from_json(&text)
                .unwrap()
                .answer::<Value>()
                .is_err()
        );
    }
}

/// A deny reads as a result, not a refusal, though both are `isError: true`.
#[test]
fn a_deny_is_a_result_and_a_refusal_is_not() {
    let denied = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
    let read =
        CallToolResult::from_json(&CallToolResult::from_guarantee(&denied).unwrap().to_json())
            .unwrap()
            .answer::<agent_tool_result::JsonObject>()
            .unwrap();
    assert_eq!(read.result(), Some(&denied));
    assert!(read.is_error());
}

/// The start of an object's members that breaks before anything is read, one for every way a
/// member name breaks (each raw control character, lone surrogate escapes high and low,
/// invalid and cut escapes), and the empty start that does not.
#[cfg(feature = "http")]
fn broken_name_leads() -> Vec<String> {
    // Every way a member name breaks.
    let broken_names: Vec<String> = (0u8..0x20)
        .map(|c| format!("\"t{}itle\"", char::from(c)))
        .chain(
            [
                r#""\ud800""#,
                r#""a\udc00""#,
                r#""\ud800\u0041""#,
                r#""\ud800\ud800""#,
                r#""\x41""#,
                r#""\u12G4""#,
                r#""\u00""#,
                r#""\'""#,
            ]
            .map(str::to_owned),
        )
        .collect();
    std::iter::once(String::new())
        .chain(broken_names.iter().map(|name| format!("{name}:0,")))
        .collect()
}

/// The validator's account of `text`, alone and carried in a `tools/call` result's text block:
/// a text that is not JSON, wherever its break, gets `well-formed-json` (alone, last, after at
/// most the one finding its contract's reader met before the break); well-formed JSON never.
#[cfg(feature = "http")]
fn validator_says_not_json_only_of_broken_text(text: &str) {
    use agent_tool_result::rule::Finding;

    let broken = serde_json::from_str::<Value>(text).is_err();
    let report = Validator::shared().validate_any_text(text);
    let rules: Vec<Rule> = report.violations().iter().map(Finding::rule).collect();
    if broken {
        assert_eq!(
            rules.last(),
            Some(&Rule::WellFormedJson),
            "{text}: {report:?}"
        );
        assert!(rules.len() <= 2, "{text}: {report:?}");
    } else {
        assert!(!rules.contains(&Rule::WellFormedJson), "{text}: {report:?}");
    }
    for is_error in [false, true] {
        let carried = json!({ "content": [{ "type": "text", "text": text }], "isError": is_error })
            .to_string();
        let report = Validator::shared().validate_call_tool_result_text(&carried);
        let not_json = report
            .violations()
            .iter()
            .any(|f| f.rule() == Rule::WellFormedJson);
        assert_eq!(not_json, broken, "{carried}: {report:?}");
    }
}

/// One document rule behind every reader: over every combination of the four routing names
/// (`schemaVersion`, `ok`, `type`, `status`), whole or broken after them (a bad value, a
/// cut-off text, a broken name) or before them (a name broken every way a name breaks: each
/// raw control character, lone surrogate escapes high and low, invalid and cut escapes), the
/// names before the first break route it and none after, and no reader takes a document the
/// rule gives another contract: the refusal reader (text and value), the guarantee reader,
/// the envelope reader, the MCP answer reader, and REST's classifier. A text that is not JSON
/// (a broken name or value, a cut, a number beyond a double, before or after the routing names)
/// gets the validator's `well-formed-json`, after at most the one finding its reader met first.
#[test]
#[cfg(feature = "http")]
fn every_reader_takes_only_what_the_one_rule_gives_it() {
    use agent_tool_result::Envelope;
    use agent_tool_result::document::{self, Document};
    use agent_tool_result::http::RestOutcome;
    use agent_tool_result::http::classify::classify_parts;

    let values = [
        ("schemaVersion", json!(1)),
        ("ok", json!(false)),
        ("type", json!("about:blank")),
        ("status", json!(400)),
    ];
    let leads = broken_name_leads();
    let tails = [
        "",
        r#","\udc00x":1"#,
        ",\"t\u{0}itle\":\"Bad Request\"",
        r#","\u12G4":1"#,
        r#","title":"Bad Request","detail":"d","result":null"#,
        r#","settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"c"}"#,
        r#","error":{"code":"a-b","category":"timeout","detail":"d"}"#,
        r#","bad":tru"#,
        r#","cut":"#,
        r#","huge":1e99999999999999999999"#,
    ];
    let mut checked = 0;
    for mask in 0..16u32 {
        let names: Vec<_> = (0..4)
            .filter(|bit| mask & (1 << bit) != 0)
            .map(|bit| &values[bit])
            .collect();
        let routed = |read: u32| {
            if read & 1 != 0 {
                Document::Guarantee
            } else if read & 0b1110 == 0b1100 {
                Document::Refusal
            } else {
                Document::Envelope
            }
        };
        let body: Vec<String> = names
            .iter()
            .map(|(name, value)| format!("{}:{value}", json!(name)))
            .collect();
        for tail in tails {
            for lead in &leads {
                // A broken name before the routing names: none of them is read.
                let read = if lead.is_empty() { mask } else { 0 };
                let expected = routed(read);
                let inner = format!("{lead}{}{tail}", body.join(","));
                let inner = inner.trim_start_matches(',');
                let closed = !tail.ends_with(':') && !tail.ends_with("tru");
                let text = if closed {
                    format!("{{{inner}}}")
                } else {
                    format!("{{{inner}")
                };
                let text = text.replace("{,", "{");
                checked += 1;
                assert_eq!(document::of(&text), expected, "{text}");
                validator_says_not_json_only_of_broken_text(&text);
                if let Ok(value) = serde_json::from_str::<Value>(&text) {
                    assert_eq!(document::of_value(&value), expected, "{text}");
                    if Refusal::from_value(&value).is_ok() {
                        assert_eq!(expected, Document::Refusal, "{text}");
                    }
                }
                if Refusal::from_json(&text).is_ok() {
                    assert_eq!(expected, Document::Refusal, "{text}");
                }
                if GuaranteeResult::<Value>::from_json(&text).is_ok() {
                    assert_eq!(expected, Document::Guarantee, "{text}");
                }
                if Envelope::<Value>::from_json(&text).is_ok() {
                    assert_eq!(expected, Document::Envelope, "{text}");
                }
                for is_error in [false, true] {
                    let carried = json!({
                        "content": [{ "type": "text", "text": text }],
                        "isError": is_error,
                    })
                    .to_string();
                    if let Ok(read) = CallToolResult::from_json(&carried) {
                        match read.answer::<Value>() {
                            Ok(agent_tool_result::guarantee::Answer::Refused(_)) => {
                                assert_eq!(expected, Document::Refusal, "{text}");
                            }
                            Ok(_) => assert_eq!(expected, Document::Guarantee, "{text}"),
                            Err(_) => {}
                        }
                    }
                }
                let mut headers = http::HeaderMap::new();
                headers.insert("content-type", "application/problem+json".parse().unwrap());
                // Over REST the body is an RFC 9457 problem, whose missing type and status
                // are about:blank and the status line: the rule then hangs on the rest.
                if let RestOutcome::Refused { .. } =
                    classify_parts(http::StatusCode::BAD_REQUEST, &headers, text.as_bytes())
                {
                    assert_eq!(read & 0b11, 0, "{text}");
                }
            }
        }
    }
    assert_eq!(checked, 16 * tails.len() * leads.len());
}

/// A number a double cannot hold (beyond about ±1.8e308, which I-JSON, RFC 7493, rules out
/// and `serde_json` refuses to read into a value) makes a document not well-formed, wherever
/// it stands: a field the contract defines, a value inside one, or a member the contract
/// passes over (a problem's extension member). Every reader refuses such a document, and
/// `validate_any_text` says `well-formed-json`, under each contract the one rule routes to.
#[test]
fn a_number_beyond_a_double_is_json_to_no_reader() {
    use agent_tool_result::Envelope;

    let numbers = [
        "1e99999999999999999999".to_owned(),
        "-1e400".to_owned(),
        "2e308".to_owned(),
        format!("1{}", "0".repeat(400)),
    ];
    let guarantee = r#""schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"impact":{"requested":1,"committed":1}"#;
    let problem = r#""type":"about:blank","title":"Service Unavailable","status":503,"detail":"d""#;
    let shapes = [
        r#"{"ok":true,"result":N}"#.to_owned(),
        r#"{"ok":true,"result":{"a":[1,{"b":N}]}}"#.to_owned(),
        format!(r#"{{{guarantee},"sent":N}}"#),
        format!(r#"{{{guarantee},"sent":{{"a":[N]}}}}"#),
        format!(r#"{{{problem},"retryAt":N}}"#),
        format!(r#"{{{problem},"extension":N}}"#),
        format!(r#"{{{problem},"extension":{{"a":[N]}}}}"#),
        format!(r#"{{"extension":N,{problem}}}"#),
    ];
    for shape in &shapes {
        for number in &numbers {
            let text = shape.replace('N', number);
            let not_json = |report: &agent_tool_result::validate::Report| {
                report
                    .violations()
                    .iter()
                    .any(|f| f.rule() == Rule::WellFormedJson)
            };
            let report = Validator::shared().validate_any_text(&text);
            assert!(not_json(&report), "{text}: {report:?}");
            assert!(Refusal::from_json(&text).is_err(), "{text}");
            assert!(
                GuaranteeResult::<Value>::from_json(&text).is_err(),
                "{text}"
            );
            assert!(Envelope::<Value>::from_json(&text).is_err(), "{text}");
            // Carried in a tools/call result, the same.
            let carried = json!({ "content": [{ "type": "text", "text": text }], "isError": true })
                .to_string();
            let report = Validator::shared().validate_call_tool_result_text(&carried);
            assert!(not_json(&report), "{carried}: {report:?}");
        }
    }
}
