//! `atr validate`: the inputs the paths name, and checking one document.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_tool_result::Rule;
use agent_tool_result::rule::Finding;
use agent_tool_result::validate::{Report, Validator};

use crate::jsonrpc::{self, Line};
use crate::printable::printable;
use crate::session::{self, CallSite, Chunk, Read};

/// Counts for the summary.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Documents checked.
    pub documents: u64,
    /// Documents that keep the contract.
    pub valid: u64,
    /// Documents that break it.
    pub invalid: u64,
    /// Lints reported.
    pub lints: u64,
    /// Inputs that could not be read.
    pub io_errors: u64,
    /// JSON-RPC messages that carry no tool result (requests, notifications, errors, other
    /// methods' results), passed over.
    #[serde(skip_serializing_if = "is_zero")]
    pub passed_over: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the documents are taken to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Contract {
    /// Result envelopes.
    Envelope,
    /// Guarantee results (settlement, policy, impact, recovery).
    Guarantee,
    /// MCP `tools/call` results, whose envelope or guarantee result is then checked too.
    CallToolResult,
    /// By shape: an object with `content` is a `tools/call` result, one with `schemaVersion` a
    /// guarantee result, anything else an envelope.
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

impl Input {
    /// The file to read; `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the input holds one document per line.
    pub fn lines(&self) -> bool {
        self.lines
    }
}

/// What the walk over the named paths produced, in order.
pub enum Source {
    /// A file (or standard input) to read.
    Input(Input),
    /// A path that could not be read or walked.
    Error(String),
}

/// The inputs the paths name: files as they are (whatever their kind: a named FIFO or
/// `/dev/stdin` is read); directories walked for regular `*.json`, `*.ndjson` and `*.jsonl`
/// files in name order, following links, each directory once however many links lead to it;
/// `-` for standard input. With `filtered`, a walk skips hidden entries and what the
/// `.gitignore` (inside a git repository), `.ignore` and git exclude files exclude, as
/// `ripgrep` does; a path named on the command line is always read.
pub fn sources(paths: &[PathBuf], force_lines: bool, filtered: bool) -> Vec<Source> {
    let mut out = Vec::new();
    let visited = Visited::default();
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
            Ok(meta) if meta.is_dir() => {
                if visited.first_visit(path, &meta) {
                    walk(path, force_lines, filtered, &visited, &mut out);
                }
            }
            Ok(meta) => out.push(Source::Input(input(path, meta.len(), force_lines))),
            Err(err) => out.push(Source::Error(format!(
                "cannot read {}: {err}",
                printable(&path.display().to_string())
            ))),
        }
    }
    out
}

fn input(path: &Path, size: u64, force_lines: bool) -> Input {
    Input {
        label: path.display().to_string(),
        path: Some(path.to_owned()),
        lines: force_lines || is_named(path, &["ndjson", "jsonl"]),
        size,
    }
}

/// Whether `path` ends in one of `extensions`.
fn is_named(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.contains(&e))
}

const DOCUMENTS: &[&str] = &["json", "ndjson", "jsonl"];

/// The directories walked so far, by device and inode (by canonical path where there are no
/// inodes), so that a symlink loop or two links to one directory walk it once. Shared with
/// the walker's filter, which runs on its own.
#[derive(Clone, Default)]
struct Visited(Arc<Mutex<HashSet<DirId>>>);

#[cfg(unix)]
type DirId = (u64, u64);
#[cfg(not(unix))]
type DirId = PathBuf;

impl Visited {
    /// Whether `dir` is seen for the first time (and now marks it seen).
    fn first_visit(&self, dir: &Path, meta: &fs::Metadata) -> bool {
        #[cfg(unix)]
        let id = {
            use std::os::unix::fs::MetadataExt;
            let _ = dir;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let id = {
            let _ = meta;
            fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned())
        };
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id)
    }
}

/// Walks `root` in name order with the `ignore` crate's walker (the one `ripgrep` uses).
fn walk(root: &Path, force_lines: bool, filtered: bool, visited: &Visited, out: &mut Vec<Source>) {
    let seen = visited.clone();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(filtered)
        .follow_links(true)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .filter_entry(move |entry| {
            // A directory met again through another link is not walked again.
            !entry.file_type().is_some_and(|t| t.is_dir())
                || entry
                    .metadata()
                    .is_ok_and(|meta| seen.first_visit(entry.path(), &meta))
        })
        .build();
    for entry in walker {
        match entry {
            Ok(entry) if entry.depth() == 0 => {}
            Ok(entry) => {
                let path = entry.path();
                // Sockets, FIFOs and devices are not documents; only a path named on the
                // command line is read whatever it is.
                if is_named(path, DOCUMENTS) && entry.file_type().is_some_and(|t| t.is_file()) {
                    let size = entry.metadata().map_or(0, |meta| meta.len());
                    out.push(Source::Input(input(path, size, force_lines)));
                }
            }
            Err(err) => {
                if let Some(message) = walk_error(&err) {
                    out.push(Source::Error(message));
                }
            }
        }
    }
}

/// What to report of an error met on a walk: a document or a directory that cannot be read.
/// A loop is not one (the directory was walked already), nor a dangling link that is not
/// named like a document.
fn walk_error(err: &ignore::Error) -> Option<String> {
    let mut err = err;
    let mut at: Option<&Path> = None;
    loop {
        match err {
            ignore::Error::WithPath { path, err: inner } => {
                at = Some(path);
                err = inner;
            }
            ignore::Error::WithDepth { err: inner, .. }
            | ignore::Error::WithLineNumber { err: inner, .. } => err = inner,
            ignore::Error::Partial(errors) => {
                return errors.iter().find_map(walk_error);
            }
            ignore::Error::Io(io) => {
                let path = at?;
                let is_dir = fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir());
                return (is_named(path, DOCUMENTS) || is_dir).then(|| {
                    format!(
                        "cannot read {}: {io}",
                        printable(&path.display().to_string())
                    )
                });
            }
            // A loop (its directory was walked already), or an ignore file that does not
            // parse (its rules are passed over, as git does).
            _ => return None,
        }
    }
}

