//! `atr` under hostile conditions: link loops, FIFOs, absurd flags, documents that try to
//! forge output, closed pipes, byte order marks and bytes that are not UTF-8.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use common::{atr, run, scratch};
use serde_json::Value;

fn summary(stdout: &str) -> Value {
    let last = stdout.lines().last().expect("a summary line");
    serde_json::from_str::<Value>(last).unwrap()["summary"].clone()
}

/// Links back to the directory itself, twice, and two links to one sibling: every directory
/// is walked once and every file checked once; a FIFO named like a document is passed over.
#[cfg(unix)]
#[test]
fn each_directory_is_walked_once_and_only_regular_files_are_read() {
    use std::os::unix::fs::symlink;
    let dir = scratch("loops");
    fs::write(dir.join("one.json"), br#"{"ok":true}"#).unwrap();
    fs::create_dir(dir.join("sub")).unwrap();
    fs::write(dir.join("sub/two.json"), br#"{"ok":true}"#).unwrap();
    symlink(".", dir.join("a")).unwrap();
    symlink(".", dir.join("b")).unwrap();
    symlink("sub", dir.join("c")).unwrap();
    symlink("../sub", dir.join("sub/d")).unwrap();
    let fifo = dir.join("x.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let out = atr()
        .args(["validate", "--format", "json", dir.to_str().unwrap()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(summary(&stdout)["documents"], 2, "{stdout}");
}

/// `--jobs` is bounded: huge values are a usage error, never a panic or a hang.
#[test]
fn jobs_is_bounded() {
    for jobs in [
        "18446744073709551615",
        "9223372036854775808",
        "0",
        "257",
        "-1",
        "x",
    ] {
        let out = atr()
            .args(["validate", "--jobs", jobs, "-"])
            .write_stdin(r#"{"ok":true}"#)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--jobs {jobs}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--jobs") || stderr.contains(jobs),
            "{jobs}: {stderr}"
        );
    }
    let out = run(&["validate", "--jobs", "256", "-"], Some(br#"{"ok":true}"#));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// Keys and values echoed from a document cannot forge a finding line or reach the terminal
/// as escape sequences, in any format.
#[test]
fn control_characters_are_escaped_in_every_echo() {
    let document = "{\"ok\":true,\"x\\nexamples/fake.json:1:1: error[forged] /: gotcha\":1,\"\\u001b[31mred\\u001b[0m\":2,\"\\u202eevil\":3}";
    let human = run(&["validate", "-"], Some(document.as_bytes()));
    assert_eq!(human.code, 1);
    assert!(!human.stdout.contains('\u{1b}'), "{:?}", human.stdout);
    assert!(!human.stdout.contains('\u{202e}'), "{:?}", human.stdout);
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "three findings and a summary: {lines:#?}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("-:") || l.contains(" checked: "))
    );
    assert!(
        human.stdout.contains("x\\u{a}examples/fake.json"),
        "{}",
        human.stdout
    );
    let github = run(
        &["validate", "--format", "github", "-"],
        Some(document.as_bytes()),
    );
    assert!(!github.stdout.contains('\u{1b}'));
    assert_eq!(github.stdout.lines().count(), 4, "{}", github.stdout);
    // A file name is echoed too.
    let dir = scratch("names");
    let name = dir.join("bad\u{1b}[2Jname.json");
    fs::write(&name, b"{}").unwrap();
    let out = run(&["validate", name.to_str().unwrap()], None);
    assert_eq!(out.code, 1);
    assert!(!out.stdout.contains('\u{1b}'), "{:?}", out.stdout);
}

/// A reader that goes away does not change what the exit status says.
#[test]
fn a_closed_pipe_keeps_the_exit_status() {
    let dir = scratch("pipe");
    for (name, line, expected) in [
        ("valid.ndjson", r#"{"ok":true,"result":{"n":1}}"#, 0),
        ("invalid.ndjson", r#"{"ok":false,"x":1}"#, 1),
    ] {
        let path = dir.join(name);
        let mut text = String::new();
        for _ in 0..100_000 {
            text.push_str(line);
            text.push('\n');
        }
        fs::write(&path, text).unwrap();
        let mut child = std::process::Command::new(common::atr_path())
            .args(["validate", "--format", "json", path.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader is gone; atr meets a closed pipe on its next write.
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(expected), "{name}: first line {first}");
    }
}

/// A byte order mark is named; bytes that are not UTF-8 are an invalid document (exit 1) to
/// every subcommand that reads one.
#[test]
fn byte_order_marks_and_bad_encodings_say_what_they_are() {
    let bom = b"\xEF\xBB\xBF{\"ok\":true}";
    let out = run(&["validate", "-"], Some(bom));
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("byte order mark"), "{}", out.stdout);
    let latin1: &[u8] = b"{\"ok\":false,\"error\":{\"code\":\"x\",\"category\":\"internal\",\"detail\":\"caf\xe9\"}}";
    for args in [
        &["validate", "-"][..],
        &["mcp", "-"][..],
        &["mcp", "--read", "-"][..],
        &["migrate", "-"][..],
    ] {
        let out = atr().args(args).write_stdin(latin1).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.contains("not UTF-8"), "{args:?}: {text}");
    }
}

/// An empty `.json` file is a document that is not JSON; an empty `.ndjson` stream holds no
/// documents.
#[test]
fn empty_inputs() {
    let dir = scratch("empty");
    fs::write(dir.join("empty.json"), b"").unwrap();
    fs::write(dir.join("empty.ndjson"), b"").unwrap();
    fs::write(dir.join("blank.ndjson"), b"\n  \n").unwrap();
    let json = run(
        &["validate", dir.join("empty.json").to_str().unwrap()],
        None,
    );
    assert_eq!(json.code, 1);
    assert!(
        json.stdout.contains("the document is empty"),
        "{}",
        json.stdout
    );
    for name in ["empty.ndjson", "blank.ndjson"] {
        let path = dir.join(name);
        // A stream without documents checked nothing: a failure unless that is expected.
        let out = run(&["validate", path.to_str().unwrap()], None);
        assert_eq!(out.code, 2, "{name}");
        assert!(out.stdout.contains("0 documents checked"), "{}", out.stdout);
        assert!(out.stderr.contains("--allow-empty"), "{}", out.stderr);
        let out = run(&["validate", "--allow-empty", path.to_str().unwrap()], None);
        assert_eq!(out.code, 0, "{name}");
    }
}

/// A walk skips what git and ripgrep skip: hidden entries, and what `.gitignore` (in a git
/// repository) and `.ignore` files exclude, such as `target/` and `node_modules/`; a path named
/// on the command line is read all the same, and `--no-ignore` walks everything.
#[test]
fn a_walk_skips_what_git_ignores_unless_told_not_to() {
    let dir = scratch("ignored");
    let valid = br#"{"ok":true}"#;
    for sub in ["src", "target", "node_modules/pkg", ".cache", "local"] {
        fs::create_dir_all(dir.join(sub)).unwrap();
        fs::write(dir.join(sub).join("a.json"), valid).unwrap();
    }
    fs::write(dir.join(".hidden.json"), valid).unwrap();
    fs::write(dir.join(".gitignore"), "target/\nnode_modules/\n").unwrap();
    fs::write(dir.join(".ignore"), "local/\n").unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status();
    assert!(
        git.is_ok_and(|s| s.success()),
        "the test needs git: install it"
    );
    let root = dir.to_str().unwrap();
    let summary = |args: &[&str]| {
        let out = run(args, None);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
        last["summary"]["documents"].as_u64().unwrap()
    };
    assert_eq!(
        summary(&["validate", "--format", "json", root]),
        1,
        "only src/a.json"
    );
    assert_eq!(
        summary(&["validate", "--format", "json", "--no-ignore", root]),
        6,
        "every a.json and .hidden.json"
    );
    let named = dir.join("target/a.json");
    assert_eq!(
        summary(&[
            "validate",
            "--format",
            "json",
            root,
            named.to_str().unwrap()
        ]),
        2,
        "a named path is read"
    );
}
