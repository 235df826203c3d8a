//! Reading a `tools/call` result back into an envelope: the agent's side.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::content::Content;
use super::result::{COMPLETE, CallToolResult};
use crate::guarantee::GuaranteeResult;
use crate::{Envelope, JsonObject, ParseError};

/// The wire form read from any server: unknown top-level fields are ignored, as the MCP schema
/// allows them.
#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "resultType")]
    result_type: Option<String>,
    #[serde(default)]
    content: Vec<Content>,
    #[serde(rename = "structuredContent")]
    structured_content: Option<Box<RawValue>>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
    #[serde(rename = "_meta")]
    meta: Option<JsonObject>,
}

/// Reads a `Wire` from a JSON object only: serde's derive would also take an array.
fn read_object(json: &str) -> Result<Wire, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let wire = crate::object::only_object(&mut deserializer, "a tools/call result")?;
    deserializer.end()?;
    Ok(wire)
}

impl CallToolResult {
    /// Reads a `tools/call` result from JSON.
    ///
    /// # Errors
    ///
    /// [`McpError`] when the text is not JSON or not a result object (a content block without
    /// a type, an image whose data is not base64, fields of the wrong type).
    pub fn from_json(json: &str) -> Result<Self, McpError> {
        let wire: Wire = read_object(json).map_err(|err| {
            let kind = if err.is_data() {
                McpErrorKind::Malformed
            } else {
                McpErrorKind::NotJson
            };
            McpError::new(kind, format!("not a tools/call result: {err}"))
        })?;
        Ok(CallToolResult {
            result_type: wire.result_type,
            content: wire.content,
            structured_content: wire.structured_content.map(|raw| raw.get().to_owned()),
            is_error: wire.is_error,
            meta: wire.meta,
        })
    }

    /// The envelope this result carries: from `structuredContent` when present, otherwise from
    /// the first text block; and `isError` must agree with the envelope's `ok` (absent counts
    /// as `false`).
    ///
    /// # Errors
    ///
    /// [`McpError`] when the result is not complete, carries no envelope, the envelope breaks
    /// the contract, or `isError` contradicts `ok`.
    pub fn envelope<T: DeserializeOwned>(&self) -> Result<Envelope<T>, McpError> {
        let (source, text) = self.carrier()?;
        let envelope = Envelope::from_json(text).map_err(|err| McpError::envelope(source, err))?;
        if self.is_error() == envelope.is_ok() {
            let is_error = match self.is_error {
                Some(value) => value.to_string(),
                None => "absent (false)".to_owned(),
            };
            return Err(McpError::new(
                McpErrorKind::IsErrorMismatch,
                format!(
                    "isError is {is_error} but the envelope's ok is {}: isError must be !ok",
                    envelope.is_ok()
                ),
            ));
        }
        Ok(envelope)
    }

    /// Reads the guarantee result this `tools/call` result carries: `structuredContent` first,
    /// then the first text block; and `isError` must say whether it is a policy deny (absent
    /// counts as `false`). Never an MCP Task: an incomplete result carries none yet.
    ///
    /// # Errors
    ///
    /// [`McpError`] when the result is not complete, carries no guarantee result, the result
    /// breaks the contract, or `isError` is not `decision == deny`.
    pub fn guarantee<T: DeserializeOwned>(&self) -> Result<GuaranteeResult<T>, McpError> {
        let (source, text) = self.carrier()?;
        let result =
            GuaranteeResult::from_json(text).map_err(|err| McpError::envelope(source, err))?;
        if self.is_error() != result.is_deny() {
            return Err(McpError::new(
                McpErrorKind::IsErrorMismatch,
                format!(
                    "isError is {} but the decision is {}: isError is true exactly for a deny",
                    self.is_error(),
                    result.policy().decision()
                ),
            ));
        }
        Ok(result)
    }

