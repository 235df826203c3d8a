//! Running the built `atr` binary, shared by the CLI tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

#[path = "../../../tests/support/built.rs"]
mod built;
pub mod sessions;
#[path = "../../../tests/support/venv.rs"]
pub mod venv;

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The `atr` the workspace builds, as the README's test command builds it.
pub fn atr_path() -> PathBuf {
    built::binary("atr")
}

/// The version of the package whose manifest is `manifest` (relative to the root).
pub fn version_of(manifest: &str) -> String {
    let text = fs::read_to_string(root().join(manifest)).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap()
        .to_owned()
}

/// The CLI's version, which `atr --version` prints.
pub fn cli_version() -> String {
    version_of("cli/Cargo.toml")
}

pub fn atr() -> Command {
    let mut command = Command::new(atr_path());
    command.current_dir(root());
    command
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut command = atr();
    command.args(args);
    if let Some(stdin) = stdin {
        command.write_stdin(stdin.to_vec());
    }
    let output = command.output().unwrap();
    Run {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A scratch directory under the target directory, fresh per test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = root().join("target").join("atr-cli-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
