//! JSON-RPC 2.0 framing, as a recorded MCP session holds it: one message a line (or a whole
//! `.json` capture), a batch element by element, member names decoded (escapes included)
//! before anything is read by them. Each message is a request, a notification, a response
//! with a result, an error response, or broken: what JSON-RPC 2.0 allows, and nothing by
//! shape. Which results are `tools/call` results is the session's to say ([`crate::session`]),
//! by the requests they answer.

use std::borrow::Cow;
use std::fmt;

use agent_tool_result::Rule;
use agent_tool_result::mcp::McpRevision;
use agent_tool_result::rule::Finding;
use agent_tool_result::validate::Report;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use self::members::{Members, Results};

mod members;

/// What a document is, read as JSON-RPC.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Not JSON-RPC (not an object or a batch of objects with a `jsonrpc` member): the
    /// document is checked as it is.
    NotJsonRpc,
    /// One message, or a batch's.
    Messages(Vec<Message<'a>>),
}

/// A request's id, as a response names it back: two ids are the same when they are written
/// the same (a number as written, a string decoded).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// An integer written as Rust writes an `i64` (most ids): kept without its text.
    Integer(i64),
    /// Any other number, as written.
    Number(String),
    /// A string, decoded.
    Text(String),
    /// `null` (a response to a request that could not be read).
    Null,
}

impl Id {
    /// The id a number's text (JSON already) writes.
    fn number(text: &str) -> Id {
        match text.parse::<i64>() {
            // `-0` is not how Rust writes 0, and JSON allows no other second spelling.
            Ok(integer) if text != "-0" => Id::Integer(integer),
            _ => Id::Number(text.to_owned()),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Integer(integer) => write!(f, "{integer}"),
            Id::Number(number) => f.write_str(number),
            Id::Text(text) => write!(f, "{}", serde_json::Value::from(text.as_str())),
            Id::Null => f.write_str("null"),
        }
    }
}

/// A request: its id, method, and for `tools/call` the tool it names (borrowed from the text
/// unless an escape needed decoding).
#[derive(Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// The id.
    pub id: Id,
    /// The method.
    pub method: Cow<'a, str>,
    /// The tool a `tools/call` names.
    pub tool: Option<Cow<'a, str>>,
    /// The MCP revision its `_meta` names (`io.modelcontextprotocol/protocolVersion`, as a
    /// request of 2026-07-28 on does), when it is one this crate knows.
    pub revision: Option<McpRevision>,
}

/// One JSON-RPC message.
#[derive(Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// A request.
    Request(Request<'a>),
    /// A notification (a method, no id).
    Notification,
    /// A response with a result.
    Result {
        /// The id of the request it answers.
        id: Id,
        /// The result's JSON text.
        text: &'a str,
        /// Where the result starts in the document.
        offset: usize,
    },
    /// An error response.
    Error {
        /// The id of the request it answers.
        id: Id,
    },
    /// Not a JSON-RPC 2.0 message: what is wrong, and where (a byte offset in the document).
    Broken {
        /// The member at fault (a JSON Pointer in the message).
        pointer: String,
        /// What is wrong.
        message: String,
        /// Where in the document.
        offset: usize,
    },
}

/// Whether `bytes` may name the member every message has: `jsonrpc` spelt out, or a `\u`
/// escape that may spell it otherwise. One pass, over the two bytes either begins with.
fn may_name_jsonrpc(bytes: &[u8]) -> bool {
    memchr::memchr2_iter(b'j', b'\\', bytes).any(|at| {
        let rest = &bytes[at..];
        rest.starts_with(b"jsonrpc") || rest.starts_with(b"\\u")
    })
}

/// What a line of a server-sent event stream (Streamable HTTP's answer) carries in its `data:`
/// field, one leading space dropped; `None` for any other line.
pub fn event_data(line: &[u8]) -> Option<&[u8]> {
    let data = line.strip_prefix(b"data:")?;
    Some(data.strip_prefix(b" ").unwrap_or(data))
}

/// Reads `text` as JSON-RPC. A document that is not JSON, or names no `jsonrpc`, is
/// [`Line::NotJsonRpc`], and the checks of the document say what is wrong with it.
///
/// A result that is an object is not read here: its [`Message::Result`] text is JSON only if
/// its reader finds it so. When it is not, the text is [`reread`].
pub fn read(text: &str) -> Line<'_> {
    read_with(text, Results::ToTheEnd)
}

/// Reads `text` as JSON-RPC again, after a result [`read`] gave was not JSON: each object
/// result delimited by its brackets and strings (its text is still JSON only if its reader
/// finds it so, and the document is not JSON-RPC when it is not).
pub fn reread(text: &str) -> Line<'_> {
    read_with(text, Results::Delimited)
}

