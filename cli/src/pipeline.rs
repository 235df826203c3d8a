//! Checking the inputs on every core, in input order, in bounded memory.
//!
//! The inputs become numbered units of work: a `.json` input is one document (gathered into
//! batches), an NDJSON input is read in chunks of whole lines that the checking threads split
//! themselves. With one checking thread, a second thread reads ahead of it; with more, each
//! checking thread reads its next unit itself, under a lock, so that no extra thread competes
//! for the cores. Outcomes are emitted in input order; a chunk's lines are numbered from the
//! chunk's start and placed in the file as they are emitted.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};

use agent_tool_result::validate::Validator;

use crate::check::{Checked, Contract, Input, Outcome, Source, check};
use crate::printable::printable;
use crate::session::{self, Chunk, Resolved, Schemas, Session};

/// The bytes of NDJSON a worker takes at a time (more when one line is longer).
const CHUNK: usize = 256 << 10;

/// The chunk buffers kept for reuse at most.
const SPARE: usize = 8;

/// The bytes of an NDJSON input's first chunk; each next one is twice as large, up to
/// [`CHUNK`]. A session's opening (its `tools/list`) is paired, and the schemas it advertised
/// published to the reading threads, before more than a few small chunks are read without
/// them.
const FIRST_CHUNK: usize = 4 << 10;

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
        /// Which input (its number among the inputs opened).
        input: usize,
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
    /// Whole documents, checked (each its own session), and inputs that could not be read,
    /// in order.
    Items(Vec<ItemDone>),
    /// What a chunk's documents gave, each with its line counted from the chunk's start;
    /// whether the chunk starts its input, and how many lines it holds. The file is named
    /// once a chunk, so that workers do not share a count per document with the emitter.
    Lines {
        file: Arc<str>,
        input: usize,
        checked: Vec<(usize, Checked)>,
        first: bool,
        lines: usize,
        /// The chunk's bytes, which its results' texts share: handed back to the reader
        /// once they are paired, for a later chunk.
        bytes: Arc<Vec<u8>>,
    },
}

/// A whole document checked, or an input that could not be read.
enum ItemDone {
    Checked { file: Arc<str>, checked: Checked },
    IoError(String),
}

/// Gives what checking a document gave, paired in `session` when it is JSON-RPC, to `emit`:
/// one outcome a document, or a message.
fn resolve(
    session: &mut Session,
    file: &Arc<str>,
    line: usize,
    checked: Checked,
    emit: &mut dyn FnMut(Outcome),
) {
    match checked {
        Checked::Document(report) => emit(Outcome::Checked {
            file: Arc::clone(file),
            line,
            report,
            call: None,
        }),
        Checked::Message(message) => emit(outcome(session, file, line, *message)),
        Checked::Messages(messages) => {
            for message in messages {
                emit(outcome(session, file, line, message));
            }
        }
    }
}