/// The checked document, or an I/O error met while reading, in input order.
pub enum Outcome {
    /// A checked document (or message) and its findings.
    Checked {
        /// The input's label.
        file: Arc<str>,
        /// The line the document starts on.
        line: usize,
        /// Its findings, positions relative to the file.
        report: Report,
        /// The `tools/call` a result answers, when its request is in the session.
        call: Option<CallSite>,
    },
    /// A JSON-RPC message that carries no tool result, passed over.
    PassedOver,
    /// An input that could not be read (the rest is still checked).
    IoError(String),
}

/// What checking one document gave: its findings, or, for JSON-RPC, its messages read for
/// their session to pair (see [`crate::session`]).
pub enum Checked {
    /// A document that is not JSON-RPC, checked under the contract.
    Document(Report),
    /// A JSON-RPC message (boxed: a chunk holds one of these a line, and most lines are
    /// documents).
    Message(Box<Read>),
    /// A batch's messages.
    Messages(Vec<Read>),
}

/// Checks one document. A JSON-RPC message is read as JSON-RPC whatever the contract, and
/// its verdict is its session's.
pub fn check(
    validator: &Validator,
    chunk: &mut Chunk<'_>,
    bytes: &[u8],
    contract: Contract,
) -> Checked {
    let text = match std::str::from_utf8(bytes) {
        Err(err) => return Checked::Document(single(Rule::WellFormedJson, not_utf8(&err))),
        Ok(text) if text.trim().is_empty() => {
            return Checked::Document(single(
                Rule::WellFormedJson,
                "the document is empty".to_owned(),
            ));
        }
        Ok(text) => text,
    };
    // A valid envelope is no JSON-RPC message (it has no `jsonrpc` member): a document that
    // starts as envelopes do is tried as one first, which spares it the search for messages,
    // and one the fast path does not accept is read no further until that search is done.
    let mut slow = None;
    if matches!(contract, Contract::Envelope | Contract::Auto) && starts_with_ok(text) {
        match validator.fast_report(text) {
            Ok(report) => return Checked::Document(report),
            Err(path) => slow = Some(path),
        }
    }
    // Messages, unless a result the framing did not read turns out not to be JSON: then the
    // document is read again with its results delimited, and if one still is not JSON, the
    // document is not, and its checks say so.
    if let Line::Messages(messages) = jsonrpc::read(text) {
        if let Some(checked) = messages_of(validator, chunk, text, messages) {
            return checked;
        }
        if let Line::Messages(messages) = jsonrpc::reread(text)
            && let Some(checked) = messages_of(validator, chunk, text, messages)
        {
            return checked;
        }
    }
    Checked::Document(match (contract, slow) {
        (Contract::Envelope, Some(slow)) => slow.report(),
        (Contract::Auto, Some(slow)) => slow.report_any(),
        (Contract::Envelope, None) => validator.validate_text(text),
        // A `tools/call` result carrying a guarantee result: the transport, `isError`
        // and the result inside it.
        (Contract::Guarantee, _) if is_call_tool_result(text) => {
            validator.validate_call_tool_result_text(text)
        }
        (Contract::Guarantee, _) => Validator::shared_guarantee().validate_text(text),
        (Contract::CallToolResult, _) => validator.validate_call_tool_result_text(text),
        (Contract::Auto, None) => validator.validate_any_text(text),
    })
}

/// Whether `text` is an object whose first member is `ok`, as an envelope's is when written
/// by its producers.
fn starts_with_ok(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
        .strip_prefix('{')
        .is_some_and(|rest| {
            rest.trim_start_matches([' ', '\t', '\n', '\r'])
                .starts_with("\"ok\"")
        })
}

/// `text`'s messages, read for its session; `None` when a result in it is not JSON.
fn messages_of(
    validator: &Validator,
    chunk: &mut Chunk<'_>,
    text: &str,
    mut messages: Vec<jsonrpc::Message<'_>>,
) -> Option<Checked> {
    if messages.len() == 1 {
        let message = messages.pop().expect("one message");
        return session::read(validator, chunk, text, message)
            .map(|read| Checked::Message(Box::new(read)));
    }
    messages
        .into_iter()
        .map(|message| session::read(validator, chunk, text, message))
        .collect::<Option<Vec<Read>>>()
        .map(Checked::Messages)
}

/// Whether `text` is an object with `content` and no `schemaVersion`: a `tools/call` result.
fn is_call_tool_result(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Top {
        content: Option<serde::de::IgnoredAny>,
        #[serde(rename = "schemaVersion")]
        schema_version: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Top>(text)
        .is_ok_and(|top| top.content.is_some() && top.schema_version.is_none())
}

/// The message for a document that is not UTF-8, shared by every subcommand.
pub fn not_utf8(err: &std::str::Utf8Error) -> String {
    format!(
        "the document is not UTF-8 (invalid byte at offset {})",
        err.valid_up_to()
    )
}

fn single(rule: Rule, message: String) -> Report {
    Report::new(vec![Finding::new(rule, "", message).at(1, 1)], Vec::new())
}