fn read_with(text: &str, results: Results) -> Line<'_> {
    let bytes = text.as_bytes();
    if is_empty_batch(text) {
        return Line::Messages(vec![Message::Broken {
            pointer: String::new(),
            message: "an empty batch is no JSON-RPC message: a server answers it as an \
                      invalid request (JSON-RPC 2.0, section 6)"
                .to_owned(),
            offset: start_of(text, text),
        }]);
    }
    // A message names `jsonrpc`, spelt out or with an escape: without either, no parse.
    if !may_name_jsonrpc(bytes) {
        return Line::NotJsonRpc;
    }
    let first = bytes.iter().find(|&&b| !is_whitespace(b));
    match first {
        Some(b'{') => match members::read(text, results) {
            Some(members) if members.jsonrpc.is_some() => {
                match message(text, &members, start_of(text, text)) {
                    Some(message) => Line::Messages(vec![message]),
                    None => Line::NotJsonRpc,
                }
            }
            _ => Line::NotJsonRpc,
        },
        Some(b'[') => batch(text),
        _ => Line::NotJsonRpc,
    }
}

/// JSON's whitespace.
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether `text` is an empty array, `[]` (whitespace aside): an empty batch.
fn is_empty_batch(text: &str) -> bool {
    let inner = text
        .trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r'))
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'));
    inner.is_some_and(|inner| inner.bytes().all(is_whitespace))
}

/// A batch: an array whose first element is a message is read element by element (an
/// element that is not one is broken); any other array is not JSON-RPC.
fn batch(text: &str) -> Line<'_> {
    // Read whole here: every element is JSON before its members are read.
    let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(text) else {
        return Line::NotJsonRpc;
    };
    let read: Vec<Option<Members<'_>>> = elements
        .iter()
        .map(|element| members::read(element.get(), Results::Delimited))
        .collect();
    if read
        .first()
        .is_none_or(|first| first.as_ref().is_none_or(|m| m.jsonrpc.is_none()))
    {
        return Line::NotJsonRpc;
    }
    let mut messages = Vec::with_capacity(elements.len());
    for (at, (element, members)) in elements.iter().zip(read).enumerate() {
        let offset = start_of(text, element.get());
        let message = match members {
            Some(members) if members.jsonrpc.is_some() => message(text, &members, offset),
            _ => Some(Message::Broken {
                pointer: String::new(),
                message: format!(
                    "element {at} of the batch is not a JSON-RPC message (an object with \
                     \"jsonrpc\": \"2.0\")"
                ),
                offset,
            }),
        };
        // Every element was read whole above: `None` (not JSON) cannot come of one.
        messages.push(message.expect("a batch's elements are JSON"));
    }
    Line::Messages(messages)
}

/// Where `part` (a slice of `text`) starts in it.
fn start_of(text: &str, part: &str) -> usize {
    let skipped = part.len() - part.trim_start().len();
    part.as_ptr() as usize - text.as_ptr() as usize + skipped
}

/// A string member's value, decoded.
fn string(value: &str) -> Option<Cow<'_, str>> {
    value
        .starts_with('"')
        .then(|| members::string(value))
        .flatten()
}

/// An id: a string, a number, or (`nullable`) null.
fn id(value: &str, nullable: bool) -> Option<Id> {
    match value.as_bytes().first() {
        Some(b'"') => string(value).map(|text| Id::Text(text.into_owned())),
        Some(b'-' | b'0'..=b'9') => Some(Id::number(value)),
        Some(b'n') if nullable => Some(Id::Null),
        _ => None,
    }
}

/// The message `members` make, which starts at `offset` in `text`; `None` when its result,
/// an object the framing only delimited, is not JSON: it is read here unless the message is
/// a result, whose reader reads it.
fn message<'a>(text: &'a str, members: &Members<'a>, offset: usize) -> Option<Message<'a>> {
    let message = framed(text, members, offset);
    if let Some(result) = members.result.filter(|result| result.starts_with('{'))
        && !matches!(message, Message::Result { .. })
    {
        serde_json::from_str::<IgnoredAny>(result).ok()?;
    }
    Some(message)
}

