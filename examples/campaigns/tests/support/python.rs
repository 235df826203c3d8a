//! The official Python MCP SDK client (`mcp`, pinned in `tests/python/requirements.txt`), run on
//! a list of calls in a virtual environment of its own: it validates `structuredContent`
//! against each tool's advertised `outputSchema`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

/// The client's directory.
fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python")
}

/// The virtual environment's Python, with the pinned SDK installed (from the package index, the
/// first time).
fn python() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let requirements = client_dir().join("requirements.txt");
    let pinned = std::fs::read_to_string(&requirements).unwrap();
    // One environment per pin: a new pin gets a new environment.
    let digest = pinned.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("python-mcp-{digest:016x}"));
    let python = venv.join("bin/python");
    if python.exists() {
        return python;
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status();
    assert!(
        made.is_ok_and(|status| status.success()),
        "this test drives the servers with the official Python MCP SDK: install Python 3.10 or \
         newer with venv and pip (on Debian: apt-get install python3 python3-venv)"
    );
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements)
        .status()
        .expect("pip runs");
    if !installed.success() {
        let _ = std::fs::remove_dir_all(&venv);
        panic!(
            "pip could not install {}: PyPI must be reachable the first time",
            requirements.display()
        );
    }
    python
}

/// Runs the Python client with `args` (`http URL TOKEN`, or `stdio COMMAND ARGS...`, with
/// `env` added) on `steps`: the tools it listed, and its answers, each checked as
/// [`super::answers_of`] checks them.
pub fn run_client(args: &[&str], env: &[(&str, &str)], steps: &Value) -> (Value, Vec<Vec<Value>>) {
    let mut client = Command::new(python());
    client
        .arg(client_dir().join("client.py"))
        .args(args)
        .envs(env.iter().copied());
    let report = super::run_sdk_client(client, "the Python client", steps);
    (report["tools"].clone(), super::answers_of(&report))
}