/// What `message`, on `line` of `file`, comes to in `session`.
fn outcome(session: &mut Session, file: &Arc<str>, line: usize, message: session::Read) -> Outcome {
    match session.resolve(message) {
        Resolved::Checked { report, call } => Outcome::Checked {
            file: Arc::clone(file),
            line,
            report,
            call,
        },
        Resolved::PassedOver => Outcome::PassedOver,
    }
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
    let units = Mutex::new(Units::new(sources));
    // Each NDJSON input's schemas, as its session has paired it so far: what a reading
    // thread checks results against ahead.
    let published: Mutex<HashMap<usize, Schemas>> = Mutex::new(HashMap::new());
    let published = &published;
    let (done_tx, done_rx) = sync_channel::<(usize, Done)>(workers * 2);
    std::thread::scope(|scope| {
        if workers == 1 {
            let (work_tx, work_rx) = sync_channel::<(usize, Work)>(2);
            let units = &units;
            scope.spawn(move || {
                while let Some(unit) = next_unit(units, progress) {
                    if work_tx.send(unit).is_err() {
                        return;
                    }
                }
            });
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                for (sequence, unit) in work_rx {
                    if done_tx
                        .send((sequence, work(unit, contract, published)))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        } else {
            for _ in 0..workers {
                let (units, done_tx) = (&units, done_tx.clone());
                scope.spawn(move || {
                    while let Some((sequence, unit)) = next_unit(units, progress) {
                        if done_tx
                            .send((sequence, work(unit, contract, published)))
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        }
        drop(done_tx);
        let mut pending = std::collections::BTreeMap::new();
        let (mut next, mut base) = (0, 0);
        // The session of the NDJSON input being emitted.
        let mut session = Session::default();
        for (sequence, done) in done_rx {
            pending.insert(sequence, done);
            while let Some(done) = pending.remove(&next) {
                next += 1;
                match done {
                    Done::Items(items) => {
                        for item in items {
                            match item {
                                ItemDone::IoError(message) => emit(Outcome::IoError(message)),
                                // A whole document is a session of its own.
                                ItemDone::Checked { file, checked } => {
                                    resolve(&mut Session::default(), &file, 1, checked, emit);
                                }
                            }
                        }
                    }
                    Done::Lines {
                        file,
                        input,
                        checked,
                        first,
                        lines,
                        bytes,
                    } => {
                        if first {
                            base = 0;
                            session = Session::default();
                        }
                        for (line, checked) in checked {
                            let generation = session.schemas().generation();
                            resolve(&mut session, &file, base + line, checked, emit);
                            if session.schemas().generation() != generation {
                                published
                                    .lock()
                                    .expect("no thread panics holding the schemas")
                                    .insert(input, session.schemas().clone());
                            }
                        }
                        base += lines;
                        // Every text of the chunk is paired and gone: its bytes are free.
                        if let Ok(bytes) = Arc::try_unwrap(bytes) {
                            units
                                .lock()
                                .expect("no thread panics holding the inputs")
                                .recycle(bytes);
                        }
                    }
                }
            }
        }
    });
}

/// The next unit of work, read under the lock.
fn next_unit(units: &Mutex<Units>, progress: &(dyn Fn(u64) + Sync)) -> Option<(usize, Work)> {
    units
        .lock()
        .expect("no thread panics holding the inputs")
        .next(progress)
}

/// Checks one unit of work.
fn work(unit: Work, contract: Contract, published: &Mutex<HashMap<usize, Schemas>>) -> Done {
    let validator = Validator::shared();
    match unit {
        Work::Items(items) => Done::Items(
            items
                .into_iter()
                .map(|item| match item {
                    Item::IoError(message) => ItemDone::IoError(message),
                    Item::Document { file, bytes } => {
                        let bytes = Arc::new(bytes);
                        let schemas = Schemas::default();
                        let mut chunk = Chunk::new(&schemas, Arc::clone(&bytes));
                        ItemDone::Checked {
                            file,
                            checked: check(validator, &mut chunk, &bytes, contract),
                        }
                    }
                })
                .collect(),
        ),
        Work::Lines {
            file,
            input,
            first,
            bytes,
        } => {
            let schemas = published
                .lock()
                .expect("no thread panics holding the schemas")
                .get(&input)
                .cloned()
                .unwrap_or_default();
            let bytes = Arc::new(bytes);
            let mut chunk = Chunk::new(&schemas, Arc::clone(&bytes));
            let (checked, lines) = check_lines(validator, &mut chunk, &bytes, contract);
            Done::Lines {
                file,
                input,
                checked,
                first,
                lines,
                bytes,
            }
        }
    }
}

/// Checks every line of a chunk that holds a document; returns what each gave, lines
/// numbered from 1 at the chunk's start, and how many lines the chunk holds. A Streamable
/// HTTP capture's server-sent events are read as the event stream format reads them: an
/// event's `data:` fields, joined by newlines, are the message it carries (numbered at its
/// first), its other fields (`event:`, `id:`, `retry:`) and `:` comments hold none, and it
/// ends at a blank line, at a line that is no field, or at the end of the input.
fn check_lines(
    validator: &Validator,
    chunk: &mut Chunk<'_>,
    bytes: &[u8],
    contract: Contract,
) -> (Vec<(usize, Checked)>, usize) {
    let mut checked = Vec::new();
    let mut event = Event::default();
    let (mut start, mut line) = (0, 0);
    let ends = memchr::memchr_iter(b'\n', bytes).map(|i| i + 1);
    let last = (bytes.last() != Some(&b'\n')).then_some(bytes.len());
    for end in ends.chain(last) {
        line += 1;
        // The line without its ending: where a line that stops short stops is on it.
        let text = &bytes[start..end];
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        start = end;
        match sse_field(text) {
            Some(Field::Data(data)) => event.data(line, data),
            Some(Field::Other) => {}
            None => {
                if let Some((at, data)) = event.dispatch() {
                    checked.push((at, check(validator, chunk, &data, contract)));
                }
                if !text.iter().all(u8::is_ascii_whitespace) {
                    checked.push((line, check(validator, chunk, text, contract)));
                }
            }
        }
    }
    if let Some((at, data)) = event.dispatch() {
        checked.push((at, check(validator, chunk, &data, contract)));
    }
    (checked, line)
}

/// A server-sent event being read: the line of its first `data:` field and its data so far.
#[derive(Default)]
struct Event {
    first: Option<usize>,
    data: Vec<u8>,
}

impl Event {
    /// Appends a `data:` field's value, on `line`: a field after the first adds a newline
    /// and its value.
    fn data(&mut self, line: usize, value: &[u8]) {
        if self.first.is_some() {
            self.data.push(b'\n');
        } else {
            self.first = Some(line);
        }
        self.data.extend_from_slice(value);
    }

    /// The event's line and data, if it has any data, and a fresh event after it.
    fn dispatch(&mut self) -> Option<(usize, Vec<u8>)> {
        let first = self.first.take()?;
        Some((first, std::mem::take(&mut self.data)))
    }
}

/// A line of a server-sent event stream, as the format reads it.
enum Field<'a> {
    /// `data:`, one leading space dropped (a bare `data` is an empty one).
    Data(&'a [u8]),
    /// Another field (`event:`, `id:`, `retry:`) or a `:` comment: no message.
    Other,
}

/// The field `line` is; `None` for a line that is none (a document, or a blank line, which
/// ends an event).
fn sse_field(line: &[u8]) -> Option<Field<'_>> {
    if let Some(data) = crate::jsonrpc::event_data(line) {
        return Some(Field::Data(data));
    }
    if line == b"data" {
        return Some(Field::Data(b""));
    }
    is_sse_field(line).then_some(Field::Other)
}

/// Whether `line` is a field of a server-sent event other than `data:`, or a comment.
fn is_sse_field(line: &[u8]) -> bool {
    line.starts_with(b":")
        || [&b"event"[..], b"id", b"retry"].iter().any(|name| {
            line.strip_prefix(*name)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(b":"))
        })
}

/// Whether `line` belongs to a server-sent event (a field, `data:` included, or a comment):
/// a chunk does not end after it, so that no event is split between chunks.
fn in_event(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    sse_field(line).is_some()
}

/// The inputs, read on demand into numbered units of work, in input order.
struct Units {
    sources: std::iter::Peekable<std::vec::IntoIter<Source>>,
    /// The NDJSON input being read.
    open: Option<Lines>,
    /// Whole documents and read errors not yet handed out.
    items: Vec<Item>,
    sequence: usize,
    /// How many NDJSON inputs were opened.
    inputs: usize,
    /// Chunk buffers paired and handed back, for the chunks to come: the same few buffers
    /// serve a whole input, rather than one fresh allocation a chunk.
    spare: Vec<Vec<u8>>,
}

/// An NDJSON input being read in chunks of whole lines.
struct Lines {
    reader: Box<dyn Read + Send>,
    file: Arc<str>,
    /// Its number among the inputs opened.
    input: usize,
    /// Whether no chunk of it has been handed out yet.
    first: bool,
    /// The bytes the next chunk takes.
    size: usize,
    /// The start of a line not yet ended, carried over to the next chunk.
    buffer: Vec<u8>,
}

impl Units {
    fn new(sources: Vec<Source>) -> Self {
        Units {
            sources: sources.into_iter().peekable(),
            open: None,
            items: Vec::new(),
            sequence: 0,
            inputs: 0,
            spare: Vec::new(),
        }
    }

    fn number(&mut self, unit: Work) -> (usize, Work) {
        self.sequence += 1;
        (self.sequence - 1, unit)
    }

    fn batch(&mut self) -> (usize, Work) {
        let items = std::mem::take(&mut self.items);
        self.number(Work::Items(items))
    }

    /// The next unit; `None` when every input is read.
    fn next(&mut self, progress: &(dyn Fn(u64) + Sync)) -> Option<(usize, Work)> {
        loop {
            if let Some(lines) = &mut self.open {
                match lines.chunk(&mut self.spare, progress) {
                    Ok(Some(bytes)) => {
                        let unit = Work::Lines {
                            file: Arc::clone(&lines.file),
                            input: lines.input,
                            first: std::mem::replace(&mut lines.first, false),
                            bytes,
                        };
                        return Some(self.number(unit));
                    }
                    Ok(None) => self.open = None,
                    Err(err) => {
                        let label = printable(&lines.file).into_owned();
                        self.open = None;
                        self.items
                            .push(Item::IoError(format!("cannot read {label}: {err}")));
                    }
                }
            }
            // Documents gathered so far go before the next NDJSON input's lines.
            let lines_next = matches!(self.sources.peek(), Some(Source::Input(i)) if i.lines());
            if !self.items.is_empty() && (self.items.len() >= BATCH || lines_next) {
                return Some(self.batch());
            }
            match self.sources.next() {
                None => return (!self.items.is_empty()).then(|| self.batch()),
                Some(Source::Error(message)) => self.items.push(Item::IoError(message)),
                Some(Source::Input(input)) => self.open_input(&input, progress),
            }
        }
    }

    /// Opens an input: an NDJSON one to read in chunks, a `.json` one read whole.
    fn open_input(&mut self, input: &Input, progress: &(dyn Fn(u64) + Sync)) {
        let file: Arc<str> = Arc::from(input.label.as_str());
        let mut reader: Box<dyn Read + Send> = match input.path() {
            Some(path) => match File::open(path) {
                Ok(reader) => Box::new(reader),
                Err(err) => return self.unreadable(&file, &err),
            },
            None => Box::new(io::stdin()),
        };
        if input.lines() {
            self.inputs += 1;
            self.open = Some(Lines {
                reader,
                file,
                input: self.inputs,
                first: true,
                size: FIRST_CHUNK,
                buffer: Vec::with_capacity(2 * CHUNK),
            });
            return;
        }
        let mut bytes = Vec::new();
        match reader.read_to_end(&mut bytes) {
            Ok(read) => {
                progress(read as u64);
                self.items.push(Item::Document { file, bytes });
            }
            Err(err) => self.unreadable(&file, &err),
        }
    }

    /// Keeps `buffer`, a chunk's bytes no longer read, for a chunk to come (a few at most).
    fn recycle(&mut self, buffer: Vec<u8>) {
        if self.spare.len() < SPARE {
            self.spare.push(buffer);
        }
    }

    fn unreadable(&mut self, file: &str, err: &io::Error) {
        let label = printable(file);
        self.items
            .push(Item::IoError(format!("cannot read {label}: {err}")));
    }
}

impl Lines {
    /// The next chunk of whole lines (the last may lack its newline); `None` at the end.
    /// About `size` bytes are read, the chunk ends at the last newline ([`chunk_end`]), and
    /// the rest is carried over; a line (or a server-sent event) longer than a chunk grows the
    /// buffer until it ends.
    fn chunk(
        &mut self,
        spare: &mut Vec<Vec<u8>>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> io::Result<Option<Vec<u8>>> {
        let size = self.size;
        self.size = (2 * size).min(CHUNK);
        // Nothing before it ends a chunk: a line not yet ended, or lines of one server-sent
        // event, which a chunk does not split.
        let mut floor = 0;
        loop {
            let read = (&mut self.reader)
                .take(size as u64)
                .read_to_end(&mut self.buffer)?;
            progress(read as u64);
            if read == 0 {
                let rest = std::mem::take(&mut self.buffer);
                return Ok((!rest.is_empty()).then_some(rest));
            }
            match chunk_end(&self.buffer, floor) {
                Err(more) => floor = more,
                Ok(end) => {
                    let mut rest = spare.pop().unwrap_or_default();
                    rest.clear();
                    rest.reserve(2 * CHUNK);
                    rest.extend_from_slice(&self.buffer[end..]);
                    self.buffer.truncate(end);
                    return Ok(Some(std::mem::replace(&mut self.buffer, rest)));
                }
            }
        }
    }
}

/// Where a chunk of `buffer` ends: after its last whole line, unless that line belongs to a
/// server-sent event, which may go on; then after the last line before it that ends an event
/// or belongs to none. Nothing before `floor` ends a chunk (a search before found no end
/// there), so each byte is searched once however long a line or an event grows. `Err` with
/// the new floor when no line ends a chunk yet.
fn chunk_end(buffer: &[u8], floor: usize) -> Result<usize, usize> {
    let Some(newline) = memchr::memrchr(b'\n', &buffer[floor..]) else {
        return Err(buffer.len());
    };
    let last = floor + newline + 1;
    let mut end = last;
    while end > floor {
        // The line that ends at `end`, its newline left out.
        let start = memchr::memrchr(b'\n', &buffer[..end - 1]).map_or(0, |i| i + 1);
        if !in_event(&buffer[start..end - 1]) {
            return Ok(end);
        }
        end = start;
    }
    Err(last)
}
