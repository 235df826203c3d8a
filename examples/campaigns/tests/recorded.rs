//! Sessions recorded from the real SDK clients: the TypeScript SDK (1.x and 2.x) and the
//! Python SDK, each driving the crate's keyed example (a stdio server) through
//! `atr record`, which passes the session through and writes it as NDJSON, and each driving
//! the campaign service over Streamable HTTP through `atr record --http`, a recording proxy. `atr validate`
//! then pairs every response with its request: each `tools/call` result is held to the
//! contract and to the `outputSchema` the same session's `tools/list` advertised, the other
//! methods' results are passed over, and nothing is found in what the SDKs accepted.
//!
//! The recordings `atr`'s own tests break on purpose (`cli/tests/fixtures/sessions/`) were
//! made by this test: `UPDATE_SESSIONS=1 cargo test -p campaigns --test integration
//! recorded::` writes them anew. Without it, the test checks that each committed recording holds the same calls of
//! the same tools as the session it just recorded.

#[path = "../../../tests/support/recorder.rs"]
mod recorder;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::Scratch;
use support::typescript::{Sdk, sms};

/// A number that opted out, on the service the HTTP sessions use.
const OPTED_OUT: &str = "+15550100000";

/// The SDKs, by the name of their recording.
const SDKS: [&str; 3] = ["typescript-v1", "typescript-v2", "python"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cli/tests/fixtures/sessions")
}

/// Records `sdk`'s session with the keyed example into `out`.
fn record(sdk: &str, out: &Path, ledger: &Path) {
    let atr = support::workspace_binary("atr");
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
    let atr = support::workspace_binary("atr");
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

/// `session`, `sdk`'s recording, holds `results` tools/call results, each valid (checked
/// against the schema its tool advertised), and passes over the rest (initialize, tools/list,
/// the requests, the notification); the committed recording `name` asks what it asks
/// (`UPDATE_SESSIONS=1` writes it anew).
fn check_recording(sdk: &str, session: &Path, name: &str, results: u64) {
    let (code, summary, text) = validate(session);
    assert_eq!(code, 0, "{sdk}: {text}");
    assert_eq!(summary["documents"], results, "{sdk}: {summary}");
    assert_eq!(summary["valid"], results, "{sdk}: {summary}");
    assert_eq!(summary["lints"], 0, "{sdk}: {summary}");
    assert!(
        summary["passedOver"].as_u64().unwrap() >= results + 5,
        "{sdk}: {summary}"
    );
    let committed = fixtures().join(name);
    if std::env::var_os("UPDATE_SESSIONS").is_some() {
        std::fs::create_dir_all(fixtures()).unwrap();
        std::fs::copy(session, &committed).unwrap();
    }
    assert_eq!(
        calls(&committed),
        calls(session),
        "{sdk}: the committed recording asks what a session asks now \
         (UPDATE_SESSIONS=1 records it anew)"
    );
}

#[test]
fn sessions_recorded_from_each_sdk_are_paired_and_held_to_the_advertised_schemas() {
    for sdk in SDKS {
        let scratch = Scratch::new(&format!("recorded-{sdk}"));
        let session = scratch.path().join(format!("{sdk}.ndjson"));
        record(sdk, &session, &scratch.db().with_extension("notes.db"));
        // Five calls and a replay.
        check_recording(sdk, &session, &format!("{sdk}.ndjson"), 6);
    }
}

/// Records `sdk`'s session with the campaign service over Streamable HTTP into `out`, through
/// `atr record --http`; what the client was answered.
fn record_http(sdk: &str, out: &Path, scratch: &Scratch) -> Vec<Vec<Value>> {
    let service = support::Service::start(scratch.db(), &["--opt-out", OPTED_OUT]);
    let atr = support::workspace_binary("atr");
    let (mut recorder, proxy) = recorder::start(&atr, out, &service.base);
    let url = format!("{proxy}/mcp");
    let steps = serde_json::json!([
        [
            sms("+15550100001", format!("{sdk}-1")),
            sms(OPTED_OUT, format!("{sdk}-deny")),
            { "tool": "send_campaign_batch", "arguments": { "recipients": support::numbers(3),
              "message": "Winter sale", "idempotencyKey": format!("{sdk}-batch") } },
            { "tool": "send_sms", "arguments": { "to": "+15550100003", "body": "hi" } },
        ],
        [sms("+15550100001", format!("{sdk}-1"))],
    ]);
    let (_, answers) = match sdk {
        "python" => support::python::run_client(&["http", &url, support::TOKEN], &[], &steps),
        "typescript-v1" => support::typescript::run_http_client(Sdk::V1, &url, &steps),
        _ => support::typescript::run_http_client(Sdk::V2, &url, &steps),
    };
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    answers
}

#[test]
fn http_sessions_recorded_from_each_sdk_are_paired_and_held_to_the_advertised_schemas() {
    for sdk in SDKS {
        let scratch = Scratch::new(&format!("recorded-http-{sdk}"));
        let session = scratch.path().join(format!("http-{sdk}.ndjson"));
        let answers = record_http(sdk, &session, &scratch);
        // The client was answered through the proxy: a send, a deny, a batch, a call without
        // its key refused, and the first send's replay.
        assert_eq!(answers[0][0]["isError"], false, "{sdk}: {answers:?}");
        assert_eq!(answers[0][1]["isError"], true, "{sdk}: {answers:?}");
        assert_eq!(
            answers[1][0]["structuredContent"], answers[0][0]["structuredContent"],
            "{sdk}: the replay"
        );
        check_recording(sdk, &session, &format!("http-{sdk}.ndjson"), 5);
    }
}
