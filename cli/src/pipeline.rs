//! Checking the inputs on every core, in input order, in bounded memory.
//!
//! One thread reads. A `.json` input is one document; an NDJSON input is read in chunks of
//! whole lines, and the workers split the lines themselves, so the reading thread does little
//! more than `read`. Outcomes come back numbered by chunk and are emitted in input order; a
//! chunk's lines are numbered from the chunk's start and placed in the file as they are
//! emitted.

use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use agent_tool_result::validate::{Report, Validator};

use crate::check::{Contract, Input, Outcome, Source, check};
use crate::output::printable;

/// The bytes of NDJSON a worker takes at a time (more when one line is longer).
const CHUNK: usize = 256 << 10;

/// Whole documents handed to a worker at a time.
const BATCH: usize = 256;

/// A unit of work, in input order.
enum Work {
    /// Whole documents (a `.json` input each) and inputs that could not be read.
    Items(Vec<Item>),
    /// Whole lines of an NDJSON input, each with its newline; `first` when the chunk starts
    /// the input.
    Lines {
        file: Arc<str>,
        first: bool,
        bytes: Vec<u8>,
    },
}

enum Item {
    Document { file: Arc<str>, bytes: Vec<u8> },
    IoError(String),
}

/// What a unit of work gave.
enum Done {
    /// The outcomes of whole documents, in order.
    Items(Vec<Outcome>),
    /// The reports of a chunk's documents, each with its line counted from the chunk's start;
    /// whether the chunk starts its input, and how many lines it holds. The file is named
    /// once a chunk, so that workers do not share a count per document with the emitter.
    Lines {
        file: Arc<str>,
        reports: Vec<(usize, Report)>,
        first: bool,
        lines: usize,
    },
}

/// Reads the sources and checks every document on `workers` threads, calling `emit` with each
/// outcome in input order and `progress` with bytes read. Memory stays bounded: a few chunks
/// are in flight at a time.
pub fn run(
    sources: Vec<Source>,
    contract: Contract,
    workers: usize,
    progress: &(dyn Fn(u64) + Sync),
    emit: &mut dyn FnMut(Outcome),
) {
    let (work_tx, work_rx) = sync_channel::<(usize, Work)>(workers * 2);
    let (done_tx, done_rx) = sync_channel::<(usize, Done)>(workers * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    std::thread::scope(|scope| {
        scope.spawn(move || read_all(sources, &work_tx, progress));
        for _ in 0..workers {
            let work_rx = Arc::clone(&work_rx);
            let done_tx = done_tx.clone();
            scope.spawn(move || work(&work_rx, &done_tx, contract));
        }
        drop(done_tx);
        let mut pending = std::collections::BTreeMap::new();
        let (mut next, mut base) = (0, 0);
        for (sequence, done) in done_rx {
            pending.insert(sequence, done);
            while let Some(done) = pending.remove(&next) {
                next += 1;
                match done {
                    Done::Items(outcomes) => outcomes.into_iter().for_each(&mut *emit),
                    Done::Lines {
                        file,
                        reports,
                        first,
                        lines,
                    } => {
                        if first {
                            base = 0;
                        }
                        for (line, report) in reports {
                            emit(Outcome::Checked {
                                file: Arc::clone(&file),
                                line: base + line,
                                report,
                            });
                        }
                        base += lines;
                    }
                }
            }
        }
    });
}

fn work(
    work: &Mutex<Receiver<(usize, Work)>>,
    done: &SyncSender<(usize, Done)>,
    contract: Contract,
) {
    let validator = Validator::shared();
    loop {
        let Ok((sequence, unit)) = work
            .lock()
            .expect("no worker panics holding the lock")
            .recv()
        else {
            return;
        };
        let result = match unit {
            Work::Items(items) => Done::Items(
                items
                    .into_iter()
                    .map(|item| match item {
                        Item::IoError(message) => Outcome::IoError(message),
                        Item::Document { file, bytes } => Outcome::Checked {
                            file,
                            line: 1,
                            report: check(validator, &bytes, contract),
                        },
                    })
                    .collect(),
            ),
            Work::Lines { file, first, bytes } => {
                let (reports, lines) = check_lines(validator, &bytes, contract);
                Done::Lines {
                    file,
                    reports,
                    first,
                    lines,
                }
            }
        };
        if done.send((sequence, result)).is_err() {
            return;
        }
    }
}

/// Checks every line of a chunk that is not blank; returns the reports, lines numbered from
/// 1 at the chunk's start, and how many lines the chunk holds.
fn check_lines(
    validator: &Validator,
    bytes: &[u8],
    contract: Contract,
) -> (Vec<(usize, Report)>, usize) {
    let mut reports = Vec::new();
    let (mut start, mut line) = (0, 0);
    let ends = memchr::memchr_iter(b'\n', bytes).map(|i| i + 1);
    let last = (bytes.last() != Some(&b'\n')).then_some(bytes.len());
    for end in ends.chain(last) {
        line += 1;
        let text = &bytes[start..end];
        start = end;
        if !text.iter().all(u8::is_ascii_whitespace) {
            reports.push((line, check(validator, text, contract)));
        }
    }
    (reports, line)
}

/// Numbers units of work and hands them on, gathering whole documents into batches.
struct Sender<'a> {
    work: &'a SyncSender<(usize, Work)>,
    sequence: usize,
    items: Vec<Item>,
}

