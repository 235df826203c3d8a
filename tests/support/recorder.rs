//! `atr record --http`, started for a test: the recording proxy's process and the address it
//! listens at, read from the line it writes first on stderr.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Starts `atr` (the binary at `atr`) recording the Streamable HTTP server at `origin` into
/// `out`: the process, and the proxy's address (`http://127.0.0.1:PORT`) once it listens.
pub fn start(atr: &Path, out: &Path, origin: &str) -> (Child, String) {
    let mut recorder = Command::new(atr)
        .args(["record", "--out", out.to_str().unwrap(), "--http", origin])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // "atr: recording http://127.0.0.1:PORT for ..."
    let mut said = String::new();
    BufReader::new(recorder.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    let address = said
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("the recorder's address: {said}"))
        .to_owned();
    (recorder, address)
}
