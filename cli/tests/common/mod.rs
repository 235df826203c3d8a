//! Running the built `atr` binary, shared by the CLI tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

pub fn atr() -> Command {
    let mut command = Command::cargo_bin("atr").unwrap();
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
