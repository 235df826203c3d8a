//! Sessions recorded from the real SDK clients: the TypeScript SDK (1.x and 2.x) and the
//! Python SDK, each driving the crate's keyed example (a stdio server) through
//! `atr record`, which passes the session through and writes it as NDJSON. `atr validate`
//! then pairs every response with its request: each `tools/call` result is held to the
//! contract and to the `outputSchema` the same session's `tools/list` advertised, the other
//! methods' results are passed over, and nothing is found in what the SDKs accepted.
//!
//! The recordings `atr`'s own tests break on purpose (`cli/tests/fixtures/sessions/`) were
//! made by this test: `UPDATE_SESSIONS=1 cargo test -p campaigns --test recorded` writes them
//! anew. Without it, the test checks that each committed recording holds the same calls of
//! the same tools as the session it just recorded.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::Scratch;
use support::typescript::Sdk;

/// The SDKs, by the name of their recording.
const SDKS: [&str; 3] = ["typescript-v1", "typescript-v2", "python"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cli/tests/fixtures/sessions")
}

/// Records `sdk`'s session with the keyed example into `out`.
fn record(sdk: &str, out: &Path, ledger: &Path) {
    let atr = support::workspace_binary(&[], "atr");
    let server = support::keyed::server();
    let recorder = [
        atr.to_str().unwrap(),
        "record",
        "--out",
        out.to_str().unwrap(),
        "--",
        server.to_str().unwrap(),
    ];
    let env = [("NOTES_LEDGER", ledger.to_str().unwrap())];
    let steps = support::keyed::steps();
    let (tools, answers) = if sdk == "python" {
        let mut args = vec!["stdio"];
        args.extend_from_slice(&recorder);
        support::python::run_client(&args, &env, &steps)
    } else {
        let version = if sdk == "typescript-v1" {
            Sdk::V1
        } else {
            Sdk::V2
        };
        support::typescript::run_stdio_client(version, &recorder, &env, &steps)
    };
    // The SDK accepted every answer, as it does without the recorder between.
    support::keyed::check(&tools, &answers);
}

/// `atr validate --format json` on `session`: its exit status and summary.
fn validate(session: &Path) -> (i32, Value, String) {
    let atr = support::workspace_binary(&[], "atr");
    let out = Command::new(atr)
        .args(["validate", "--format", "json"])
        .arg(session)
        .output()
        .expect("atr runs");
    let text = String::from_utf8(out.stdout).unwrap();
    let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    (out.status.code().unwrap(), summary["summary"].clone(), text)
}

/// Each message's method (a response's is its request's) and, for a call, its tool, sorted:
/// what a session asked, whatever order the answers came in and whatever ids it used.
fn calls(session: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(session).unwrap();
    let mut asked = std::collections::HashMap::new();
    let mut calls: Vec<String> = Vec::new();
    for line in text.lines() {
        let message: Value = serde_json::from_str(line).unwrap();
        if let Some(method) = message["method"].as_str() {
            let what = match message["params"]["name"].as_str() {
                Some(tool) => format!("{method} {tool}"),
                None => method.to_owned(),
            };
            asked.insert(message["id"].to_string(), what.clone());
            calls.push(what);
        } else {
            let what = asked
                .get(&message["id"].to_string())
                .cloned()
                .unwrap_or_default();
            calls.push(format!("answer to {what}"));
        }
    }
    calls.sort();
    calls
}

#[test]
fn sessions_recorded_from_each_sdk_are_paired_and_held_to_the_advertised_schemas() {
    let update = std::env::var_os("UPDATE_SESSIONS").is_some();
    for sdk in SDKS {
        let scratch = Scratch::new(&format!("recorded-{sdk}"));
        let session = scratch.path().join(format!("{sdk}.ndjson"));
        record(sdk, &session, &scratch.db().with_extension("notes.db"));
        let (code, summary, text) = validate(&session);
        assert_eq!(code, 0, "{sdk}: {text}");
        // Six tools/call results (five calls and a replay), each checked against the schema
        // its tool advertised; initialize, tools/list, their requests, the notification and
        // the calls themselves passed over.
        assert_eq!(summary["documents"], 6, "{sdk}: {summary}");
        assert_eq!(summary["valid"], 6, "{sdk}: {summary}");
        assert_eq!(summary["lints"], 0, "{sdk}: {summary}");
        assert!(
            summary["passedOver"].as_u64().unwrap() >= 11,
            "{sdk}: {summary}"
        );
        let committed = fixtures().join(format!("{sdk}.ndjson"));
        if update {
            std::fs::create_dir_all(fixtures()).unwrap();
            std::fs::copy(&session, &committed).unwrap();
        }
        assert_eq!(
            calls(&committed),
            calls(&session),
            "{sdk}: the committed recording asks what a session asks now \
             (UPDATE_SESSIONS=1 records it anew)"
        );
    }
}
