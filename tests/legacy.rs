//! Legacy `CommandResult` migration: every fixture pair (legacy in, envelope out).

use std::fs;
use std::path::Path;

use agent_tool_result::{LegacyError, Migration, Observation, Validator};
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
            migration.with_last_observation(Observation::other(observation.clone()).unwrap());
    }
    migration
}

#[test]
fn every_fixture_pair_migrates_as_written() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy");
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
        assert!(Validator::shared().validate(&written).is_valid(), "{name}");
    }
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
