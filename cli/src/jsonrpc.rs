//! JSON-RPC 2.0 framing, as a recorded MCP session holds it: one message a line (or a whole
//! `.json` capture), a batch element by element, member names decoded (escapes included)
//! before anything is read by them. Each message is a request, a notification, a response
//! with a result, an error response, or broken: what JSON-RPC 2.0 allows, and nothing by
//! shape. Which results are `tools/call` results is the session's to say ([`crate::session`]),
//! by the requests they answer.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use agent_tool_result::Rule;
use agent_tool_result::rule::Finding;
use agent_tool_result::validate::Report;
use memchr::memmem::Finder;
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

/// What a document is, read as JSON-RPC.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Not JSON-RPC (not an object or a batch of objects with a `jsonrpc` member): the
    /// document is checked as it is.
    NotJsonRpc,
    /// One message, or a batch's.
    Messages(Vec<Message<'a>>),
}

/// A request's id, as a response names it back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// A number, as written.
    Number(String),
    /// A string, decoded.
    Text(String),
    /// `null` (a response to a request that could not be read).
    Null,
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(number) => f.write_str(number),
            Id::Text(text) => write!(f, "{}", serde_json::Value::from(text.as_str())),
            Id::Null => f.write_str("null"),
        }
    }
}

/// A request: its id, method, and for `tools/call` the tool it names.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    /// The id.
    pub id: Id,
    /// The method.
    pub method: String,
    /// The tool a `tools/call` names.
    pub tool: Option<String>,
}

/// One JSON-RPC message.
#[derive(Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// A request.
    Request(Request),
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

/// The members of a message that JSON-RPC names, read in one pass: names decoded (borrowed
/// from the text unless an escape needed decoding), values as their text; any other member
/// is skipped, and the first name given twice is kept.
#[derive(Default)]
struct Members<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    repeated: Option<String>,
}

/// A member name, borrowed where the text spells it plainly.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Members::default();
                let mut others: Vec<Cow<'de, str>> = Vec::new();
                while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
                    let value = map.next_value::<&'de RawValue>()?;
                    let slot = match name.as_ref() {
                        "jsonrpc" => &mut members.jsonrpc,
                        "id" => &mut members.id,
                        "method" => &mut members.method,
                        "params" => &mut members.params,
                        "result" => &mut members.result,
                        "error" => &mut members.error,
                        _ => {
                            if members.repeated.is_none() && others.contains(&name) {
                                members.repeated = Some(name.into_owned());
                            } else {
                                others.push(name);
                            }
                            continue;
                        }
                    };
                    if slot.is_some() {
                        members.repeated.get_or_insert_with(|| name.into_owned());
                    } else {
                        *slot = Some(value);
                    }
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

impl Members<'_> {
    fn has_jsonrpc(&self) -> bool {
        self.jsonrpc.is_some()
    }
}

/// The member name every message has, and the escape that may spell it otherwise.
static NAME: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("jsonrpc"));
static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("\\u"));

/// Reads `text` as JSON-RPC. A document that is not JSON, or names no `jsonrpc`, is
/// [`Line::NotJsonRpc`], and the checks of the document say what is wrong with it.
pub fn read(text: &str) -> Line<'_> {
    // A message names `jsonrpc`, spelt out or with an escape: without either, no parse.
    let bytes = text.as_bytes();
    if NAME.find(bytes).is_none() && ESCAPE.find(bytes).is_none() {
        return Line::NotJsonRpc;
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => match serde_json::from_str::<Members<'_>>(text) {
            Ok(members) if members.has_jsonrpc() => {
                Line::Messages(vec![message(text, &members, start_of(text, text))])
            }
            _ => Line::NotJsonRpc,
        },
        Some(b'[') => batch(text),
        _ => Line::NotJsonRpc,
    }
}

/// A batch: an array whose first element is a message is read element by element (an
/// element that is not one is broken); any other array is not JSON-RPC.
fn batch(text: &str) -> Line<'_> {
    let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(text) else {
        return Line::NotJsonRpc;
    };
    let read: Vec<Option<Members<'_>>> = elements
        .iter()
        .map(|element| serde_json::from_str::<Members<'_>>(element.get()).ok())
        .collect();
    if !read
        .first()
        .is_some_and(|first| first.as_ref().is_some_and(Members::has_jsonrpc))
    {
        return Line::NotJsonRpc;
    }
    Line::Messages(
        elements
            .iter()
            .zip(read)
            .enumerate()
            .map(|(at, (element, members))| {
                let offset = start_of(text, element.get());
                match members {
                    Some(members) if members.has_jsonrpc() => message(text, &members, offset),
                    _ => Message::Broken {
                        pointer: String::new(),
                        message: format!(
                            "element {at} of the batch is not a JSON-RPC message (an object \
                             with \"jsonrpc\": \"2.0\")"
                        ),
                        offset,
                    },
                }
            })
            .collect(),
    )
}

