//! Bad input never panics; each kind gets an error that names its rule and place.

use agent_tool_result::validate::Validator;
use agent_tool_result::{Envelope, Rule};
use serde_json::Value;

type Untyped = Envelope<Value>;

#[test]
fn a_ten_megabyte_detail_parses() {
    let detail = "x".repeat(10 * 1024 * 1024);
    let text = format!(
        r#"{{"ok":false,"error":{{"code":"unhandled","category":"internal","detail":"{detail}"}}}}"#
    );
    let envelope = Untyped::from_json(&text).unwrap();
    assert_eq!(envelope.error().unwrap().detail().len(), detail.len());
}

#[test]
fn a_huge_value_is_not_echoed_whole_in_findings() {
    let text = format!(
        r#"{{"ok":false,"error":{{"code":"{}","category":"internal","detail":""}}}}"#,
        "X".repeat(1 << 20)
    );
    let value: Value = serde_json::from_str(&text).unwrap();
    let report = Validator::shared().validate(&value);
    assert_eq!(report.violations()[0].rule(), Rule::CodeKebabCase);
    assert!(report.violations()[0].message().len() < 400);
    let err = Untyped::from_json(&text).unwrap_err();
    assert!(err.message().len() < 400, "{}", err.message().len());
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn deep_nesting_is_an_error_at_every_level() {
    let deep = nested(10_000);
    for text in [
        format!(r#"{{"ok":true,"result":{{"a":{deep}}}}}"#),
        format!(
            r#"{{"ok":false,"error":{{"code":"a","category":"internal","detail":"","lastObservation":{{"a":{deep}}}}}}}"#
        ),
        format!(
            r#"{{"ok":false,"error":{{"code":"a","category":"internal","detail":"","partialResult":{{"a":{deep}}}}}}}"#
        ),
    ] {
        let err = Untyped::from_json(&text).unwrap_err();
        assert_eq!(err.rule(), Rule::NestingLimit, "{err}");
        assert!(
            err.message().contains("nests deeper than 127 levels"),
            "{err}"
        );
    }
    // Where the contract wants something else first, that rule is reported, still without
    // descending 10,000 levels.
    let err = Untyped::from_json(&deep).unwrap_err();
    assert_eq!(err.rule(), Rule::EnvelopeIsObject, "{err}");
    let err = Untyped::from_json(&format!(r#"{{"ok":true,"warnings":{deep}}}"#)).unwrap_err();
    assert_eq!(
        (err.rule(), err.pointer()),
        (Rule::FieldType, "/warnings/0"),
        "{err}"
    );
    let objects = format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    let err = Untyped::from_json(&objects).unwrap_err();
    assert_eq!(err.rule(), Rule::NoUnknownFields, "{err}");
    // Text that is not JSON (the innermost member has no value) is refused as such, though
    // the reader met an unknown field first.
    let broken = format!("{}{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    let err = Untyped::from_json(&broken).unwrap_err();
    assert_eq!(err.rule(), Rule::WellFormedJson, "{err}");
}

#[test]
fn invalid_utf8_is_an_error() {
    let mut bytes =
        br#"{"ok":false,"error":{"code":"a","category":"internal","detail":"caf"#.to_vec();
    bytes.extend_from_slice(&[0xC3, 0x28]); // an invalid two-byte sequence
    bytes.extend_from_slice(br#""}}"#);
    let err = Untyped::from_json_slice(&bytes).unwrap_err();
    assert_eq!(err.rule(), Rule::WellFormedJson);
    assert_eq!(err.pointer(), "/error/detail");

    let err = Untyped::from_json_slice(&[0xFF, 0xFE, b'{', b'}']).unwrap_err();
    assert_eq!(err.rule(), Rule::WellFormedJson);
}

#[test]
fn every_truncation_of_a_valid_envelope_is_an_error() {
    let text = r#"{"ok":false,"sessionId":"s-1","warnings":[{"code":"tree-truncated","detail":"x"}],"error":{"code":"selector-matched-3","category":"ambiguous-selector","detail":"three","lastObservation":{"a":[1,2,{"b":null}]}}}"#;
    Untyped::from_json(text).unwrap();
    for end in 0..text.len() {
        let err = Untyped::from_json(&text[..end]).unwrap_err();
        assert_eq!(
            err.rule(),
            Rule::WellFormedJson,
            "prefix of {end} bytes: {err}"
        );
    }
}

#[test]
fn duplicate_keys_are_errors_at_envelope_error_and_warning_level() {
    for (text, pointer) in [
        (r#"{"ok":true,"ok":false}"#, "/ok"),
        (
            r#"{"ok":true,"sessionId":"a","sessionId":"b"}"#,
            "/sessionId",
        ),
        (r#"{"ok":true,"result":{},"result":{}}"#, "/result"),
        (r#"{"ok":true,"warnings":[],"warnings":[]}"#, "/warnings"),
        (
            r#"{"ok":false,"error":{"code":"a","category":"internal","detail":"","detail":""}}"#,
            "/error/detail",
        ),
        (
            r#"{"ok":false,"error":{"code":"a","code":"b","category":"internal","detail":""}}"#,
            "/error/code",
        ),
        (
            r#"{"ok":true,"warnings":[{"code":"a","detail":"x"},{"code":"a","detail":"x","detail":"y"}]}"#,
            "/warnings/1/detail",
        ),
    ] {
        let err = Untyped::from_json(text).unwrap_err();
        assert_eq!(err.rule(), Rule::NoDuplicateKeys, "{text}: {err}");
        assert_eq!(err.pointer(), pointer, "{text}");
    }
}

#[test]
fn wrong_types_unknown_categories_and_contradictions_name_their_rule() {
    for (text, rule, pointer) in [
        (r#"{"ok":"yes"}"#, Rule::FieldType, "/ok"),
        (
            r#"{"ok":true,"sessionId":7}"#,
            Rule::FieldType,
            "/sessionId",
        ),
        (
            r#"{"ok":true,"warnings":[{"code":"a","detail":1}]}"#,
            Rule::FieldType,
            "/warnings/0/detail",
        ),
        (
            r#"{"ok":false,"error":{"code":"a","category":"no_target","detail":""}}"#,
            Rule::CategoryClosedSet,
            "/error/category",
        ),
        (
            r#"{"ok":true,"error":{"code":"a","category":"internal","detail":""}}"#,
            Rule::SuccessForbidsError,
            "/error",
        ),
        (
            r#"{"ok":false,"warnings":[]}"#,
            Rule::FailureRequiresError,
            "",
        ),
        (
            r#"{"ok":false,"result":{"a":1},"error":{"code":"a","category":"internal","detail":""}}"#,
            Rule::FailureForbidsResult,
            "/result",
        ),
        (r#"{"ok":true,"extra":1}"#, Rule::NoUnknownFields, "/extra"),
        (r#"{"ok":true} {"ok":true}"#, Rule::WellFormedJson, ""),
        ("", Rule::WellFormedJson, ""),
    ] {
        let err = Untyped::from_json(text).unwrap_err();
        assert_eq!(
            (err.rule(), err.pointer()),
            (rule, pointer),
            "{text}: {err}"
        );
    }
}

#[test]
fn error_messages_are_lowercase_without_a_trailing_period() {
    let inputs = [
        "",
        "{",
        "[]",
        r#"{"ok":true"#,
        r#"{"ok":1}"#,
        r#"{"ok":false}"#,
        r#"{"ok":true,"x":1}"#,
        r#"{"ok":false,"error":{"code":"A","category":"internal","detail":""}}"#,
        r#"{"ok":false,"error":{"code":"a","category":"Internal","detail":""}}"#,
        r#"{"ok":true,"result":"s"}"#,
        r#"{"ok":true,"ok":true}"#,
    ];
    for text in inputs {
        let err = Untyped::from_json(text).unwrap_err();
        let message = err.message();
        let first = message.chars().next().unwrap();
        assert!(!first.is_uppercase(), "{text}: {message}");
        assert!(!message.ends_with('.'), "{text}: {message}");
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            for finding in Validator::shared().validate(&value).violations() {
                let first = finding.message().chars().next().unwrap();
                assert!(!first.is_uppercase(), "{text}: {finding}");
                assert!(!finding.message().ends_with('.'), "{text}: {finding}");
            }
        }
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A cheap, deterministic sweep of byte soup and mutations of a valid envelope.
    let seed = br#"{"ok":false,"sessionId":"s","warnings":[{"code":"a","detail":"b"}],"error":{"code":"c","category":"focus","detail":"d"}}"#;
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..5_000 {
        let mut bytes = seed.to_vec();
        for _ in 0..=(next() % 4) {
            let at = usize::try_from(next() % bytes.len() as u64).unwrap();
            bytes[at] = (next() & 0xFF) as u8;
        }
        let _ = Untyped::from_json_slice(&bytes);
        if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
            let report = Validator::shared().validate(&value);
            let typed = Untyped::from_value(&value);
            assert_eq!(
                report.is_valid(),
                typed.is_ok(),
                "{}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}

/// serde's derive reads a struct from an array of its fields in order; no type of this crate
/// does. Every public `Deserialize` is given the array form of a valid object.
#[test]
fn no_reader_takes_an_array_for_an_object() {
    use agent_tool_result::mcp::{CallToolResult, JsonRpcError};
    use agent_tool_result::observation::{BlankCheck, CaptureSummary, WindowInfo};
    use agent_tool_result::{Observation, ToolError, Warning};
    use serde_json::{Value, json};

    fn as_array(object: &Value) -> String {
        Value::Array(object.as_object().unwrap().values().cloned().collect()).to_string()
    }
    let window = json!({ "handle": 1, "title": "t", "className": "c", "processName": "p",
        "processId": 2, "x": 0, "y": 0, "width": 1, "height": 1 });
    let blank = json!({ "blank": false, "dominantFraction": 0.5, "dominantIsDark": false });
    let capture = json!({ "kind": "capture-summary", "width": 1, "height": 1, "encoding": "png",
        "bytes": 1, "blankCheck": blank, "artifact": "a.png" });
    let error = json!({ "code": "x", "category": "internal", "detail": "" });
    let warning = json!({ "code": "x", "detail": "" });
    let envelope = json!({ "ok": false, "error": error });
    let call = json!({ "resultType": "complete", "content": [{ "type": "text", "text": envelope.to_string() }],
        "structuredContent": envelope, "isError": true, "_meta": {} });
    let rpc = json!({ "code": -32602, "message": "unknown tool", "data": null });

    macro_rules! refuses_arrays {
        ($($ty:ty => $value:expr),+ $(,)?) => {$(
            let object = $value.to_string();
            assert!(serde_json::from_str::<$ty>(&object).is_ok(), "{object}");
            let array = as_array(&$value);
            assert!(serde_json::from_str::<$ty>(&array).is_err(), "{} read {array}", stringify!($ty));
        )+};
    }
    refuses_arrays! {
        WindowInfo => window,
        BlankCheck => blank,
        CaptureSummary => capture,
        ToolError => error,
        Warning => warning,
        Envelope => envelope,
        JsonRpcError => rpc,
        Observation => window,
    }
    assert!(CallToolResult::from_json(&call.to_string()).is_ok());
    let err = CallToolResult::from_json(&as_array(&call)).unwrap_err();
    assert_eq!(
        err.kind(),
        agent_tool_result::mcp::McpErrorKind::Malformed,
        "{err}"
    );
}

/// A repeated key whose first value breaks another rule: every reader names the typed reader's
/// rule at its pointer, and the repeat beside it.
#[test]
fn a_repeated_key_and_an_earlier_breach_are_both_reported() {
    use agent_tool_result::guarantee::GuaranteeResult;
    for (text, guarantee) in [
        (r#"{"ok":1,"ok":true}"#, false),
        (r#"{"ok":true,"sessionId":5,"sessionId":"s"}"#, false),
        (
            r#"{"ok":false,"error":{"code":"x","category":"Timeout","category":"timeout","detail":""}}"#,
            false,
        ),
        (
            r#"{"schemaVersion":2,"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"}}"#,
            true,
        ),
    ] {
        let typed = if guarantee {
            GuaranteeResult::<Value>::from_json(text).unwrap_err()
        } else {
            Envelope::<Value>::from_json(text).unwrap_err()
        };
        let validator = if guarantee {
            Validator::shared_guarantee()
        } else {
            Validator::shared()
        };
        let report = validator.validate_text(text);
        let found: Vec<(Rule, &str)> = report
            .violations()
            .iter()
            .map(|v| (v.rule(), v.pointer()))
            .collect();
        assert!(
            found.contains(&(typed.rule(), typed.pointer())),
            "{text}: {found:?} lacks {typed}"
        );
        assert!(
            found.iter().any(|(rule, _)| *rule == Rule::NoDuplicateKeys),
            "{text}: {found:?}"
        );
    }
}
