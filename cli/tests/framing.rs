//! How `atr validate` frames a recorded session's lines, by family: a line is read as JSON-RPC
//! only when it is JSON (the framing does not read a response's result itself, and whoever
//! reads it must find it JSON), and a response is judged the same whatever the order of its
//! members, its whitespace, or what follows its result.

use crate::common;

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Value, json};

const SESSIONS: [&str; 6] = [
    "cli/tests/fixtures/sessions/typescript-v1.ndjson",
    "cli/tests/fixtures/sessions/typescript-v2.ndjson",
    "cli/tests/fixtures/sessions/python.ndjson",
    "cli/tests/fixtures/sessions/http-typescript-v1.ndjson",
    "cli/tests/fixtures/sessions/http-typescript-v2.ndjson",
    "cli/tests/fixtures/sessions/http-python.ndjson",
];

/// Each finding of `atr validate --format json --ndjson` on `lines`, by line: its rule and
/// pointer.
fn findings(name: &str, lines: &[String]) -> BTreeMap<usize, Vec<(String, String)>> {
    let dir = common::scratch(name);
    let input = dir.join("lines.ndjson");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = common::run(
        &[
            "validate",
            "--format",
            "json",
            "--ndjson",
            input.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.code <= 1, "{}", out.stderr);
    let mut by_line: BTreeMap<usize, Vec<(String, String)>> = BTreeMap::new();
    for record in out.stdout.lines() {
        let record: Value = serde_json::from_str(record).unwrap();
        if let Some(line) = record["line"].as_u64() {
            by_line
                .entry(usize::try_from(line).unwrap())
                .or_default()
                .push((
                    record["rule"].as_str().unwrap().to_owned(),
                    record["pointer"].as_str().unwrap().to_owned(),
                ));
        }
    }
    by_line
}

/// Every line of the recorded sessions, cut short after each character, and with each byte in
/// turn made a quote, a backslash, a closing brace, a comma or a control character (a long
/// line, the listing, at 300 places spread over it): a line that is not JSON is refused as a
/// document that is not (`well-formed-json` at its root), wherever it breaks (in a result the
/// framing does not read, in a request's params, in a name), and a line that is JSON never is.
#[test]
fn a_line_is_read_as_messages_only_when_it_is_json() {
    let mut recorded = std::collections::BTreeSet::new();
    for path in SESSIONS {
        let text = std::fs::read_to_string(common::root().join(path)).unwrap();
        recorded.extend(text.lines().map(str::to_owned));
    }
    let mut lines = Vec::new();
    for line in &recorded {
        let step = (line.len() / 300).max(1);
        let places = (0..line.len()).step_by(step);
        for at in places
            .clone()
            .skip(1)
            .filter(|&at| line.is_char_boundary(at))
        {
            lines.push(line[..at].to_owned());
        }
        for at in places.filter(|&at| line.is_char_boundary(at) && line.is_char_boundary(at + 1)) {
            for byte in ["\"", "\\", "}", ",", "\u{1}"] {
                let mut broken = line.clone();
                broken.replace_range(at..=at, byte);
                lines.push(broken);
            }
        }
    }
    let findings = findings("framing-json", &lines);
    let (mut not_json, mut json) = (0, 0);
    for (at, line) in lines.iter().enumerate() {
        let refused = findings
            .get(&(at + 1))
            .is_some_and(|found| found.contains(&("well-formed-json".to_owned(), String::new())));
        if serde_json::from_str::<&RawValue>(line).is_err() {
            not_json += 1;
            assert!(refused, "line {}: not JSON, not refused: {line}", at + 1);
        } else if serde_json::from_str::<Value>(line).is_ok() {
            json += 1;
            assert!(!refused, "line {}: JSON, refused: {line}", at + 1);
        }
    }
    // Both kinds are many: the family is covered from both sides.
    assert!(not_json > 5_000 && json > 1_000, "{not_json} {json}");
}

/// Every `tools/call` response of the recorded sessions (a third of them with `isError`
/// turned, another third with a `structuredContent` that fits neither the envelope nor the
/// tool's schema), written six ways: as the server wrote it, its result first, its result
/// between `jsonrpc` and `id`, a member after its result (whose text holds a closing brace),
/// with whitespace between every token, and with its result spread over spaces. Each way is
/// judged the same: the same rules at the same pointers.
#[test]
fn a_response_is_judged_the_same_whatever_its_members_order() {
    let mut lines = Vec::new();
    // Which pair and which way each line is, for the responses.
    let mut ways: Vec<Option<(usize, usize)>> = Vec::new();
    let mut pair = 0;
    for path in SESSIONS {
        let text = std::fs::read_to_string(common::root().join(path)).unwrap();
        let messages: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        // The opening (initialize, the listing) as recorded.
        for (line, message) in text.lines().zip(&messages) {
            if message["method"] == "tools/call" {
                break;
            }
            lines.push(line.to_owned());
            ways.push(None);
        }
        for call in messages.iter().filter(|m| m["method"] == "tools/call") {
            let answer = messages
                .iter()
                .find(|m| m.get("method").is_none() && m["id"] == call["id"])
                .unwrap();
            let mut result = answer["result"].clone();
            match pair % 3 {
                1 => result["isError"] = json!(!result["isError"].as_bool().unwrap_or(false)),
                2 => result["structuredContent"] = json!({ "ok": "yes" }),
                _ => {}
            }
            let compact = result.to_string();
            let spread = serde_json::to_string_pretty(&result)
                .unwrap()
                .replace('\n', " ");
            for way in 0..6 {
                let id = json!(format!("{pair}-{way}"));
                let mut request = call.clone();
                request["id"] = id.clone();
                lines.push(request.to_string());
                ways.push(None);
                lines.push(match way {
                    0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{compact}}}"#),
                    1 => format!(r#"{{"result":{compact},"jsonrpc":"2.0","id":{id}}}"#),
                    2 => format!(r#"{{"jsonrpc":"2.0","result":{compact},"id":{id}}}"#),
                    3 => format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{compact},"_meta":{{"note":"}}"}}}}"#
                    ),
                    4 => format!(
                        " {{ \"jsonrpc\" : \"2.0\" ,\t\"id\" : {id} , \"result\" : {compact} }}\r"
                    ),
                    _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{spread}}}"#),
                });
                ways.push(Some((pair, way)));
            }
            pair += 1;
        }
    }
    let findings = findings("framing-order", &lines);
    let mut judged: BTreeMap<usize, Vec<Vec<(String, String)>>> = BTreeMap::new();
    for (at, way) in ways.iter().enumerate() {
        if let Some((pair, _)) = way {
            let mut found = findings.get(&(at + 1)).cloned().unwrap_or_default();
            found.sort();
            judged.entry(*pair).or_default().push(found);
        }
    }
    let mut broken = 0;
    for (pair, each_way) in &judged {
        assert!(
            each_way.iter().all(|found| found == &each_way[0]),
            "pair {pair}: {each_way:?}"
        );
        broken += usize::from(!each_way[0].is_empty());
    }
    // The results broken on purpose are found (every way alike).
    assert!(
        broken >= 2 * judged.len() / 3,
        "{broken} of {}",
        judged.len()
    );
}
