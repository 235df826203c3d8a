//! `atr record`: an MCP server's session, recorded as NDJSON while a client uses it. Over
//! stdio, the client starts `atr record --out FILE -- SERVER...` as its server; `atr` starts
//! the server, passes every line each way unchanged, and appends each message to the file in
//! the order it passed (the client's and the server's interleaved, as the session ran), so
//! that `atr validate FILE` pairs each response with its request. Over Streamable HTTP,
//! `atr record --out FILE --http ORIGIN` is a proxy the client is pointed at ([`http`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};

pub mod http;

/// Serves as a recording proxy on `listen` for the Streamable HTTP server at `upstream`,
/// until the process is stopped.
pub fn record_http(out: &Path, listen: &str, upstream: &str) -> Result<ExitCode, String> {
    let file =
        File::create(out).map_err(|err| format!("cannot create {}: {err}", out.display()))?;
    http::serve(
        listen,
        upstream,
        &Arc::new(Mutex::new(BufWriter::new(file))),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `server` (a program and its arguments) under the recording; its exit status.
pub fn record(out: &Path, server: &[String]) -> Result<ExitCode, String> {
    let (program, args) = server
        .split_first()
        .ok_or("record needs the server's command after `--`")?;
    let file =
        File::create(out).map_err(|err| format!("cannot create {}: {err}", out.display()))?;
    let log = Arc::new(Mutex::new(BufWriter::new(file)));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|err| format!("cannot start {program}: {err}"))?;
    let mut to_server = child.stdin.take().expect("piped");
    let from_server = child.stdout.take().expect("piped");
    // The server's lines to our standard output.
    let server_log = Arc::clone(&log);
    let server_side = std::thread::spawn(move || {
        let mut out = io::stdout().lock();
        relay(BufReader::new(from_server), &mut out, &server_log)
    });
    // Our standard input to the server's, until the client closes it.
    let asked = relay(io::stdin().lock(), &mut to_server, &log);
    drop(to_server);
    let status = child
        .wait()
        .map_err(|err| format!("{program} could not be waited for: {err}"))?;
    let relayed = server_side.join().unwrap_or(Ok(()));
    log.lock()
        .map_err(|_| "the recording's writer failed".to_owned())?
        .flush()
        .map_err(|err| format!("cannot write {}: {err}", out.display()))?;
    asked
        .and(relayed)
        .map_err(|err| format!("the session broke off: {err}"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// Copies `from` to `to` a line at a time, each line also appended to `log`; a closed
/// destination (the other side left) ends the copy quietly.
fn relay(
    mut from: impl BufRead,
    to: &mut impl Write,
    log: &Mutex<BufWriter<File>>,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if from.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        {
            let mut log = log.lock().map_err(|_| io::Error::other("the log's lock"))?;
            log.write_all(&line)?;
            if line.last() != Some(&b'\n') {
                log.write_all(b"\n")?;
            }
        }
        match to.write_all(&line).and_then(|()| to.flush()) {
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        }
    }
}
