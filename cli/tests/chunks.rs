//! NDJSON larger than the chunks `atr validate` reads it in: every line is checked once, at
//! its own line number, whatever the chunk boundaries and however many threads check it.

use crate::common;

use std::fs;

use common::{run, scratch};
use serde_json::Value;

/// Lines of every length around a chunk's size, some broken, some blank, some CRLF.
fn corpus() -> (String, Vec<u64>) {
    let mut text = String::new();
    let mut broken = Vec::new();
    for n in 1..=6000_u64 {
        let pad = "x".repeat(usize::try_from(n * 37 % 900).unwrap());
        let line = match n % 97 {
            0 => {
                broken.push(n);
                format!(r#"{{"ok":"yes","result":{{"pad":"{pad}"}}}}"#)
            }
            13 => String::new(),
            29 => format!("{{\"ok\":true,\"result\":{{\"pad\":\"{pad}\"}}}}\r"),
            _ => format!(r#"{{"ok":true,"result":{{"pad":"{pad}","n":{n}}}}}"#),
        };
        text.push_str(&line);
        text.push('\n');
    }
    // A last line without its newline, broken, and one longer than a chunk before it.
    text.push_str(r#"{"ok":true,"result":{"big":""#);
    text.push_str(&"y".repeat(600 << 10));
    text.push_str("\"}}\n");
    text.push_str(r#"{"ok":false}"#);
    broken.push(6002);
    (text, broken)
}

#[test]
fn every_line_is_checked_once_at_its_own_line() {
    let dir = scratch("chunks");
    let (text, broken) = corpus();
    assert!(text.len() > 3 << 20, "several chunks: {}", text.len());
    let path = dir.join("big.ndjson");
    fs::write(&path, &text).unwrap();
    let path = path.to_str().unwrap();
    for jobs in ["1", "2", "3"] {
        let out = run(
            &["validate", "--jobs", jobs, "--format", "json", path],
            None,
        );
        assert_eq!(out.code, 1, "{}", out.stderr);
        let lines: Vec<Value> = out
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let (summary, findings) = lines.split_last().unwrap();
        let at: Vec<u64> = findings
            .iter()
            .map(|f| f["line"].as_u64().unwrap())
            .collect();
        assert_eq!(at, broken, "--jobs {jobs}");
        let blank = (1..=6000).filter(|n| n % 97 == 13).count() as u64;
        assert_eq!(summary["summary"]["documents"], 6002 - blank);
        assert_eq!(summary["summary"]["invalid"], broken.len());
    }
    // Standard input is read the same way.
    let out = run(
        &["validate", "--ndjson", "--format", "json", "-"],
        Some(text.as_bytes()),
    );
    let findings = out.stdout.lines().count() - 1;
    assert_eq!(findings, broken.len());
}
