//! The official TypeScript MCP SDK client (`@modelcontextprotocol/sdk`, pinned in
//! `tests/typescript/package-lock.json`), run on a list of calls: it validates
//! `structuredContent` against each tool's advertised `outputSchema`, on error results too.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::{Service, TOKEN};

/// The client's directory, with the SDK installed.
pub fn client_dir() -> PathBuf {
    installed(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/typescript"))
}

/// `dir`, an npm project, with its dependencies installed from its lockfile (`npm ci`, once).
pub fn installed(dir: &Path) -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let version = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .ok()
            .filter(|out| out.status.success())
    };
    assert!(
        version("node").is_some() && version("npm").is_some(),
        "this test drives the service with the official TypeScript MCP SDK: install Node.js 20 \
         or newer and npm (on Debian: apt-get install nodejs npm)"
    );
    // Every dependency the lockfile names is in node_modules (but those it marks optional,
    // which npm installs only on the platforms they are for).
    let lock: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package-lock.json")).unwrap())
            .unwrap();
    let complete = lock["packages"].as_object().is_some_and(|packages| {
        packages
            .iter()
            .filter(|(path, entry)| !path.is_empty() && entry["optional"] != true)
            .all(|(path, _)| dir.join(path).join("package.json").exists())
    });
    if !complete {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dir)
            .status()
            .expect("npm runs");
        assert!(
            status.success(),
            "npm ci failed in {}: the npm registry must be reachable the first time",
            dir.display()
        );
    }
    dir.to_path_buf()
}

/// Runs the TypeScript client on `steps` (each a list of calls made at once) and returns its
/// answers, one list per step.
pub fn run_client(service: &Service, steps: &Value) -> Vec<Vec<Value>> {
    run_client_of(Sdk::V1, service, steps)
}

/// The SDK a client is built on.
#[derive(Clone, Copy)]
pub enum Sdk {
    /// `@modelcontextprotocol/sdk` 1.x.
    V1,
    /// `@modelcontextprotocol/client` 2.x.
    V2,
    /// `@modelcontextprotocol/client` 2.x pinned to MCP 2026-07-28: stateless requests after
    /// `server/discover`.
    V2Stateless,
}

/// [`run_client`] with the client built on `sdk`.
pub fn run_client_of(sdk: Sdk, service: &Service, steps: &Value) -> Vec<Vec<Value>> {
    let url = format!("{}/mcp", service.base);
    let report = run_node(&[&url, TOKEN, sdk.name()], &[], steps);
    assert_eq!(
        report["tools"],
        json!([
            "lookup_marketing_campaigns",
            "lookup_opt_out",
            "lookup_sms",
            "opt_out",
            "send_campaign_batch",
            "send_sms"
        ])
    );
    // The tools' hints, as the SDK read them: each guarantee tool idempotent (per key) and
    // additive, each lookup read-only.
    let send = json!({
        "readOnlyHint": false,
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": true,
    });
    let lookup = json!({ "readOnlyHint": true, "openWorldHint": false });
    assert_eq!(
        report["annotations"],
        json!({
            "send_sms": send,
            "send_campaign_batch": send,
            "opt_out": send,
            "lookup_marketing_campaigns": lookup,
            "lookup_sms": lookup,
            "lookup_opt_out": lookup,
        })
    );
    // The revision each client negotiated: the 2025 one after `initialize`, or 2026-07-28 as
    // pinned (the 1.x client does not say).
    let revision = match sdk {
        Sdk::V1 => None,
        Sdk::V2 => Some("2025-11-25"),
        Sdk::V2Stateless => Some("2026-07-28"),
    };
    assert_eq!(report["revision"].as_str(), revision, "{report}");
    super::sdk::answers_of(&report)
}

/// The TypeScript client of `sdk` on the stdio server `command` (with `env` added to its
/// environment), on `steps`: the tools it listed, and its answers.
pub fn run_stdio_client(
    sdk: Sdk,
    command: &[&str],
    env: &[(&str, &str)],
    steps: &Value,
) -> (Value, Vec<Vec<Value>>) {
    let mut args = vec!["stdio", sdk.name()];
    args.extend_from_slice(command);
    let report = run_node(&args, env, steps);
    (report["tools"].clone(), super::sdk::answers_of(&report))
}

impl Sdk {
    fn name(self) -> &'static str {
        match self {
            Sdk::V1 => "v1",
            Sdk::V2 => "v2",
            Sdk::V2Stateless => "v2-2026-07-28",
        }
    }
}

/// Runs `client.mjs` with `args` on `steps`: its report.
/// Runs the client on `sdk` against the MCP endpoint at `url` with the test token: the tools
/// it listed and its answers.
pub fn run_http_client(sdk: Sdk, url: &str, steps: &Value) -> (Value, Vec<Vec<Value>>) {
    let report = run_node(&[url, TOKEN, sdk.name()], &[], steps);
    (report["tools"].clone(), super::sdk::answers_of(&report))
}

fn run_node(args: &[&str], env: &[(&str, &str)], steps: &Value) -> Value {
    let dir = client_dir();
    let mut node = Command::new("node");
    node.arg(dir.join("client.mjs"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(&dir);
    super::sdk::run_sdk_client(node, "the TypeScript client", steps)
}

pub fn sms(to: &str, key: impl Into<Value>) -> Value {
    let key: Value = key.into();
    json!({ "tool": "send_sms", "arguments": { "to": to, "body": "Your code is 4411", "idempotencyKey": key } })
}

/// A refusal: `isError`, and the problem's type and status.
pub fn assert_refused(answer: &Value, problem_type: &str, status: u16) {
    assert_eq!(answer["isError"], true, "{answer}");
    let problem = &answer["structuredContent"];
    assert_eq!(problem["type"], problem_type, "{answer}");
    assert_eq!(problem["status"], status, "{answer}");
    assert!(
        problem["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{answer}"
    );
}

pub const KEY_MISSING: &str = "https://agentsfirst.ai/problems/idempotency-key-missing";
pub const KEY_INVALID: &str = "https://agentsfirst.ai/problems/idempotency-key-invalid";
pub const KEY_MISMATCH: &str = "https://agentsfirst.ai/problems/idempotency-key-mismatch";
pub const KEY_IN_FLIGHT: &str = "https://agentsfirst.ai/problems/idempotency-key-in-flight";
