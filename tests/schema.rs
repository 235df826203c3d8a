//! The hand-written schema file: a valid draft 2020-12 schema with the contract's shape.

use agent_tool_result::ErrorCategory;
use agent_tool_result::schema::{ENVELOPE_SCHEMA, envelope_schema};
use serde_json::Value;

#[test]
fn the_schema_is_valid_against_the_2020_12_meta_schema() {
    let schema = envelope_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::meta::validate(schema).unwrap();
    jsonschema::draft202012::meta::validate(schema).unwrap();
}

#[test]
fn the_generated_schema_is_valid_too() {
    let generated = agent_tool_result::schema::generated_envelope_schema();
    jsonschema::draft202012::meta::validate(&generated).unwrap();
}

#[test]
fn the_schema_has_its_own_id_and_the_embedded_text_is_the_file() {
    let schema = envelope_schema();
    let id = schema["$id"].as_str().unwrap();
    assert!(
        id.ends_with("/schema/agent-tool-result.schema.json"),
        "{id}"
    );
    let on_disk = std::fs::read_to_string(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/.."),
        "/schema/agent-tool-result.schema.json"
    ))
    .unwrap();
    assert_eq!(on_disk, ENVELOPE_SCHEMA);
}

#[test]
fn the_category_enum_is_the_closed_set_in_order() {
    let names: Vec<&str> = envelope_schema()["$defs"]["category"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let expected: Vec<&str> = ErrorCategory::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names, expected);
    assert_eq!(names.len(), 12);
}

#[test]
fn every_level_forbids_additional_properties() {
    let schema = envelope_schema();
    for level in [
        schema,
        &schema["$defs"]["error"],
        &schema["$defs"]["warning"],
    ] {
        assert_eq!(level["additionalProperties"], Value::Bool(false));
    }
}

#[test]
fn the_code_pattern_matches_the_library_rule() {
    let pattern = envelope_schema()["$defs"]["code"]["pattern"]
        .as_str()
        .unwrap();
    let validator = jsonschema::validator_for(&serde_json::json!({ "pattern": pattern })).unwrap();
    for candidate in ["a", "a-b", "x1-2", "", "-a", "a-", "a--b", "A", "a_b", "é"] {
        assert_eq!(
            validator.is_valid(&Value::from(candidate)),
            agent_tool_result::code::is_kebab_case(candidate),
            "{candidate:?}"
        );
    }
}
