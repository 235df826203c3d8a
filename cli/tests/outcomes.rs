//! `atr classify --format json`: the one outcome form, a line per answer, over every fixture
//! the tests read (result documents valid and broken, guarantee results, the example results
//! and REST captures, and the recorded sessions' `tools/call` results). The lines are the
//! reference the Python and TypeScript readers are held to.

use crate::common;

use std::path::Path;

use common::{root, run};
use serde_json::Value;

/// Every fixture, as `atr classify` takes it: the files (sorted) of each directory, and the
/// NDJSON ones a line at a time.
pub fn corpus() -> (Vec<String>, Vec<String>) {
    let files = |dir: &str, ext: &[&str]| -> Vec<String> {
        let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.is_file()
                    && path
                        .extension()
                        .is_some_and(|e| ext.contains(&e.to_str().unwrap()))
            })
            .map(|path| {
                path.strip_prefix(root())
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        files.sort();
        files
    };
    let documents = [
        ("tests/fixtures/valid", &["json"][..]),
        ("tests/fixtures/invalid", &["json"]),
        ("tests/fixtures/guarantee/valid", &["json"]),
        ("tests/fixtures/guarantee/invalid", &["json"]),
        ("examples/results", &["json"]),
        ("examples/results/broken", &["json"]),
        ("examples/results/guarantee", &["json"]),
        ("examples/results/mcp", &["json"]),
        ("cli/tests/fixtures/jsonrpc", &["json"]),
        ("examples/responses", &["http", "har"]),
        ("examples/responses/broken", &["http"]),
    ]
    .iter()
    .filter(|(dir, _)| Path::new(&root().join(dir)).is_dir())
    .flat_map(|(dir, ext)| files(dir, ext))
    .collect();
    let sessions = [
        ("cli/tests/fixtures/sessions", &["ndjson"][..]),
        ("cli/tests/fixtures/jsonrpc", &["ndjson", "jsonl"]),
        ("examples/results", &["ndjson"]),
    ]
    .iter()
    .flat_map(|(dir, ext)| files(dir, ext))
    .collect();
    (documents, sessions)
}

/// The outcome lines for the whole corpus, documents first, then the sessions.
pub fn outcome_lines() -> String {
    let (documents, sessions) = corpus();
    let mut args = vec!["classify", "--format", "json"];
    args.extend(documents.iter().map(String::as_str));
    let first = run(&args, None);
    // Two REST captures break the profile on purpose: exit 1, every line written.
    assert_eq!(first.code, 1, "{}", first.stderr);
    let mut args = vec!["classify", "--format", "json", "--ndjson"];
    args.extend(sessions.iter().map(String::as_str));
    let second = run(&args, None);
    assert_eq!(second.code, 0, "{}", second.stderr);
    first.stdout + &second.stdout
}

#[test]
fn every_fixture_has_one_outcome_line() {
    let lines = outcome_lines();
    let readings: Vec<Value> = lines
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let (documents, _) = corpus();
    // A line per document and per response, each with its source, a decision and a kind.
    assert!(readings.len() > documents.len(), "{}", readings.len());
    for reading in &readings {
        for member in ["source", "decision", "kind"] {
            assert!(reading.get(member).is_some(), "{reading}");
        }
        // Every reading is the library's own, read back.
        let mut bare = reading.clone();
        bare.as_object_mut().unwrap().remove("source");
        serde_json::from_value::<agent_tool_result::decision::Reading>(bare).unwrap();
    }
    // Every valid fixture is a result, every invalid one is not.
    for reading in &readings {
        let source = reading["source"].as_str().unwrap();
        if source.starts_with("tests/fixtures/valid/")
            || source.starts_with("tests/fixtures/guarantee/valid/")
        {
            assert_ne!(reading["decision"], "stop", "{reading}");
        }
        if source.starts_with("tests/fixtures/invalid/")
            || source.starts_with("tests/fixtures/guarantee/invalid/")
        {
            assert_eq!(reading["decision"], "stop", "{reading}");
        }
    }
    insta::assert_snapshot!("outcomes", lines);
}
