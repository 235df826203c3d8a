//! `atr validate`: inputs, documents, and checking them on every core in input order.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use agent_tool_result::{Finding, Report, Rule, Validator};

/// What the documents are taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Contract {
    /// Result envelopes.
    Envelope,
    /// MCP `tools/call` results, whose envelope is then checked too.
    CallToolResult,
    /// By shape: an object with `content` is a `tools/call` result, anything else an envelope.
    Auto,
}

/// One input named on the command line, after directories are walked.
#[derive(Clone, Debug)]
pub struct Input {
    /// The path as shown in findings; `-` for standard input.
    pub label: String,
    path: Option<PathBuf>,
    lines: bool,
    /// The size in bytes, when known, for the progress bar.
    pub size: u64,
}

/// What the walk over the named paths produced, in order.
pub enum Source {
    /// A file (or standard input) to read.
    Input(Input),
    /// A path that could not be read or walked.
    Error(String),
}

/// The inputs the paths name: files as they are; directories walked for `*.json`, `*.ndjson`
/// and `*.jsonl` in name order; `-` for standard input.
pub fn sources(paths: &[PathBuf], force_lines: bool) -> Vec<Source> {
    let mut out = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            out.push(Source::Input(Input {
                label: "-".to_owned(),
                path: None,
                lines: force_lines,
                size: 0,
            }));
            continue;
        }
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, force_lines, &mut out),
            Ok(meta) => out.push(Source::Input(input(path, meta.len(), force_lines))),
            Err(err) => out.push(Source::Error(format!(
                "cannot read {}: {err}",
                path.display()
            ))),
        }
    }
    out
}

fn input(path: &Path, size: u64, force_lines: bool) -> Input {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    Input {
        label: path.display().to_string(),
        path: Some(path.to_owned()),
        lines: force_lines || matches!(extension, "ndjson" | "jsonl"),
        size,
    }
}

fn walk(dir: &Path, force_lines: bool, out: &mut Vec<Source>) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            out.push(Source::Error(format!(
                "cannot read {}: {err}",
                dir.display()
            )));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => paths.push(entry.path()),
            Err(err) => out.push(Source::Error(format!(
                "cannot read an entry of {}: {err}",
                dir.display()
            ))),
        }
    }
    paths.sort();
    for path in paths {
        let named = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "json" | "ndjson" | "jsonl"));
        match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => walk(&path, force_lines, out),
            Ok(meta) if named => out.push(Source::Input(input(&path, meta.len(), force_lines))),
            Err(err) if named => out.push(Source::Error(format!(
                "cannot read {}: {err}",
                path.display()
            ))),
            Ok(_) | Err(_) => {}
        }
    }
}

/// One document: where it is and its bytes.
pub struct Document {
    /// The input's label.
    pub file: Arc<str>,
    /// The line it starts on (1 for a whole-file document).
    pub line: usize,
    bytes: Vec<u8>,
}

/// The checked document, or an I/O error met while reading, in input order.
pub enum Outcome {
    /// A checked document and its findings.
    Checked {
        /// The input's label.
        file: Arc<str>,
        /// The line the document starts on.
        line: usize,
        /// Its findings, positions relative to the file.
        report: Report,
    },
    /// An input that could not be read (the rest is still checked).
    IoError(String),
}

/// Documents handed to a worker at a time.
const BATCH: usize = 256;

enum Item {
    Document(Document),
    IoError(String),
}

