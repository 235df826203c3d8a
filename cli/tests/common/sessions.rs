//! Recorded sessions as the tests read, break and check them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::{atr, root};

/// `atr validate --format json ARGS` on `input` (standard input): exit status, findings,
/// summary.
pub fn verdict(args: &[&str], input: &str) -> (i32, Vec<Value>, Value) {
    let out = atr()
        .args(["validate", "--format", "json"])
        .args(args)
        .write_stdin(input.to_owned())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary = lines.pop().expect("a summary")["summary"].clone();
    (out.status.code().unwrap(), lines, summary)
}

pub fn session(path: &str) -> Vec<Value> {
    std::fs::read_to_string(root().join(path))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

pub fn ndjson(messages: &[Value]) -> String {
    messages.iter().fold(String::new(), |mut text, m| {
        text.push_str(&m.to_string());
        text.push('\n');
        text
    })
}

/// Whether `message` is the response to the request whose id is `id` (as JSON).
pub fn answers(message: &Value, id: &str) -> bool {
    message.get("method").is_none()
        && serde_json::to_string(&message["id"]).is_ok_and(|text| text == id)
}

/// The tool each `tools/call` of a session named, by its id (as JSON).
pub fn calls(messages: &[Value]) -> HashMap<String, String> {
    messages
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| {
            (
                m["id"].to_string(),
                m["params"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The response to the call with `id`.
pub fn response<'a>(messages: &'a mut [Value], id: &str) -> &'a mut Value {
    messages.iter_mut().find(|m| answers(m, id)).unwrap()
}

/// The id of the call of `tool` whose arguments hold `needle` (the first one).
pub fn call_id(messages: &[Value], tool: &str, needle: &str) -> String {
    messages
        .iter()
        .find(|m| {
            m["method"] == "tools/call"
                && m["params"]["name"] == tool
                && m["params"]["arguments"].to_string().contains(needle)
        })
        .map(|m| m["id"].to_string())
        .unwrap()
}

/// Changes a result's `structuredContent` with `change`, and its text block with it (so
/// that only what the change breaks is broken).
pub fn restructure(result: &mut Value, change: impl FnOnce(&mut Value)) {
    change(&mut result["structuredContent"]);
    let text = result["structuredContent"].to_string();
    result["content"][0]["text"] = Value::String(text);
}

/// Whether every tool `messages`' listing names advertises an `outputSchema` (a session that
/// lost them would check nothing against them).
pub fn every_tool_advertises_a_schema(messages: &[Value]) -> bool {
    let listed = messages
        .iter()
        .find(|m| m["result"]["tools"].is_array())
        .expect("a listing");
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|tool| tool["outputSchema"].is_object())
}

/// The rules of `findings` by the id of the call each names, each finding's tool checked
/// against the tool its call named (`tools`, by id).
pub fn rules_by_call(
    findings: &[Value],
    tools: &HashMap<String, String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for finding in findings {
        let id = finding["callId"].as_str().expect("a call's id").to_owned();
        assert_eq!(finding["tool"], tools[&id], "{finding}");
        found
            .entry(id)
            .or_default()
            .insert(finding["rule"].as_str().unwrap().to_owned());
    }
    found
}

/// The recorded session at `path`, whole, validates: `results` tools/call results, each valid
/// against the contract and the schema its tool advertised (and every tool advertises one).
pub fn validates_whole(path: &str, results: u64) {
    let messages = session(path);
    let (code, findings, summary) = verdict(&["--ndjson", "-"], &ndjson(&messages));
    assert_eq!(code, 0, "{path}: {findings:?}");
    assert_eq!(summary["documents"], results, "{path}: {summary}");
    assert_eq!(summary["valid"], results, "{path}: {summary}");
    assert!(every_tool_advertises_a_schema(&messages), "{path}");
}

/// The id of the `n`th call (from 0) whose arguments hold `needle`.
pub fn nth_call_with(messages: &[Value], needle: &str, n: usize) -> String {
    messages
        .iter()
        .filter(|m| {
            m["method"] == "tools/call" && m["params"]["arguments"].to_string().contains(needle)
        })
        .nth(n)
        .expect("the call")["id"]
        .to_string()
}