/// The message `members` make, which starts at `offset` in `text`.
fn framed<'a>(text: &'a str, members: &Members<'a>, offset: usize) -> Message<'a> {
    let broken = |pointer: &str, at: Option<&str>, message: String| Message::Broken {
        pointer: pointer.to_owned(),
        message,
        offset: at.map_or(offset, |value| start_of(text, value)),
    };
    if let Some(name) = &members.repeated {
        return broken(
            "",
            None,
            format!("the member \"{name}\" is named twice: which one counts is not known"),
        );
    }
    let version = members.jsonrpc;
    if version.and_then(string).as_deref() != Some("2.0") {
        return broken(
            "/jsonrpc",
            version,
            "a JSON-RPC 2.0 message has \"jsonrpc\": \"2.0\"".to_owned(),
        );
    }
    let (result, error) = (members.result, members.error);
    if let Some(method) = members.method {
        return request(text, members, method, offset);
    }
    let Some(raw_id) = members.id else {
        return broken(
            "",
            None,
            "a response names the id of the request it answers (a message without method or \
             id is neither a request nor a response)"
                .to_owned(),
        );
    };
    let Some(id) = id(raw_id, true) else {
        return broken(
            "/id",
            Some(raw_id),
            "a response's id is a string, a number or null".to_owned(),
        );
    };
    match (result, error) {
        (Some(_), Some(_)) => broken(
            "",
            None,
            "a response carries exactly one of result and error: this one carries both".to_owned(),
        ),
        (None, None) => broken(
            "",
            None,
            "a response carries exactly one of result and error: this one carries neither"
                .to_owned(),
        ),
        (Some(result), None) => Message::Result {
            id,
            text: result,
            offset: start_of(text, result),
        },
        (None, Some(error)) if error_shape(error) => Message::Error { id },
        (None, Some(error)) => broken(
            "/error",
            Some(error),
            "an error is an object with an integer code and a string message".to_owned(),
        ),
    }
}

/// The request or notification `members` make (their `method` is `method`).
fn request<'a>(
    text: &'a str,
    members: &Members<'a>,
    method: &'a str,
    offset: usize,
) -> Message<'a> {
    let broken = |pointer: &str, at: Option<&str>, message: String| Message::Broken {
        pointer: pointer.to_owned(),
        message,
        offset: at.map_or(offset, |value| start_of(text, value)),
    };
    let (result, error) = (members.result, members.error);
    let Some(method) = string(method) else {
        return broken(
            "/method",
            Some(method),
            "a request's method is a string".to_owned(),
        );
    };
    if result.is_some() || error.is_some() {
        return broken(
            "",
            None,
            format!(
                "a message with a method ({method}) is a request or a notification: it \
                 carries no result or error"
            ),
        );
    }
    let params = members.params;
    if let Some(params) = params
        && !matches!(params.as_bytes().first(), Some(b'{' | b'['))
    {
        return broken(
            "/params",
            Some(params),
            "params are an object or an array".to_owned(),
        );
    }
    let Some(raw_id) = members.id else {
        return Message::Notification;
    };
    let Some(id) = id(raw_id, false) else {
        return broken(
            "/id",
            Some(raw_id),
            "a request's id is a string or a number".to_owned(),
        );
    };
    let tool = members
        .params_name
        .clone()
        .filter(|_| method == "tools/call");
    let revision = members.params_meta.and_then(meta_revision);
    Message::Request(Request {
        id,
        method,
        tool,
        revision,
    })
}

/// The revision a request's `_meta` names, when it names one this crate knows.
fn meta_revision(meta: &str) -> Option<McpRevision> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: Option<String>,
    }
    if !meta.contains("protocolVersion") {
        return None;
    }
    let meta: Meta = serde_json::from_str(meta).ok()?;
    meta.version?.parse().ok()
}

/// Whether an error member is an object with an integer code and a string message.
fn error_shape(error: &str) -> bool {
    #[derive(Deserialize)]
    #[allow(dead_code, reason = "read to check their types")]
    struct Shape {
        code: i64,
        message: String,
    }
    serde_json::from_str::<Shape>(error).is_ok()
}

/// Where the byte `offset` of `text` is: its 1-based line and column.
pub fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |at| at + 1);
    (line, offset - line_start + 1)
}

/// A broken message's finding, at its place in `text`.
pub fn broken(text: &str, pointer: &str, message: &str, offset: usize) -> Report {
    let (line, column) = position(text, offset);
    Report::new(
        vec![Finding::new(Rule::JsonRpcMessage, pointer, message).at(line, column)],
        Vec::new(),
    )
}

/// `report`, on a result that starts at `base` (a line and column of the document), placed in
/// the document: pointers under `/result`, lines and columns counted from the document's
/// start.
pub fn placed(report: &Report, base: (usize, usize)) -> Report {
    if report.violations().is_empty() && report.lints().is_empty() {
        return Report::default();
    }
    let (base_line, base_column) = base;
    let place = |finding: &Finding| {
        let (line, column) = match finding.line() {
            0 => (base_line, base_column),
            1 => (base_line, base_column + finding.column().max(1) - 1),
            line => (base_line + line - 1, finding.column()),
        };
        Finding::new(
            finding.rule(),
            format!("/result{}", finding.pointer()),
            finding.message(),
        )
        .at(line, column)
    };
    Report::new(
        report.violations().iter().map(place).collect(),
        report.lints().iter().map(place).collect(),
    )
}

#[cfg(test)]
mod tests;