/// Reads the sources and checks every document on `workers` threads, calling `emit` with each
/// outcome in input order and `progress` with bytes read. Memory stays bounded: a few batches
/// are in flight at a time.
pub fn run(
    sources: Vec<Source>,
    contract: Contract,
    workers: usize,
    progress: &(dyn Fn(u64) + Sync),
    emit: &mut dyn FnMut(Outcome),
) {
    let (work_tx, work_rx) = sync_channel::<(usize, Vec<Item>)>(workers * 2);
    let (done_tx, done_rx) = sync_channel::<(usize, Vec<Outcome>)>(workers * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    std::thread::scope(|scope| {
        scope.spawn(move || read_all(sources, &work_tx, progress));
        for _ in 0..workers {
            let work_rx = Arc::clone(&work_rx);
            let done_tx = done_tx.clone();
            scope.spawn(move || check_batches(&work_rx, &done_tx, contract));
        }
        drop(done_tx);
        let mut pending = std::collections::BTreeMap::new();
        let mut next = 0;
        for (sequence, outcomes) in done_rx {
            pending.insert(sequence, outcomes);
            while let Some(outcomes) = pending.remove(&next) {
                outcomes.into_iter().for_each(&mut *emit);
                next += 1;
            }
        }
    });
}

fn check_batches(
    work: &Mutex<Receiver<(usize, Vec<Item>)>>,
    done: &SyncSender<(usize, Vec<Outcome>)>,
    contract: Contract,
) {
    let validator = Validator::shared();
    loop {
        let Ok((sequence, items)) = work
            .lock()
            .expect("no worker panics holding the lock")
            .recv()
        else {
            return;
        };
        let outcomes = items
            .into_iter()
            .map(|item| match item {
                Item::IoError(message) => Outcome::IoError(message),
                Item::Document(document) => check(validator, document, contract),
            })
            .collect();
        if done.send((sequence, outcomes)).is_err() {
            return;
        }
    }
}

/// Checks one document.
fn check(validator: &Validator, document: Document, contract: Contract) -> Outcome {
    let report = match std::str::from_utf8(&document.bytes) {
        Err(err) => single(
            Rule::WellFormedJson,
            format!(
                "the document is not UTF-8 (invalid byte at offset {})",
                err.valid_up_to()
            ),
        ),
        Ok(text) if text.trim().is_empty() => {
            single(Rule::WellFormedJson, "the document is empty".to_owned())
        }
        Ok(text) => match contract {
            Contract::Envelope => validator.validate_text(text),
            Contract::CallToolResult => validator.validate_call_tool_result_text(text),
            Contract::Auto => validator.validate_any_text(text),
        },
    };
    Outcome::Checked {
        file: document.file,
        line: document.line,
        report,
    }
}

fn single(rule: Rule, message: String) -> Report {
    Report::new(vec![Finding::new(rule, "", message).at(1, 1)], Vec::new())
}

/// Reads every source into batches of documents, in order.
fn read_all(
    sources: Vec<Source>,
    work: &SyncSender<(usize, Vec<Item>)>,
    progress: &(dyn Fn(u64) + Sync),
) {
    let mut batcher = Batcher {
        work,
        sequence: 0,
        items: Vec::new(),
    };
    for source in sources {
        match source {
            Source::Error(message) => batcher.push(Item::IoError(message)),
            Source::Input(input) => {
                if let Err(err) = read_input(&input, &mut batcher, progress) {
                    batcher.push(Item::IoError(format!("cannot read {}: {err}", input.label)));
                }
            }
        }
    }
    batcher.flush();
}

struct Batcher<'a> {
    work: &'a SyncSender<(usize, Vec<Item>)>,
    sequence: usize,
    items: Vec<Item>,
}

impl Batcher<'_> {
    fn push(&mut self, item: Item) {
        self.items.push(item);
        if self.items.len() == BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.items.is_empty() {
            let items = std::mem::take(&mut self.items);
            // The receiving side only stops early if the process is going down.
            let _ = self.work.send((self.sequence, items));
            self.sequence += 1;
        }
    }
}

fn read_input(
    input: &Input,
    batcher: &mut Batcher<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<()> {
    let reader: Box<dyn Read> = match &input.path {
        Some(path) => Box::new(File::open(path)?),
        None => Box::new(io::stdin().lock()),
    };
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let file: Arc<str> = Arc::from(input.label.as_str());
    if !input.lines {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        progress(bytes.len() as u64);
        batcher.push(Item::Document(Document {
            file,
            line: 1,
            bytes,
        }));
        return Ok(());
    }
    let mut line = 0;
    loop {
        let mut bytes = Vec::new();
        let read = reader.read_until(b'\n', &mut bytes)?;
        if read == 0 {
            return Ok(());
        }
        line += 1;
        progress(read as u64);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        batcher.push(Item::Document(Document {
            file: Arc::clone(&file),
            line,
            bytes,
        }));
    }
}
