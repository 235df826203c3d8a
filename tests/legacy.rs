//! Legacy `CommandResult` migration: every fixture pair (legacy in, envelope out).

use std::fs;
use std::path::Path;

use agent_tool_result::Observation;
use agent_tool_result::legacy::{LegacyError, Migration};
use agent_tool_result::validate::Validator;
use serde_json::{Value, json};

fn read(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// The migration a fixture's `.options.json` asks for.
fn migration(options: Option<Value>) -> Migration {
    let mut migration = Migration::new();
    let Some(options) = options else {
        return migration;
    };
    if let Some(tool) = options["tool"].as_str() {
        migration = migration.with_tool(tool);
    }
    if let Some(session) = options["sessionId"].as_str() {
        migration = migration.with_session(session);
    }
    if let Some(observation) = options.get("lastObservation") {
        migration =
            migration.with_last_observation(Observation::try_from(observation.clone()).unwrap());
    }
    migration
}

#[test]
fn every_fixture_pair_migrates_as_written() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/fixtures/legacy");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".legacy.json").map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{} pairs", names.len());
    for name in names {
        let legacy = read(&dir.join(format!("{name}.legacy.json")));
        let expected = read(&dir.join(format!("{name}.envelope.json")));
        let options = dir.join(format!("{name}.options.json"));
        let options = options.exists().then(|| read(&options));
        let envelope = migration(options).migrate(&legacy).unwrap();
        let written: Value = serde_json::from_str(&envelope.to_json().unwrap()).unwrap();
        assert_eq!(written, expected, "{name}");
        let report = Validator::shared().validate(&written);
        assert!(report.is_valid(), "{name}");
        // The reference producer's own codes under their own categories earn no lint; a
        // category the migration had to replace with `internal` may.
        let replaced = ["unknown-category", "missing-category", "wrong-case"];
        if !replaced.iter().any(|r| name.contains(r)) {
            assert_eq!(report.lints(), [], "{name}");
        }
    }
}

/// A code outside its categories still earns the lint, naming every category it rides under.
#[test]
fn the_lint_fires_only_outside_a_codes_categories() {
    let failure = |code: &str, category: &str| json!({ "ok": false, "error": { "code": code, "category": category, "detail": "" } });
    for (code, category) in [
        ("frame-all-black", "capture-blank"),
        ("frame-all-black", "ocr-blank"),
        ("frame-uniform", "ocr-blank"),
        ("unknown-command", "internal"),
        ("unknown-command", "invalid-argument"),
        ("unhandled", "focus"),
        ("unhandled", "timeout"),
        ("send-command-timeout", "internal"),
        ("my-own-code", "timeout"),
    ] {
        let report = Validator::shared().validate(&failure(code, category));
        assert_eq!(report.lints(), [], "{code} under {category}");
    }
    let report = Validator::shared().validate(&failure("frame-all-black", "timeout"));
    assert_eq!(
        report.lints()[0].message(),
        "code `frame-all-black` rides under `capture-blank` or `ocr-blank`, not `timeout`"
    );
    let report = Validator::shared().validate(&failure("send-command-timeout", "timeout"));
    assert_eq!(report.lints().len(), 1);
}

#[test]
fn values_that_are_not_command_results_are_refused() {
    for (value, error) in [
        (json!([]), LegacyError::NotAnObject),
        (json!("ok"), LegacyError::NotAnObject),
        (json!({ "command": "x" }), LegacyError::NoSuccess),
        (json!({ "success": "true" }), LegacyError::NoSuccess),
    ] {
        assert_eq!(
            Migration::new().migrate(&value).unwrap_err(),
            error,
            "{value}"
        );
    }
}

/// A legacy document given to the validator says what it is and how to convert it.
#[test]
fn a_legacy_document_is_named_as_such() {
    use agent_tool_result::Rule;
    let text = r#"{"success":false,"command":"find","error":"No element.","data":null}"#;
    let report = Validator::shared().validate_text(text);
    let first = &report.violations()[0];
    assert_eq!(first.rule(), Rule::NotLegacyCommandResult);
    assert!(
        first.message().contains("atr migrate"),
        "{}",
        first.message()
    );
    // The same keys inside an envelope's result are the tool's business.
    let report = Validator::shared()
        .validate_text(r#"{"ok":true,"result":{"success":true,"command":"find"}}"#);
    assert!(report.is_valid());
    // And an envelope with a stray `success` is not called legacy.
    let report = Validator::shared().validate_text(r#"{"ok":true,"success":true,"command":"x"}"#);
    assert!(
        report
            .violations()
            .iter()
            .all(|v| v.rule() != Rule::NotLegacyCommandResult)
    );
}
