//! The envelope against `serde_json` on a plain struct with the same fields, side by side.
//!
//! Run with `cargo bench -p agent-tool-result-tests --bench envelope`. Compare each `envelope_*` row with its `plain_*`
//! row: the ratio is the cost of the contract (validated codes, the closed category, the
//! object-only result and the invariant checks).

use agent_tool_result::validate::Validator;
use agent_tool_result::{
    Classified, Envelope, JsonObject, Observation, ToolError, Warning, WarningCode,
};
use divan::{Bencher, black_box};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// A typical tool result: a handful of found elements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FindResult {
    window: String,
    elements: Vec<Element>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Element {
    automation_id: String,
    name: String,
    class_name: String,
    control_type: String,
    bounds: [i32; 4],
    enabled: bool,
}

/// The same fields as the envelope, with plain strings and options and no checks.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainEnvelope {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<FindResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<PlainWarning>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<PlainError>,
}

#[derive(Serialize, Deserialize)]
struct PlainWarning {
    code: String,
    detail: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainError {
    code: String,
    category: String,
    detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_observation: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partial_result: Option<JsonObject>,
}

fn find_result() -> FindResult {
    let names = ["OK", "Cancel", "Apply", "Help", "Save as..."];
    FindResult {
        window: "Untitled - Notepad".into(),
        elements: names
            .iter()
            .enumerate()
            .map(|(i, name)| Element {
                automation_id: format!("btn{}", name.replace(['.', ' '], "")),
                name: (*name).into(),
                class_name: "Button".into(),
                control_type: "button".into(),
                bounds: [400 + 90 * i32::try_from(i).unwrap(), 310, 80, 24],
                enabled: i != 3,
            })
            .collect(),
    }
}

fn success() -> Envelope<FindResult> {
    Envelope::success(find_result())
        .with_session("s-4f2a9c1e")
        .with_warning(Warning::new(
            WarningCode::MINIMIZED_WINDOW,
            "Target was minimized; restored before the search.",
        ))
        .with_warning(Warning::new(
            WarningCode::TREE_TRUNCATED,
            "Tree clipped at 500 nodes; raise maxNodes for a deeper search.",
        ))
}

fn failure() -> Envelope<FindResult> {
    let observation = Observation::try_from(serde_json::to_value(find_result()).unwrap()).unwrap();
    Envelope::failure(
        ToolError::new(
            Classified::selector_matched(5).expect("5 matches are ambiguous"),
            "Selector className='Button' matched 5 elements; refine with automationId.",
        )
        .with_last_observation(observation),
    )
    .with_session("s-4f2a9c1e")
}

fn plain(envelope: &Envelope<FindResult>) -> PlainEnvelope {
    serde_json::from_str(&envelope.to_json().unwrap()).unwrap()
}

const CASES: [&str; 2] = ["success", "failure"];

fn case(name: &str) -> Envelope<FindResult> {
    if name == "success" {
        success()
    } else {
        failure()
    }
}

#[divan::bench(args = CASES)]
fn envelope_serialize(bencher: Bencher, name: &str) {
    let envelope = case(name);
    bencher.bench_local(|| serde_json::to_vec(black_box(&envelope)).unwrap());
}

#[divan::bench(args = CASES)]
fn plain_serialize(bencher: Bencher, name: &str) {
    let envelope = plain(&case(name));
    bencher.bench_local(|| serde_json::to_vec(black_box(&envelope)).unwrap());
}

#[divan::bench(args = CASES)]
fn envelope_deserialize(bencher: Bencher, name: &str) {
    let text = case(name).to_json().unwrap();
    assert!(
        text.len() > 800 && text.len() < 1400,
        "~1 KB: {}",
        text.len()
    );
    bencher.bench_local(|| Envelope::<FindResult>::from_json(black_box(&text)).unwrap());
}

#[divan::bench(args = CASES)]
fn plain_deserialize(bencher: Bencher, name: &str) {
    let text = case(name).to_json().unwrap();
    bencher.bench_local(|| serde_json::from_str::<PlainEnvelope>(black_box(&text)).unwrap());
}

#[divan::bench(args = CASES)]
fn envelope_deserialize_untyped(bencher: Bencher, name: &str) {
    let text = case(name).to_json().unwrap();
    bencher.bench_local(|| Envelope::<Value>::from_json(black_box(&text)).unwrap());
}

#[divan::bench(args = CASES)]
fn validator_validate(bencher: Bencher, name: &str) {
    let value: Value = serde_json::from_str(&case(name).to_json().unwrap()).unwrap();
    let validator = Validator::new();
    bencher.bench_local(|| validator.validate(black_box(&value)));
}

#[divan::bench(args = CASES)]
fn validator_is_valid(bencher: Bencher, name: &str) {
    let value: Value = serde_json::from_str(&case(name).to_json().unwrap()).unwrap();
    let validator = Validator::new();
    bencher.bench_local(|| validator.is_valid(black_box(&value)));
}

#[divan::bench]
fn validator_validate_invalid(bencher: Bencher) {
    let value = json!({
        "ok": false,
        "result": { "n": 1 },
        "error": { "code": "Not_Kebab", "category": "Timeout", "detail": 3, "extra": true },
    });
    let validator = Validator::new();
    bencher.bench_local(|| validator.validate(black_box(&value)));
}