    /// Reads anything a guarantee tool answers: its result or its refusal, told apart by the
    /// one rule every reader applies (a `schemaVersion` is a result; a problem without `ok`
    /// is a refusal), with `isError` checked (a deny or a refusal, and nothing else).
    ///
    /// # Errors
    ///
    /// [`McpError`] when the result is incomplete, carries neither, or `isError` does not
    /// mirror it.
    pub fn answer<T: DeserializeOwned>(&self) -> Result<crate::guarantee::Answer<T>, McpError> {
        use crate::document::{Document, TopMembers};
        use crate::guarantee::{Answer, Refusal};
        let (source, text) = self.carrier()?;
        if TopMembers::of(text).document() != Document::Refusal {
            return self.guarantee().map(Answer::Result);
        }
        let refusal = Refusal::from_json(text).map_err(|err| {
            McpError::new(
                McpErrorKind::NotAnEnvelope,
                format!("{source} is neither a guarantee result nor a refusal: {err}"),
            )
        })?;
        if !self.is_error() {
            return Err(McpError::new(
                McpErrorKind::IsErrorMismatch,
                "isError is false but the result is a refusal: isError is true for every refusal"
                    .to_owned(),
            ));
        }
        Ok(Answer::Refused(refusal))
    }

    /// The contract of the document the result carries (its `structuredContent`, else its
    /// first text block), by the document rule; `None` when it carries none (it is not
    /// complete, or has neither).
    ///
    /// ```
    /// use agent_tool_result::document::Document;
    /// use agent_tool_result::mcp::CallToolResult;
    ///
    /// let result = CallToolResult::from_json(r#"{"content":[{"type":"text","text":"{\"schemaVersion\":1}"}]}"#)?;
    /// assert_eq!(result.carried_document(), Some(Document::Guarantee));
    /// # Ok::<(), agent_tool_result::mcp::McpError>(())
    /// ```
    #[must_use]
    pub fn carried_document(&self) -> Option<crate::document::Document> {
        self.carrier()
            .ok()
            .map(|(_, text)| crate::document::of(text))
    }

    /// Where the carried JSON is: a complete result's `structuredContent`, or its first text
    /// block.
    fn carrier(&self) -> Result<(&'static str, &str), McpError> {
        if self.result_type() != COMPLETE {
            return Err(McpError::new(
                McpErrorKind::Incomplete,
                format!(
                    "the result is not complete (resultType `{}`), so it carries no result yet",
                    self.result_type()
                ),
            ));
        }
        if let Some(structured) = &self.structured_content {
            return Ok(("structuredContent", structured));
        }
        self.content
            .iter()
            .find_map(|block| match block {
                Content::Text(text) => Some(("the text block", text.text())),
                _ => None,
            })
            .ok_or_else(|| {
                McpError::new(
                    McpErrorKind::NoEnvelope,
                    "the result has neither structuredContent nor a text block".to_owned(),
                )
            })
    }
}

impl<T: DeserializeOwned> Envelope<T> {
    /// Reads the envelope out of a `tools/call` result's JSON; see
    /// [`CallToolResult::envelope`].
    ///
    /// # Errors
    ///
    /// [`McpError`] when the JSON is not a result or carries no valid envelope.
    pub fn from_call_tool_result(json: &str) -> Result<Self, McpError> {
        CallToolResult::from_json(json)?.envelope()
    }
}

/// Why a `tools/call` result could not be read as an envelope.
///
/// When the envelope itself breaks the contract, the [`ParseError`] that says how is the
/// error's `source()` (and [`McpError::envelope_error`]); the message does not repeat it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct McpError {
    kind: McpErrorKind,
    message: String,
    #[source]
    envelope: Option<ParseError>,
}

/// The kinds of [`McpError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum McpErrorKind {
    /// The text is not JSON.
    NotJson,
    /// The JSON is not a `tools/call` result.
    Malformed,
    /// `resultType` says the result is not complete (a task handle, a request for input).
    Incomplete,
    /// Neither `structuredContent` nor a text block.
    NoEnvelope,
    /// The envelope found breaks the contract; see [`McpError::envelope_error`].
    NotAnEnvelope,
    /// `isError` is not `!ok`.
    IsErrorMismatch,
}

impl McpError {
    pub(crate) fn new(kind: McpErrorKind, message: String) -> Self {
        McpError {
            kind,
            message,
            envelope: None,
        }
    }

    fn envelope(source: &str, err: ParseError) -> Self {
        McpError {
            kind: McpErrorKind::NotAnEnvelope,
            message: format!("{source} is not a valid envelope"),
            envelope: Some(err),
        }
    }

    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> McpErrorKind {
        self.kind
    }

    /// The contract violation, when the envelope itself is at fault.
    #[must_use]
    pub fn envelope_error(&self) -> Option<&ParseError> {
        self.envelope.as_ref()
    }
}
