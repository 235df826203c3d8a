//! `atr validate --format sarif`: a log the SARIF 2.1.0 schema accepts, with one result per
//! finding, the same findings `--format json` reports, at the same places.
//!
//! `fixtures/sarif-schema-2.1.0.json` is the OASIS SARIF 2.1.0 schema, as the `serde-sarif`
//! crate ships it, with the two `language` patterns that are not valid regular expressions
//! (an unbalanced `]`) written as they were meant: `^[a-zA-Z]{2}(-[a-zA-Z]{2})?$`.

use crate::common;

use std::fs;

use common::{run, scratch};
use serde_json::Value;

fn sarif_schema() -> jsonschema::Validator {
    let text =
        fs::read_to_string(common::root().join("cli/tests/fixtures/sarif-schema-2.1.0.json"))
            .unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

/// The log, checked against the schema.
fn log(args: &[&str]) -> (i32, Value) {
    let out = run(args, None);
    let log: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|err| {
        panic!("one JSON document: {err}\n{}", out.stdout);
    });
    let errors: Vec<String> = sarif_schema()
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    (out.code, log)
}

/// What identifies a finding: rule, file, line, column, pointer, message, severity.
type Key = (String, String, u64, u64, String, String, String);

/// The file label a URI reference stands for: `file://` dropped, percent escapes decoded.
fn file_of(uri: &str) -> String {
    let uri = uri.strip_prefix("file://").unwrap_or(uri).as_bytes();
    let mut bytes = Vec::new();
    let mut i = 0;
    while i < uri.len() {
        if uri[i] == b'%' {
            let hex = std::str::from_utf8(&uri[i + 1..i + 3]).unwrap();
            bytes.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            bytes.push(uri[i]);
            i += 1;
        }
    }
    String::from_utf8(bytes).unwrap()
}

fn from_sarif(result: &Value, rules: &[Value]) -> Key {
    let location = &result["locations"][0];
    let physical = &location["physicalLocation"];
    let index = usize::try_from(result["ruleIndex"].as_u64().unwrap()).unwrap();
    assert_eq!(
        rules[index]["id"], result["ruleId"],
        "ruleIndex names the rule"
    );
    (
        result["ruleId"].as_str().unwrap().to_owned(),
        file_of(physical["artifactLocation"]["uri"].as_str().unwrap()),
        physical["region"]["startLine"].as_u64().unwrap(),
        physical["region"]["startColumn"].as_u64().unwrap(),
        location["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        result["message"]["text"].as_str().unwrap().to_owned(),
        result["level"].as_str().unwrap().to_owned(),
    )
}

fn from_json(finding: &Value) -> Key {
    let text = |name: &str| finding[name].as_str().unwrap().to_owned();
    (
        text("rule"),
        text("file"),
        finding["line"].as_u64().unwrap(),
        finding["column"].as_u64().unwrap(),
        text("pointer"),
        text("message"),
        text("severity"),
    )
}

fn same_findings_as_json(args: &[&str]) -> Value {
    let (code, log) = log(&[args, &["--format", "sarif"]].concat());
    let json = run(&[args, &["--format", "json"]].concat(), None);
    assert_eq!(code, json.code);
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let sarif: Vec<Key> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| from_sarif(r, rules))
        .collect();
    let lines: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (summary, findings) = lines.split_last().unwrap();
    let expected: Vec<Key> = findings.iter().map(from_json).collect();
    assert_eq!(sarif, expected);
    assert_eq!(run["properties"], summary["summary"]);
    log
}

#[test]
fn the_bundled_examples_as_sarif() {
    let log = same_findings_as_json(&["validate", "examples/results"]);
    let run = &log["runs"][0];
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(run["tool"]["driver"]["name"], "atr");
    assert_eq!(run["results"].as_array().unwrap().len(), 13);
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    let levels: Vec<&str> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["level"].as_str().unwrap())
        .collect();
    assert!(levels.contains(&"error") && levels.contains(&"warning"));
}

#[test]
fn ndjson_lines_and_awkward_file_names_keep_their_places() {
    let dir = scratch("sarif-ndjson");
    let valid = r#"{"ok":true,"result":{"n":1}}"#;
    let invalid = r#"{"ok":false,"error":{"code":"x","category":"nope","detail":"d"}}"#;
    let path = dir.join("tool output 50%.ndjson");
    fs::write(&path, format!("{valid}\n{invalid}\n\n{valid}\n{invalid}\n")).unwrap();
    let path = path.to_str().unwrap();
    let log = same_findings_as_json(&["validate", path]);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let lines: Vec<u64> = results
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, [2, 5]);
    let uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        uri.starts_with("file:///") && uri.ends_with("/tool%20output%2050%25.ndjson"),
        "{uri}"
    );
}

#[test]
fn a_clean_run_is_a_log_with_no_results() {
    let dir = scratch("sarif-clean");
    fs::write(dir.join("ok.json"), r#"{"ok":true}"#).unwrap();
    let (code, log) = log(&["validate", "--format", "sarif", dir.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(log["runs"][0]["results"], Value::Array(Vec::new()));
    let unreadable = run(
        &["validate", "--format", "sarif", "no/such/file.json"],
        None,
    );
    assert_eq!(unreadable.code, 2);
    let log: Value = serde_json::from_str(&unreadable.stdout).unwrap();
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
}

/// Every rule in the log carries what a code-scanning alert shows: a full description (text
/// and Markdown, the rule's own documentation), help, and a `helpUri` at the rule's entry in
/// this version's docs, one per rule; `atr explain` knows each rule it names.
#[test]
fn every_rule_says_what_breaks_it_and_links_to_its_documentation() {
    let (_, log) = log(&["validate", "--format", "sarif", "examples/results"]);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), agent_tool_result::Rule::ALL.len());
    let prefix = format!(
        "https://docs.rs/agent-tool-result/{}/agent_tool_result/rule/enum.Rule.html#variant.",
        common::version_of("Cargo.toml")
    );
    let mut anchors = std::collections::HashSet::new();
    for (rule, entry) in agent_tool_result::Rule::ALL.iter().zip(rules) {
        assert_eq!(entry["id"], rule.as_str());
        let full = entry["fullDescription"]["text"].as_str().unwrap();
        assert!(full.len() > 10 && !full.contains('`'), "{entry}");
        assert_eq!(entry["fullDescription"]["markdown"], rule.description());
        assert!(
            entry["help"]["text"]
                .as_str()
                .unwrap()
                .contains(rule.summary())
        );
        let uri = entry["helpUri"].as_str().unwrap();
        let anchor = uri.strip_prefix(&prefix).unwrap_or_else(|| panic!("{uri}"));
        assert!(
            anchor.chars().all(|c| c.is_ascii_alphanumeric()) && anchors.insert(anchor.to_owned()),
            "one anchor a rule: {uri}"
        );
        let explained = run(&["explain", rule.as_str()], None);
        assert_eq!(explained.code, 0, "{}", explained.stderr);
        assert!(explained.stdout.contains(uri), "{}", explained.stdout);
    }
}
