//! [`JsonRpcError`]: protocol faults, which are not tool outcomes.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code, such as [`JsonRpcCode::METHOD_NOT_FOUND`].
///
/// The reserved codes are constants; servers may define others in -32000 to -32099.
///
/// ```
/// use agent_tool_result::mcp::{JsonRpcCode, JsonRpcError};
///
/// // An unknown tool is a protocol fault, never a tool result.
/// let error = JsonRpcError::unknown_tool("fnd");
/// assert_eq!(error.code(), JsonRpcCode::INVALID_PARAMS);
/// assert_eq!(JsonRpcCode::new(-32001).get(), -32001);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonRpcCode(i32);

impl JsonRpcCode {
    /// -32700: the request is not valid JSON.
    pub const PARSE_ERROR: JsonRpcCode = JsonRpcCode(-32700);
    /// -32600: the JSON is not a valid request object.
    pub const INVALID_REQUEST: JsonRpcCode = JsonRpcCode(-32600);
    /// -32601: the method does not exist.
    pub const METHOD_NOT_FOUND: JsonRpcCode = JsonRpcCode(-32601);
    /// -32602: invalid parameters, including a `tools/call` for an unknown tool.
    pub const INVALID_PARAMS: JsonRpcCode = JsonRpcCode(-32602);
    /// -32603: an internal error of the JSON-RPC layer.
    pub const INTERNAL_ERROR: JsonRpcCode = JsonRpcCode(-32603);

    /// A code from its number.
    #[must_use]
    pub const fn new(code: i32) -> Self {
        JsonRpcCode(code)
    }

    /// The number.
    #[must_use]
    pub const fn get(self) -> i32 {
        self.0
    }
}

impl fmt::Display for JsonRpcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A JSON-RPC error object: `{ code, message, data? }`.
///
/// Use it for faults of the protocol, not of the tool: the request is not JSON, not a
/// request, names no method, or calls a tool that does not exist. A tool that ran and failed
/// answers with an [`Envelope`](crate::Envelope) inside a [`CallToolResult`](super::CallToolResult)
/// whose `isError` is `true`, so the model sees why and can recover. There is deliberately no
/// conversion between the two.
///
/// ```
/// use agent_tool_result::mcp::{JsonRpcCode, JsonRpcError};
///
/// let fault = JsonRpcError::unknown_tool("delete_everything");
/// assert_eq!(fault.code(), JsonRpcCode::INVALID_PARAMS);
/// assert_eq!(
///     serde_json::to_string(&fault)?,
///     r#"{"code":-32602,"message":"unknown tool: delete_everything"}"#,
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct JsonRpcError {
    code: JsonRpcCode,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

/// The wire form, read from an object only.
#[derive(Deserialize)]
struct Wire {
    code: JsonRpcCode,
    message: String,
    #[serde(default)]
    data: Option<Value>,
}

impl<'de> Deserialize<'de> for JsonRpcError {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Wire {
            code,
            message,
            data,
        } = crate::object::only_object(deserializer, "a JSON-RPC error")?;
        Ok(JsonRpcError {
            code,
            message,
            data,
        })
    }
}

impl JsonRpcError {
    /// An error with a code and message.
    #[must_use]
    pub fn new(code: JsonRpcCode, message: impl Into<String>) -> Self {
        JsonRpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// -32700, for a request that is not JSON.
    #[must_use]
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        JsonRpcError::new(JsonRpcCode::PARSE_ERROR, format!("parse error: {detail}"))
    }

    /// -32600, for JSON that is not a valid request.
    #[must_use]
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        JsonRpcError::new(
            JsonRpcCode::INVALID_REQUEST,
            format!("invalid request: {detail}"),
        )
    }

    /// -32601, for a method the server does not have.
    #[must_use]
    pub fn method_not_found(method: &str) -> Self {
        JsonRpcError::new(
            JsonRpcCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// -32602, for a `tools/call` naming a tool the server does not have.
    #[must_use]
    pub fn unknown_tool(name: &str) -> Self {
        JsonRpcError::new(JsonRpcCode::INVALID_PARAMS, format!("unknown tool: {name}"))
    }

    /// -32602, for parameters that do not fit the method.
    #[must_use]
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        JsonRpcError::new(
            JsonRpcCode::INVALID_PARAMS,
            format!("invalid params: {detail}"),
        )
    }

    /// -32603, for a fault inside the JSON-RPC layer itself.
    #[must_use]
    pub fn internal_error(detail: impl fmt::Display) -> Self {
        JsonRpcError::new(
            JsonRpcCode::INTERNAL_ERROR,
            format!("internal error: {detail}"),
        )
    }

    /// Attaches `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The code.
    #[must_use]
    pub fn code(&self) -> JsonRpcCode {
        self.code
    }

    /// The message.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The data, if any.
    #[must_use]
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }
}
