//! The conformance corpus: every fixture gets the same verdict from the hand-written schema,
//! the schema generated from the types, and typed deserialization.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use agent_tool_result::validate::Validator;
use agent_tool_result::{Envelope, Rule};
use serde_json::{Value, json};

fn fixtures(kind: &str) -> Vec<(String, String)> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/fixtures")
        .join(kind);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&path).unwrap())
        })
        .collect()
}

fn reasons() -> BTreeMap<String, Rule> {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("tests/fixtures/invalid/reasons.tsv");
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let mut fields = line.split('\t');
            let file = fields.next().unwrap().to_owned();
            let rule = fields.next().unwrap().parse().unwrap();
            assert!(
                fields.next().is_some_and(|why| !why.is_empty()),
                "{file}: no reason"
            );
            (file, rule)
        })
        .collect()
}

fn generated_validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&agent_tool_result::schema::generated_envelope_schema()).unwrap()
}

/// The value with nulls dropped at envelope and error level and an empty warnings list
/// dropped: what a lossless round trip writes back.
fn normalized(mut value: Value) -> Value {
    let envelope = value.as_object_mut().unwrap();
    envelope.retain(|_, v| !v.is_null());
    if envelope
        .get("warnings")
        .is_some_and(|w| w.as_array().unwrap().is_empty())
    {
        envelope.remove("warnings");
    }
    if let Some(error) = envelope.get_mut("error") {
        error.as_object_mut().unwrap().retain(|_, v| !v.is_null());
    }
    value
}

#[test]
fn the_corpus_is_large_enough() {
    assert!(fixtures("valid").len() >= 40);
    assert!(fixtures("invalid").len() >= 40);
}

#[test]
fn valid_fixtures_pass_every_check_and_round_trip() {
    let handwritten = Validator::shared();
    let generated = generated_validator();
    for (name, text) in fixtures("valid") {
        let value: Value = serde_json::from_str(&text).unwrap();
        let report = handwritten.validate(&value);
        assert!(report.is_valid(), "{name}: {:?}", report.violations());
        assert!(
            generated.is_valid(&value),
            "{name}: generated schema rejects it"
        );
        let envelope = Envelope::<Value>::from_json(&text)
            .unwrap_or_else(|err| panic!("{name}: typed read failed: {err}"));
        let written: Value = serde_json::from_str(&envelope.to_json().unwrap()).unwrap();
        assert_eq!(
            written,
            normalized(value),
            "{name}: round trip lost something"
        );
    }
}

#[test]
fn invalid_fixtures_fail_every_check_for_their_reason() {
    let reasons = reasons();
    let handwritten = Validator::shared();
    let generated = generated_validator();
    let files = fixtures("invalid");
    let names: Vec<&String> = files.iter().map(|(name, _)| name).collect();
    assert_eq!(
        names,
        reasons.keys().collect::<Vec<_>>(),
        "reasons.tsv and files differ"
    );
    for (name, text) in &files {
        let rule = reasons[name];
        let value: Value = serde_json::from_str(text).unwrap();
        let report = handwritten.validate(&value);
        assert!(!report.is_valid(), "{name}: hand-written schema accepts it");
        assert!(
            report.violations().iter().any(|v| v.rule() == rule),
            "{name}: expected {rule}, got {:?}",
            report.violations()
        );
        assert!(
            !generated.is_valid(&value),
            "{name}: generated schema accepts it"
        );
        let err = Envelope::<Value>::from_json(text).expect_err(name);
        assert_eq!(err.rule(), rule, "{name}: typed read says {err}");
        let err = Envelope::<Value>::from_value(&value).expect_err(name);
        assert_eq!(
            err.rule(),
            rule,
            "{name}: typed read of the value says {err}"
        );
    }
}

