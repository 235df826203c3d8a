//! Real agent loops, offline: a `PydanticAI` agent (its model a function) through the official
//! Python MCP SDK client, and a Vercel AI SDK agent (its mock model) through the official
//! TypeScript MCP SDK client, each driving the campaign service with the agent-side package's
//! adapter. A policy deny becomes `ApprovalRequired` (the run ends asking for approval); a
//! call over the account's rate limit waits `Retry-After` and is sent again with the same key,
//! and the provider sends it once; a deferred batch ends the run with the call deferred (the
//! Vercel AI SDK's model reads `look-up`) and the campaign is looked up with the tool the
//! answer names.
//!
//! Needs Python 3.10 or newer with venv and pip, and Node.js 20 or newer with npm; what they
//! install comes from the package indexes the first time.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{Scratch, Service, TOKEN, provider_sends};

const OPTED_OUT: &str = "+15550100000";

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A service with an opted-out number, a cap of two sends a window, and a limit of one
/// guarantee call a second for its account.
fn service(name: &str) -> (Scratch, Service) {
    let scratch = Scratch::new(name);
    let flags = [
        "--cap",
        "2",
        "--window-secs",
        "3600",
        "--opt-out",
        OPTED_OUT,
        "--rate-limit",
        "1",
        "--rate-window-secs",
        "1",
    ];
    let service = Service::start(scratch.db(), &flags);
    (scratch, service)
}

/// Runs `command` and reads the one JSON line it prints.
fn report(mut command: Command, what: &str) -> Value {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("{what}: {err}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Among `calls` (each `{ key, reading }`), those of the action whose key `key` is: each
/// refused `rate-limited` until the last, which was sent.
fn waited_then_sent(calls: &[Value], key: &Value) -> usize {
    let same: Vec<&Value> = calls.iter().filter(|call| &call["key"] == key).collect();
    let (last, before) = same.split_last().expect("the action was called");
    assert_eq!(last["reading"]["decision"], "continue", "{same:?}");
    for refused in before {
        assert_eq!(refused["reading"]["refusal"], "rate-limited", "{same:?}");
    }
    same.len()
}

/// The lookup of a deferred batch of four under a cap of two: two sent, two held.
fn two_held_of_four(lookup: &Value) {
    let counts = &lookup["result"]["counts"];
    assert_eq!(
        (&counts["requested"], &counts["held"]),
        (&Value::from(4), &Value::from(2)),
        "{lookup}"
    );
}

/// Where the sends land: each of `texts` once, nothing to the opted-out number.
fn each_sent_once(scratch: &Scratch, texts: [&str; 2]) {
    let sends = provider_sends(&scratch.db());
    let to = |phone: &str| sends.iter().filter(|(_, to)| to == phone).count();
    assert_eq!(
        (to(texts[0]), to(texts[1]), to(OPTED_OUT)),
        (1, 1, 0),
        "{sends:?}"
    );
}

#[test]
fn a_pydantic_ai_agent_asks_approval_waits_out_a_limit_and_looks_a_defer_up() {
    let (scratch, service) = service("agent-python");
    let python = support::venv::python_with(
        &root().join("agents/python/requirements-dev.txt"),
        &root().join("target/agents"),
    );
    let mut command = Command::new(python);
    command
        .arg(root().join("agents/python/loops/campaign.py"))
        .args([&format!("{}/mcp", service.base), TOKEN, OPTED_OUT])
        .env("PYTHONPATH", root().join("agents/python/src"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let report = report(command, "the PydanticAI loop");
    // The deny asked for approval, naming the policy.
    assert_eq!(report["deny"]["decision"], "ask-person");
    assert_eq!(report["deny"]["policyCode"], "contact_opted_out");
    // Each text was refused at the limit, waited out and sent again with its key, at least
    // the second (the first may land after the deny's second has passed).
    let calls = report["limited"]["calls"].as_array().unwrap();
    let keys: Vec<&Value> = calls.iter().map(|call| &call["key"]).collect();
    let second = keys.last().unwrap();
    assert!(waited_then_sent(calls, second) >= 2, "{calls:?}");
    assert_ne!(keys[0], *second, "two texts are two actions, two keys");
    // The defer was looked up with the tool its answer names: two sent, two held.
    assert_eq!(report["deferred"]["reading"]["decision"], "look-up");
    assert_eq!(
        report["deferred"]["reading"]["nextTool"],
        "lookup_marketing_campaigns"
    );
    two_held_of_four(&report["deferred"]["lookup"]);
    each_sent_once(&scratch, ["+15550200001", "+15550200002"]);
}

#[test]
fn a_vercel_ai_agent_reads_a_deny_waits_out_a_limit_and_looks_a_defer_up() {
    let (scratch, service) = service("agent-typescript");
    let package = support::typescript::installed(&root().join("agents/typescript"));
    let built = Command::new("npm")
        .args(["run", "build", "--silent"])
        .current_dir(&package)
        .status()
        .unwrap();
    assert!(built.success(), "the npm package builds");
    let mut command = Command::new("node");
    command.arg(package.join("loops/campaign.mjs")).args([
        &format!("{}/mcp", service.base),
        TOKEN,
        OPTED_OUT,
    ]);
    let report = report(command, "the Vercel AI SDK loop");
    // The model read what to do next from the deny.
    assert_eq!(report["denied"]["reading"]["decision"], "ask-person");
    assert_eq!(
        report["denied"]["reading"]["policyCode"],
        "contact_opted_out"
    );
    // Both texts were sent; the second at least waited out the limit with its key.
    for text in ["first", "second"] {
        assert_eq!(report[text]["settlement"]["state"], "committed", "{report}");
    }
    let calls = report["calls"].as_array().unwrap();
    assert!(
        waited_then_sent(calls, &calls.last().unwrap()["key"]) >= 2,
        "{calls:?}"
    );
    // The defer: the model read that the campaign is to be looked up, and it was.
    assert_eq!(report["deferred"]["decision"], "look-up");
    two_held_of_four(&report["lookup"]);
    each_sent_once(&scratch, ["+15550400001", "+15550400002"]);
}
