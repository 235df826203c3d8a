//! The compact tool output schema: small, standard, and still the contract's verdict on what
//! matters to a client (the `ok`/`error` invariant, the closed categories, the code form).
#![cfg(feature = "schemars")]

use std::fs;
use std::path::Path;

use agent_tool_result::Envelope;
use agent_tool_result::observation::WindowInfo;
use agent_tool_result::schema::{OutputSchemaError, output_schema_for};
use serde_json::{Value, json};

#[derive(schemars::JsonSchema, serde::Serialize)]
#[allow(dead_code)]
struct Found {
    automation_id: String,
    bounds: [i32; 4],
}

/// A recursive result: its schema refers to its own root.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

fn compile(schema: &serde_json::Map<String, Value>) -> jsonschema::Validator {
    jsonschema::draft202012::new(&Value::Object(schema.clone())).expect("compiles")
}

fn result_schema<T: schemars::JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn size(value: &impl serde::Serialize) -> usize {
    serde_json::to_string(value).unwrap().len()
}

/// At most 950 bytes (minified) beyond the result schema's own, against about 6 KB for the
/// full envelope schema the types generate.
#[test]
fn the_tool_output_schema_is_compact() {
    let cases = [
        ("Value", size(&Envelope::<Value>::output_schema()), 0),
        (
            "Found",
            size(&Envelope::<Found>::output_schema()),
            size(&result_schema::<Found>()),
        ),
        (
            "WindowInfo",
            size(&Envelope::<WindowInfo>::output_schema()),
            size(&result_schema::<WindowInfo>()),
        ),
        (
            "Tree",
            size(&Envelope::<Tree>::output_schema()),
            size(&result_schema::<Tree>()),
        ),
    ];
    for (name, total, own) in cases {
        let overhead = total.saturating_sub(own);
        assert!(
            overhead <= 950,
            "{name}: {overhead} bytes beyond its result schema"
        );
    }
    let full = size(&agent_tool_result::schema::generated_envelope_schema());
    let compact = size(&Envelope::<Value>::output_schema());
    assert!(full > 4 * compact, "full {full} bytes, compact {compact}");
}

/// No non-standard format, no prose or examples around the tool's own result schema.
#[test]
fn only_standard_formats_and_no_prose() {
    fn walk(value: &Value, inside_result: bool, path: &str) {
        match value {
            Value::Object(object) => {
                if let Some(format) = object.get("format").and_then(Value::as_str) {
                    assert!(
                        ["date-time", "date", "time", "email", "uri", "uuid"].contains(&format),
                        "{path}: format {format}"
                    );
                }
                for key in ["examples", "example"] {
                    assert!(!object.contains_key(key), "{path} has {key}");
                }
                if !inside_result {
                    assert!(!object.contains_key("description"), "{path} has prose");
                }
                for (key, child) in object {
                    let inside = inside_result || path == "/$defs" && key == "result";
                    walk(child, inside, &format!("{path}/{key}"));
                }
            }
            Value::Array(items) => items
                .iter()
                .for_each(|item| walk(item, inside_result, path)),
            _ => {}
        }
    }
    for schema in [
        Envelope::<WindowInfo>::output_schema(),
        Envelope::<Found>::output_schema(),
        Envelope::<Value>::output_schema(),
    ] {
        walk(&Value::Object(schema), false, "");
    }
}

fn fixtures(kind: &str) -> Vec<(String, Value)> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/fixtures")
        .join(kind);
    let mut out: Vec<(String, Value)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every valid envelope passes; every fixture that breaks a rule a client must see fails.
