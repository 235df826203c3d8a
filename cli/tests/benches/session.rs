//! `atr validate` on a recorded session of 100,000 messages (the TypeScript SDK's session
//! with the keyed example, its calls repeated under fresh ids: 50,000 `tools/call` requests
//! and their results, after `initialize` and `tools/list`), against the same results
//! unwrapped, one a line (`--contract call-tool-result`): the session's framing, pairing and
//! advertised-schema checks on top of the contract's. Both runs of the release build,
//! alternated, 21 of each; reports each median and their ratio (goal: at most 1.5x).
//!
//! `cargo bench -p agent-tool-result-cli-tests --bench session`

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

const MESSAGES: usize = 100_000;
const RUNS: usize = 21;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The release `atr`, built.
fn atr() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--quiet", "--release", "--bin", "atr"])
        .status()
        .unwrap();
    assert!(status.success());
    root().join("target/release/atr")
}

/// The session and the unwrapped results, written to `dir`.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let recorded =
        std::fs::read_to_string(root().join("cli/tests/fixtures/sessions/typescript-v1.ndjson"))
            .unwrap();
    let messages: Vec<Value> = recorded
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let opening: Vec<&Value> = messages.iter().take(5).collect();
    let calls: Vec<(&Value, &Value)> = messages
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|call| {
            let answer = messages
                .iter()
                .find(|m| m.get("method").is_none() && m["id"] == call["id"])
                .unwrap();
            (call, answer)
        })
        .collect();
    let (mut session, mut bare) = (String::new(), String::new());
    for message in &opening {
        let _ = writeln!(session, "{message}");
    }
    let (mut id, mut written) = (100, opening.len());
    while written + 2 <= MESSAGES {
        written += 2;
        let (call, answer) = calls[id % calls.len()];
        let (mut call, mut answer) = (call.clone(), answer.clone());
        call["id"] = id.into();
        answer["id"] = id.into();
        let _ = writeln!(session, "{call}\n{answer}");
        let _ = writeln!(bare, "{}", answer["result"]);
        id += 1;
    }
    let (session_path, bare_path) = (dir.join("session.ndjson"), dir.join("bare.ndjson"));
    std::fs::write(&session_path, session).unwrap();
    std::fs::write(&bare_path, bare).unwrap();
    (session_path, bare_path)
}

fn time(atr: &Path, args: &[&str], input: &Path) -> Duration {
    let started = Instant::now();
    let out = Command::new(atr)
        .args(["validate", "--format", "json", "--ndjson"])
        .args(args)
        .arg(input)
        .output()
        .unwrap();
    let took = started.elapsed();
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.code() == Some(0), "{summary}");
    took
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let atr = atr();
    let dir = std::env::temp_dir().join(format!("atr-bench-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (session, bare) = inputs(&dir);
    let (mut wrapped, mut unwrapped) = (Vec::new(), Vec::new());
    // One of each to warm the page cache.
    time(&atr, &[], &session);
    time(&atr, &["--contract", "call-tool-result"], &bare);
    for _ in 0..RUNS {
        wrapped.push(time(&atr, &[], &session));
        unwrapped.push(time(&atr, &["--contract", "call-tool-result"], &bare));
    }
    let (wrapped, unwrapped) = (median(wrapped), median(unwrapped));
    println!(
        "atr validate, a recorded session of {MESSAGES} messages against its results unwrapped:"
    );
    println!("  the session:           {wrapped:?} (median of {RUNS})");
    println!("  the results unwrapped: {unwrapped:?}");
    println!(
        "  ratio {:.2}x (goal at most 1.5x)",
        wrapped.as_secs_f64() / unwrapped.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
