//! An MCP SDK's client (TypeScript or Python) run as a child process on a list of calls, and
//! the checks every answer it reports must pass.

use std::process::{Command, Stdio};

use serde_json::Value;

/// Runs an SDK's client (`what`, for messages) on `steps`, written to its standard input as
/// JSON: the report it prints.
pub fn run_sdk_client(mut client: Command, what: &str, steps: &Value) -> Value {
    use std::io::Write as _;
    let mut child = client
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{what} does not start: {err}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(steps.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// An SDK client's answers, one list per step, each checked: nothing thrown (the SDK
/// validated it against the advertised output schema), and its text block the same JSON as
/// its `structuredContent`.
pub fn answers_of(report: &Value) -> Vec<Vec<Value>> {
    let answers: Vec<Vec<Value>> = serde_json::from_value(report["answers"].clone()).unwrap();
    for answer in answers.iter().flatten() {
        assert!(answer.get("thrown").is_none(), "the call threw: {answer}");
        let text: Value = serde_json::from_str(answer["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, answer["structuredContent"], "{answer}");
    }
    answers
}