#[test]
fn it_accepts_every_valid_envelope_and_keeps_the_invariants() {
    let schema = compile(&Envelope::<Value>::output_schema());
    for (name, document) in fixtures("valid") {
        assert!(schema.is_valid(&document), "{name}");
    }
    let reasons = fs::read_to_string(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .join("tests/fixtures/invalid/reasons.tsv"),
    )
    .unwrap();
    let kept = [
        "envelope-is-object",
        "required-field",
        "no-unknown-fields",
        "failure-requires-error",
        "success-forbids-error",
        "failure-forbids-result",
        "category-closed-set",
        "code-kebab-case",
    ];
    let mut rejected = 0;
    for (name, document) in fixtures("invalid") {
        let rule = reasons
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name}\t")))
            .and_then(|rest| rest.split('\t').next())
            .unwrap_or_else(|| panic!("{name} has no reason"));
        let in_observation = serde_json::to_string(&document)
            .unwrap()
            .contains("lastObservation");
        // Unknown fields are checked at the envelope's level only; the full schema does the rest.
        let envelope_keys = ["ok", "sessionId", "result", "warnings", "error"];
        let nested_unknown = rule == "no-unknown-fields"
            && document
                .as_object()
                .is_some_and(|o| o.keys().all(|k| envelope_keys.contains(&k.as_str())));
        if kept.contains(&rule) && !in_observation && !nested_unknown {
            assert!(!schema.is_valid(&document), "{name} breaks {rule}");
            rejected += 1;
        }
    }
    assert!(rejected >= 20, "{rejected}");
    for document in [
        json!({ "ok": true, "error": { "code": "x", "category": "internal", "detail": "" } }),
        json!({ "ok": false }),
        json!({ "ok": false, "result": {}, "error": { "code": "x", "category": "internal", "detail": "" } }),
        json!({ "ok": false, "error": { "code": "x", "category": "Timeout", "detail": "" } }),
        json!({ "ok": false, "error": { "code": "x", "category": "cosmic-ray", "detail": "" } }),
    ] {
        assert!(!schema.is_valid(&document), "{document}");
    }
}

/// The tool's result schema holds inside the envelope, recursion included.
#[test]
fn the_result_schema_sits_in_defs_and_keeps_its_own_refs() {
    let schema = compile(&Envelope::<Tree>::output_schema());
    let tree = json!({ "name": "a", "children": [{ "name": "b", "children": [
        { "name": "c", "children": [] }
    ] }] });
    assert!(schema.is_valid(&json!({ "ok": true, "result": tree })));
    let bad = json!({ "name": "a", "children": [{ "name": 5, "children": [] }] });
    assert!(!schema.is_valid(&json!({ "ok": true, "result": bad })));
    let failure =
        json!({ "ok": false, "error": { "code": "x", "category": "internal", "detail": "" } });
    assert!(
        schema.is_valid(&failure),
        "failures validate whatever the result type"
    );

    let found = compile(&Envelope::<Found>::output_schema());
    assert!(found.is_valid(
        &json!({ "ok": true, "result": { "automation_id": "b", "bounds": [1, 2, 3, 4] } })
    ));
    assert!(
        !found.is_valid(&json!({ "ok": true, "result": { "automation_id": 1, "bounds": [] } }))
    );
    assert!(
        found.is_valid(&json!({ "ok": true })),
        "a success may omit its result"
    );
}

#[test]
fn a_schema_that_admits_no_object_is_an_error() {
    for schema in [
        json!({ "type": "array" }),
        json!({ "type": ["string", "null"] }),
        json!({ "const": 5 }),
        json!({ "enum": ["a", 1] }),
        json!(false),
    ] {
        assert!(
            matches!(
                output_schema_for(&schema),
                Err(OutputSchemaError::NotAnObjectSchema { .. })
            ),
            "{schema}"
        );
    }
    assert!(matches!(
        output_schema_for(&json!("object")),
        Err(OutputSchemaError::NotASchema { .. })
    ));
    for schema in [
        json!(true),
        json!({}),
        json!({ "type": ["object", "null"] }),
    ] {
        assert!(output_schema_for(&schema).is_ok(), "{schema}");
    }
}

