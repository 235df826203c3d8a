//! JSON-RPC messages in what people capture: an MCP trace logs each message a client and a
//! server exchange, one a line, and a single capture is often the whole response. A response
//! whose `result` is a `tools/call` result (an object with `content`, `structuredContent` or
//! `isError`) is checked as one, its findings placed where the result sits in the message;
//! requests, notifications, error responses and the results of other methods (`initialize`,
//! `tools/list`, a ping's `{}`) hold no tool result and are passed over.

use agent_tool_result::rule::Finding;
use agent_tool_result::validate::Report;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// What a document is, read as a JSON-RPC message.
#[derive(Debug, PartialEq, Eq)]
pub enum Message<'a> {
    /// Not a JSON-RPC message (no top-level `jsonrpc`): the document is checked as it is.
    NotJsonRpc,
    /// A message that carries no tool result.
    PassedOver,
    /// A response carrying a tool result: the result's text, and its byte offset in the
    /// message.
    ToolResult {
        /// The `result` member's JSON text.
        text: &'a str,
        /// Where it starts in the message.
        offset: usize,
    },
}

/// The members that tell a message's kind.
#[derive(Deserialize)]
struct Members<'a> {
    jsonrpc: Option<IgnoredAny>,
    method: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
}

/// The members that make a result a `tools/call` result.
#[derive(Deserialize)]
struct ResultMembers {
    content: Option<IgnoredAny>,
    #[serde(rename = "structuredContent")]
    structured_content: Option<IgnoredAny>,
    #[serde(rename = "isError")]
    is_error: Option<IgnoredAny>,
}

/// Reads `text` as a JSON-RPC message. Anything that does not read as one (not an object,
/// not JSON, a repeated member, no `jsonrpc`) is [`Message::NotJsonRpc`], and the checks of the
/// document say what is wrong with it.
pub fn read(text: &str) -> Message<'_> {
    // Most documents are not messages: a scan for the member's name spares them a parse.
    if memchr::memmem::find(text.as_bytes(), b"\"jsonrpc\"").is_none() {
        return Message::NotJsonRpc;
    }
    let Ok(members) = serde_json::from_str::<Members<'_>>(text) else {
        return Message::NotJsonRpc;
    };
    if members.jsonrpc.is_none() {
        return Message::NotJsonRpc;
    }
    let result = match members {
        Members {
            method: None,
            error: None,
            result: Some(result),
            ..
        } => result,
        Members {
            method: None,
            error: None,
            result: None,
            ..
        } => return Message::NotJsonRpc,
        _ => return Message::PassedOver,
    };
    let tool = serde_json::from_str::<ResultMembers>(result.get()).is_ok_and(|members| {
        members.content.is_some()
            || members.structured_content.is_some()
            || members.is_error.is_some()
    });
    if !tool {
        return Message::PassedOver;
    }
    // The raw value borrows from `text`: its offset is where it starts there.
    let offset = result.get().as_ptr() as usize - text.as_ptr() as usize;
    Message::ToolResult {
        text: result.get(),
        offset,
    }
}

/// `report`, on the result at `offset` in `message`, placed in the message: pointers under
/// `/result`, lines and columns counted from the message's start.
pub fn placed(report: &Report, message: &str, offset: usize) -> Report {
    let before = &message.as_bytes()[..offset];
    let newlines = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |at| at + 1);
    let (base_line, base_column) = (newlines + 1, offset - line_start + 1);
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
    use super::{Message, read};

    #[test]
    fn messages_are_told_apart_by_their_members() {
        let tool = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert_eq!(
            read(tool),
            Message::ToolResult {
                text: r#"{"content":[]}"#,
                offset: 33
            }
        );
        for passed in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
        ] {
            assert_eq!(read(passed), Message::PassedOver, "{passed}");
        }
        for not in [
            r#"{"ok":true,"result":{"jsonrpc":"2.0"}}"#,
            r#"{"jsonrpc":"2.0","id":7}"#,
            r#"["jsonrpc"]"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","result":{"content":[]}}"#,
        ] {
            assert_eq!(read(not), Message::NotJsonRpc, "{not}");
        }
    }
}
