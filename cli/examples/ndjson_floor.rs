//! The floor `atr validate` is measured against: read an NDJSON file as `atr` does (a 64 KiB
//! buffered reader, one line at a time) and parse each line with `serde_json` into
//! `serde::de::IgnoredAny`, validating nothing. Prints the lines read and how many were not
//! JSON.
//!
//! `cargo build --release -p agent-tool-result-cli --example ndjson_floor`, then
//! `target/release/examples/ndjson_floor FILE`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: ndjson_floor FILE");
        return ExitCode::from(2);
    };
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(err) => {
            eprintln!("ndjson_floor: {err}");
            return ExitCode::from(2);
        }
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let (mut lines, mut not_json) = (0_u64, 0_u64);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                eprintln!("ndjson_floor: {err}");
                return ExitCode::from(2);
            }
        }
        lines += 1;
        if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_err() {
            not_json += 1;
        }
    }
    println!("{lines} lines, {not_json} not JSON");
    ExitCode::SUCCESS
}
