//! The official Python MCP SDK client (`mcp`, pinned in `tests/python/requirements.txt`), run on
//! a list of calls in a virtual environment of its own: it validates `structuredContent`
//! against each tool's advertised `outputSchema`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The client's directory.
fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python")
}

/// The virtual environment's Python, with the pinned SDK installed.
fn python() -> PathBuf {
    super::venv::python_with(
        &client_dir().join("requirements.txt"),
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    )
}

/// Runs the Python client with `args` (`http URL TOKEN`, or `stdio COMMAND ARGS...`, with
/// `env` added) on `steps`: the tools it listed, and its answers, each checked as
/// [`super::sdk::answers_of`] checks them.
pub fn run_client(args: &[&str], env: &[(&str, &str)], steps: &Value) -> (Value, Vec<Vec<Value>>) {
    let mut client = Command::new(python());
    client
        .arg(client_dir().join("client.py"))
        .args(args)
        .envs(env.iter().copied());
    let report = super::sdk::run_sdk_client(client, "the Python client", steps);
    (report["tools"].clone(), super::sdk::answers_of(&report))
}
