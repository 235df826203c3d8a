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