/// A guarantee tool's output schema is as compact, and accepts every valid guarantee result,
/// a deny included.
#[cfg(feature = "validate")]
#[test]
fn the_guarantee_output_schema_is_compact_and_accepts_every_valid_result() {
    use agent_tool_result::guarantee::GuaranteeResult;
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Campaign {
        #[serde(rename = "campaignId")]
        campaign_id: String,
    }
    let own = size(&result_schema::<Campaign>());
    let schema = GuaranteeResult::<Campaign>::output_schema();
    assert!(
        size(&schema) - own <= 950,
        "{} bytes beyond the fields' {own}",
        size(&schema) - own
    );
    let untyped = compile(&GuaranteeResult::<Value>::output_schema());
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/fixtures/guarantee/valid");
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert!(untyped.is_valid(&value), "{}", path.display());
    }
    let typed = compile(&schema);
    let held = json!({ "schemaVersion": 1, "settlement": { "state": "committed" },
        "policy": { "decision": "defer", "code": "campaign_hold" }, "campaignId": "c" });
    assert!(typed.is_valid(&held));
    assert!(!typed.is_valid(
        &json!({ "schemaVersion": 2, "settlement": { "state": "committed" },
        "policy": { "decision": "allow" }, "campaignId": "c" })
    ));
}

/// Every answer a guarantee tool can give, refusals included, is `structuredContent` that
/// conforms to the `outputSchema` it advertises, even when its own fields are required by its
/// type: a deny and an `unknown` carry none, a refusal is a problem. (The TypeScript SDK
/// validates `structuredContent` on `isError: true` too, and throws on the first mismatch.)
#[cfg(feature = "validate")]
#[test]
fn every_answer_of_a_guarantee_tool_conforms_to_its_output_schema() {
    use agent_tool_result::guarantee::{
        Answer, GuaranteeResult, Impact, PolicyCode, Refusal, RefusalKind,
    };
    use agent_tool_result::mcp::CallToolResult;
    use std::time::{Duration, UNIX_EPOCH};

    #[derive(serde::Serialize, schemars::JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct MessageRef {
        message_id: String,
        segments: u32,
    }
    let fields = || MessageRef {
        message_id: "msg_1".to_owned(),
        segments: 1,
    };
    let at = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
    let schema = compile(&GuaranteeResult::<MessageRef>::output_schema());
    let mut answers: Vec<Answer<Value>> = Vec::new();
    let with = |result: GuaranteeResult<Value>| {
        Answer::Result(
            result
                .with_fields(serde_json::to_value(fields()).unwrap())
                .unwrap(),
        )
    };
    answers.push(with(
        GuaranteeResult::committed()
            .with_impact(Impact::new().with_requested(1).with_committed(1))
            .unwrap(),
    ));
    answers.push(with(
        GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
            .with_impact(
                Impact::new()
                    .with_requested(3)
                    .with_committed(1)
                    .with_deferred(2),
            )
            .and_then(|held| held.with_retry_at(at))
            .unwrap()
            .with_next_tool("lookup_sms"),
    ));
    answers.push(with(
        GuaranteeResult::unknown().with_next_tool("lookup_sms"),
    ));
    // Without the tool's fields, as a deny is.
    let bare = |result: GuaranteeResult<Value>| Answer::Result(result);
    answers.push(bare(GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)));
    answers.push(bare(
        GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
            .with_retry_at(at)
            .expect("a deny takes a retry time"),
    ));
    answers.push(bare(GuaranteeResult::unknown()));
    for kind in RefusalKind::ALL {
        answers.push(Answer::Refused(Refusal::new(kind, "why")));
        answers.push(Answer::Refused(
            Refusal::new(kind, "why").with_retry_at(at).unwrap(),
        ));
    }
    for answer in &answers {
        let result = CallToolResult::from_answer(answer).unwrap();
        let structured: Value = serde_json::from_str(result.structured_content().unwrap()).unwrap();
        let errors: Vec<String> = schema
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{structured}: {errors:?}");
        assert_eq!(result.is_error(), answer.is_error(), "{structured}");
        let read = CallToolResult::from_json(&result.to_json()).unwrap();
        assert_eq!(read.answer::<Value>().unwrap(), *answer, "{structured}");
    }
    // The schema still refuses what no answer is.
    for wrong in [
        json!({ "ok": false, "error": { "code": "x", "category": "internal", "detail": "" } }),
        json!({ "schemaVersion": 1, "settlement": { "state": "sent" }, "policy": { "decision": "allow" } }),
        json!({ "schemaVersion": 1, "settlement": { "state": "committed" }, "policy": { "decision": "allow" }, "messageId": 7 }),
        json!({ "type": "about:blank", "title": "Bad Request" }),
    ] {
        assert!(!schema.is_valid(&wrong), "{wrong}");
    }
}
