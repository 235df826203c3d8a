//! The `RateLimit-Policy` and `RateLimit` fields held to an outside RFC 9651 reader
//! (`http-sf` from the package index, pinned in `tests/python/sf-requirements.txt`): every
//! value the crate writes, at and past every bound of every parameter (`q`, `w`, `r`, `t`),
//! parses as a list of one item whose parameters read back as the crate meant them (clamped
//! at the sf-integer bound, never wrapped).
//!
//! Needs Python 3.10 or newer with venv and pip; the parser is installed in a virtual
//! environment of the tests' own, from the package index, the first time.
#![cfg(feature = "http")]

#[path = "support/venv.rs"]
mod venv;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_tool_result::http::ratelimit::{MAX_SF_INTEGER, Quota};
use serde_json::{Value, json};

/// Each of `fields`, as `http-sf` reads it.
fn parsed(fields: &[String]) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("python");
    let python = venv::python_with(
        &dir.join("sf-requirements.txt"),
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    );
    let mut child = Command::new(python)
        .arg(dir.join("sf_parse.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the parser starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(fields.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn every_ratelimit_field_the_crate_writes_is_one_an_outside_parser_reads() {
    let second = Duration::from_secs(1);
    let counts = [
        0,
        1,
        10,
        MAX_SF_INTEGER - 1,
        MAX_SF_INTEGER,
        MAX_SF_INTEGER + 1,
        u64::MAX,
    ];
    let resets = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_millis(1500),
        Duration::from_secs(MAX_SF_INTEGER - 1) + Duration::from_nanos(1),
        Duration::from_secs(MAX_SF_INTEGER),
        Duration::from_secs(MAX_SF_INTEGER) + Duration::from_nanos(1),
        Duration::from_secs(u64::MAX),
        Duration::MAX,
    ];
    let clamp = |n: u64| n.min(MAX_SF_INTEGER);
    let mut fields = Vec::new();
    let mut expected = Vec::new();
    for quota in counts {
        for window in [1, 60, MAX_SF_INTEGER, MAX_SF_INTEGER + 1, u64::MAX] {
            // A policy the field could not carry is refused when built.
            let Ok(policy) = Quota::new("per-account", quota, Duration::from_secs(window)) else {
                assert!(quota > MAX_SF_INTEGER || window > MAX_SF_INTEGER);
                continue;
            };
            fields.push(policy.policy().to_str().unwrap().to_owned());
            expected.push(json!([["per-account", { "q": quota, "w": window }]]));
        }
    }
    let quota = Quota::new("q", 10, second).unwrap();
    for remaining in counts {
        for reset in resets {
            fields.push(quota.status(remaining, reset).to_str().unwrap().to_owned());
            let seconds = reset
                .as_secs()
                .saturating_add(u64::from(reset.subsec_nanos() > 0));
            expected.push(json!([["q", { "r": clamp(remaining), "t": clamp(seconds) }]]));
        }
    }
    let read = parsed(&fields);
    assert_eq!(read.len(), fields.len());
    for ((field, read), expected) in fields.iter().zip(&read).zip(&expected) {
        assert_eq!(read, expected, "{field}");
    }
}