impl Sender<'_> {
    fn item(&mut self, item: Item) {
        self.items.push(item);
        if self.items.len() == BATCH {
            self.flush();
        }
    }

    fn lines(&mut self, file: &Arc<str>, first: bool, bytes: Vec<u8>) {
        self.flush();
        self.send(Work::Lines {
            file: Arc::clone(file),
            first,
            bytes,
        });
    }

    fn flush(&mut self) {
        if !self.items.is_empty() {
            let items = std::mem::take(&mut self.items);
            self.send(Work::Items(items));
        }
    }

    fn send(&mut self, unit: Work) {
        // The receiving side only stops early if the process is going down.
        let _ = self.work.send((self.sequence, unit));
        self.sequence += 1;
    }
}

/// Reads every source, in order.
fn read_all(
    sources: Vec<Source>,
    work: &SyncSender<(usize, Work)>,
    progress: &(dyn Fn(u64) + Sync),
) {
    let mut sender = Sender {
        work,
        sequence: 0,
        items: Vec::new(),
    };
    for source in sources {
        match source {
            Source::Error(message) => sender.item(Item::IoError(message)),
            Source::Input(input) => {
                if let Err(err) = read_input(&input, &mut sender, progress) {
                    let label = printable(&input.label);
                    sender.item(Item::IoError(format!("cannot read {label}: {err}")));
                }
            }
        }
    }
    sender.flush();
}

fn read_input(
    input: &Input,
    sender: &mut Sender<'_>,
    progress: &(dyn Fn(u64) + Sync),
) -> io::Result<()> {
    let mut reader: Box<dyn Read> = match input.path() {
        Some(path) => Box::new(File::open(path)?),
        None => Box::new(io::stdin().lock()),
    };
    let file: Arc<str> = Arc::from(input.label.as_str());
    if !input.lines() {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        progress(bytes.len() as u64);
        sender.item(Item::Document { file, bytes });
        return Ok(());
    }
    // Chunks of whole lines: read about CHUNK bytes, send up to the last newline, carry the
    // rest over. A line longer than a chunk grows the buffer until it ends.
    let (mut buffer, mut first) = (Vec::with_capacity(2 * CHUNK), true);
    loop {
        let scanned = buffer.len();
        let read = (&mut reader).take(CHUNK as u64).read_to_end(&mut buffer)?;
        progress(read as u64);
        if read == 0 {
            if !buffer.is_empty() {
                sender.lines(&file, first, buffer);
            }
            return Ok(());
        }
        if let Some(newline) = memchr::memrchr(b'\n', &buffer[scanned..]) {
            let end = scanned + newline + 1;
            let mut rest = Vec::with_capacity(2 * CHUNK);
            rest.extend_from_slice(&buffer[end..]);
            buffer.truncate(end);
            sender.lines(&file, first, std::mem::replace(&mut buffer, rest));
            first = false;
        }
    }
}