/// Where `part` (a slice of `text`) starts in it.
fn start_of(text: &str, part: &str) -> usize {
    let skipped = part.len() - part.trim_start().len();
    part.as_ptr() as usize - text.as_ptr() as usize + skipped
}

/// A string member's value, decoded.
fn string(value: &RawValue) -> Option<String> {
    serde_json::from_str::<String>(value.get()).ok()
}

/// An id: a string, a number, or (`nullable`) null.
fn id(value: &RawValue, nullable: bool) -> Option<Id> {
    match value.get().as_bytes().first() {
        Some(b'"') => string(value).map(Id::Text),
        Some(b'-' | b'0'..=b'9') => Some(Id::Number(value.get().to_owned())),
        Some(b'n') if nullable => Some(Id::Null),
        _ => None,
    }
}

/// The message `members` make, which starts at `offset` in `text`.
fn message<'a>(text: &'a str, members: &Members<'a>, offset: usize) -> Message<'a> {
    let broken = |pointer: &str, at: Option<&RawValue>, message: String| Message::Broken {
        pointer: pointer.to_owned(),
        message,
        offset: at.map_or(offset, |value| start_of(text, value.get())),
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
            text: result.get(),
            offset: start_of(text, result.get()),
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
    method: &RawValue,
    offset: usize,
) -> Message<'a> {
    let broken = |pointer: &str, at: Option<&RawValue>, message: String| Message::Broken {
        pointer: pointer.to_owned(),
        message,
        offset: at.map_or(offset, |value| start_of(text, value.get())),
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
        && !matches!(params.get().as_bytes().first(), Some(b'{' | b'['))
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
    let tool = (method == "tools/call")
        .then(|| params.and_then(tool_name))
        .flatten();
    Message::Request(Request { id, method, tool })
}

/// The tool a `tools/call` request's params name.
fn tool_name(params: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Params {
        name: String,
    }
    serde_json::from_str::<Params>(params.get())
        .ok()
        .map(|params| params.name)
}

/// Whether an error member is an object with an integer code and a string message.
fn error_shape(error: &RawValue) -> bool {
    #[derive(Deserialize)]
    #[allow(dead_code, reason = "read to check their types")]
    struct Shape {
        code: i64,
        message: String,
    }
    serde_json::from_str::<Shape>(error.get()).is_ok()
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
mod tests {
    use super::{Id, Line, Message, read};

    fn one(text: &str) -> Message<'_> {
        match read(text) {
            Line::Messages(mut messages) if messages.len() == 1 => messages.remove(0),
            other => panic!("{text}: {other:?}"),
        }
    }

    fn is_broken(message: &Message<'_>) -> bool {
        matches!(message, Message::Broken { .. })
    }

    #[test]
    fn every_kind_of_message_is_read_by_its_members() {
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#),
            Message::Result {
                id: Id::Number("7".into()),
                text: r#"{"content":[]}"#,
                offset: 33
            }
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#),
            Message::Request(super::Request {
                id: Id::Text("a".into()),
                method: "tools/call".into(),
                tool: Some("x".into())
            })
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Message::Notification
        );
        assert_eq!(
            one(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#),
            Message::Error {
                id: Id::Number("7".into())
            }
        );
        // A valid response whose result is null is a response like any other.
        assert!(matches!(
            one(r#"{"jsonrpc":"2.0","id":2,"result":null}"#),
            Message::Result { text: "null", .. }
        ));
        // Escaped names are the names they spell.
        assert!(matches!(
            one(r#"{"\u006asonrpc":"2.0","id":2,"\u0072esult":{}}"#),
            Message::Result { text: "{}", .. }
        ));
    }

    #[test]
    fn what_json_rpc_forbids_is_broken() {
        for text in [
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":5},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"\u0072esult":{}}"#,
        ] {
            assert!(is_broken(&one(text)), "{text}");
        }
    }

    #[test]
    fn a_batch_is_read_element_by_element() {
        let text = r#"[{"jsonrpc":"2.0","id":1,"result":{}}, 5, {"jsonrpc":"2.0","method":"x"}]"#;
        let Line::Messages(messages) = read(text) else {
            panic!("a batch")
        };
        assert_eq!(messages.len(), 3);
        assert!(matches!(messages[0], Message::Result { .. }));
        assert!(matches!(messages[1], Message::Broken { offset: 39, .. }));
        assert_eq!(messages[2], Message::Notification);
        for not in [
            r#"{"ok":true,"result":{"jsonrpc":"2.0"}}"#,
            r#"["jsonrpc"]"#,
            "[]",
            r#"[{"ok":true}]"#,
            "not json",
        ] {
            assert_eq!(read(not), Line::NotJsonRpc, "{not}");
        }
    }
}