#[test]
fn every_error_rule_has_an_invalid_fixture() {
    let covered: Vec<Rule> = reasons().into_values().collect();
    for rule in Rule::ALL {
        let parse_only = matches!(
            rule,
            Rule::WellFormedJson | Rule::NestingLimit | Rule::NoDuplicateKeys
        );
        // The mcp- rules concern the transport around an envelope; the CLI tests cover them.
        if rule.as_str().starts_with("mcp-") {
            continue;
        }
        // A tool's own result type reads only typed envelopes (tests/rules.rs), and the
        // legacy shape is the validator's word on a document that breaks other rules anyway
        // (tests/legacy.rs).
        if matches!(rule, Rule::ToolResultType | Rule::NotLegacyCommandResult) {
            continue;
        }
        // A guarantee tool's refusal is no envelope; tests/mcp.rs covers its rule.
        if rule == Rule::RefusalShape {
            continue;
        }
        // A recorded session's rules (its framing, the schemas it advertised) are no
        // envelope's; atr's session tests cover them (cli/tests/session.rs).
        if matches!(rule, Rule::JsonRpcMessage | Rule::OutputSchema) {
            continue;
        }
        // The second contract's rules have their own corpus (tests/guarantee.rs).
        if rule.as_str().starts_with("guarantee-") {
            continue;
        }
        if rule.severity() == agent_tool_result::rule::Severity::Error && !parse_only {
            assert!(covered.contains(&rule), "no invalid fixture breaks {rule}");
        }
    }
}

/// Every document obtained from a fixture by one structural change: a member removed, a value
/// replaced by one of each JSON type, a string altered.
fn mutations(value: &Value) -> Vec<Value> {
    fn walk(root: &Value, path: &mut Vec<String>, node: &Value, out: &mut Vec<Value>) {
        let replacements = [
            Value::Null,
            Value::Bool(true),
            json!(-1),
            json!(1.5),
            json!(""),
            json!("Timeout"),
            json!("x_y"),
            json!([]),
            json!({}),
            json!({ "base64": "QUJD" }),
        ];
        for replacement in replacements {
            out.push(replaced(root, path, Some(replacement)));
        }
        if !path.is_empty() {
            out.push(replaced(root, path, None));
        }
        if let Value::String(s) = node {
            out.push(replaced(root, path, Some(Value::String(s.to_uppercase()))));
            out.push(replaced(root, path, Some(Value::String(format!("{s}-")))));
        }
        if path.len() >= 4 {
            return;
        }
        match node {
            Value::Object(map) => {
                for (key, child) in map {
                    path.push(key.clone());
                    walk(root, path, child, out);
                    path.pop();
                }
                let mut extra = node.clone();
                extra
                    .as_object_mut()
                    .unwrap()
                    .insert("extra".into(), json!(1));
                out.push(replaced(root, path, Some(extra)));
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    path.push(i.to_string());
                    walk(root, path, child, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    fn replaced(root: &Value, path: &[String], with: Option<Value>) -> Value {
        let mut copy = root.clone();
        let Some((last, parents)) = path.split_last() else {
            return with.unwrap_or(Value::Null);
        };
        let mut node = &mut copy;
        for key in parents {
            node = match node {
                Value::Object(map) => map.get_mut(key).unwrap(),
                Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
                _ => unreachable!(),
            };
        }
        match (node, with) {
            (Value::Object(map), Some(v)) => {
                map.insert(last.clone(), v);
            }
            (Value::Object(map), None) => {
                map.remove(last);
            }
            (Value::Array(items), Some(v)) => items[last.parse::<usize>().unwrap()] = v,
            (Value::Array(items), None) => {
                items.remove(last.parse::<usize>().unwrap());
            }
            _ => unreachable!(),
        }
        copy
    }
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), value, &mut out);
    out
}

/// The fast path (typed reading, nothing built) gives exactly the compiled schema's verdict on
/// every fixture and every one-change mutation of one.
#[test]
fn the_fast_path_agrees_with_the_schema_on_fixtures_and_mutations() {
    let validator = Validator::shared();
    let mut checked = 0;
    let mut invalid = 0;
    for kind in ["valid", "invalid"] {
        for (name, text) in fixtures(kind) {
            let value: Value = serde_json::from_str(&text).unwrap();
            let mut documents = vec![value.clone()];
            documents.extend(mutations(&value));
            for document in documents {
                let text = document.to_string();
                let schema = validator.validate(&document).is_valid();
                assert_eq!(validator.is_valid_text(&text), schema, "{name}: {text}");
                let report = validator.validate_text(&text);
                assert_eq!(report.is_valid(), schema, "{name}: {text}");
                checked += 1;
                invalid += usize::from(!schema);
            }
        }
    }
    assert!(checked > 5_000, "{checked} documents");
    assert!(invalid > checked / 3, "{invalid} of {checked} invalid");
}
