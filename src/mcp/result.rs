//! [`CallToolResult`]: an MCP `tools/call` result, projected from either contract.

use serde::Serialize;
use serde_json::value::RawValue;

use super::content::{Content, ImageContent, TextContent};
use super::revision::McpRevision;
use crate::{Envelope, JsonObject};

/// The `resultType` of a complete result.
pub(super) const COMPLETE: &str = "complete";

/// An MCP `tools/call` result: `{ resultType?, content, structuredContent?, isError?, _meta? }`.
///
/// Built from an envelope with [`CallToolResult::from_envelope`], or read from JSON with
/// [`CallToolResult::from_json`] (any server's result: other block types are kept as they are).
#[derive(Clone, Debug)]
pub struct CallToolResult {
    pub(super) result_type: Option<String>,
    pub(super) content: Vec<Content>,
    /// The JSON text of `structuredContent`: valid JSON by construction (serialized here, or
    /// captured from parsed input), so it is written out as it is.
    pub(super) structured_content: Option<String>,
    pub(super) is_error: Option<bool>,
    pub(super) meta: Option<JsonObject>,
}

impl CallToolResult {
    /// Projects an envelope for the current MCP revision ([`McpRevision::LATEST`]).
    ///
    /// # Errors
    ///
    /// When the envelope does not serialize (its result is not a JSON object).
    pub fn from_envelope<T: Serialize>(envelope: &Envelope<T>) -> Result<Self, serde_json::Error> {
        CallToolResult::from_envelope_for(envelope, McpRevision::LATEST)
    }

    /// Projects an envelope for a client that negotiated `revision`: before 2025-06-18 there is
    /// no `structuredContent`, before 2026-07-28 no `resultType`.
    ///
    /// The envelope is serialized once; the text block and `structuredContent` share those
    /// bytes.
    ///
    /// # Errors
    ///
    /// When the envelope does not serialize (its result is not a JSON object).
    pub fn from_envelope_for<T: Serialize>(
        envelope: &Envelope<T>,
        revision: McpRevision,
    ) -> Result<Self, serde_json::Error> {
        let json = envelope.to_json()?;
        let structured_content = revision.has_structured_content().then(|| json.clone());
        Ok(CallToolResult {
            result_type: revision.has_result_type().then(|| COMPLETE.to_owned()),
            content: vec![Content::Text(TextContent::new(json))],
            structured_content,
            is_error: Some(!envelope.is_ok()),
            meta: None,
        })
    }

    /// Projects a guarantee result for the current MCP revision: the result as
    /// `structuredContent` and, identically, in one text block; `isError` is true exactly for
    /// a policy deny (a tool result, never a JSON-RPC error), and a defer or hold is an
    /// ordinary result, never an MCP Task.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
    /// use agent_tool_result::mcp::CallToolResult;
    ///
    /// let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
    /// let result = CallToolResult::from_guarantee(&denied)?;
    /// assert!(result.is_error());
    /// assert_eq!(result.structured_content(), Some(denied.to_json()?.as_str()));
    /// let read = CallToolResult::from_json(&result.to_json())?.guarantee()?;
    /// assert_eq!(read, denied);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When the tool's own fields do not serialize to an object, or use a contract field's
    /// name.
    pub fn from_guarantee<T: Serialize>(
        result: &crate::guarantee::GuaranteeResult<T>,
    ) -> Result<Self, serde_json::Error> {
        CallToolResult::from_guarantee_for(result, McpRevision::LATEST)
    }

    /// [`CallToolResult::from_guarantee`] for a client that negotiated `revision`.
    ///
    /// # Errors
    ///
    /// As for [`CallToolResult::from_guarantee`].
    pub fn from_guarantee_for<T: Serialize>(
        result: &crate::guarantee::GuaranteeResult<T>,
        revision: McpRevision,
    ) -> Result<Self, serde_json::Error> {
        let json = result.to_json()?;
        let structured_content = revision.has_structured_content().then(|| json.clone());
        Ok(CallToolResult {
            result_type: revision.has_result_type().then(|| COMPLETE.to_owned()),
            content: vec![Content::Text(TextContent::new(json))],
            structured_content,
            is_error: Some(result.is_deny()),
            meta: None,
        })
    }

    /// Projects a guarantee tool's refusal (a key missing, malformed, reused or in flight,
    /// arguments that do not fit, the tool unavailable) for the current MCP revision: its RFC
    /// 9457 problem as `structuredContent` and, identically, in one text block, with `isError:
    /// true`. It is a tool result, never a JSON-RPC error, so the model reads why and can fix the
    /// call; the guarantee tool's `outputSchema` admits it, so a client that validates
    /// `structuredContent` on errors accepts it.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{Answer, Refusal, RefusalKind};
    /// use agent_tool_result::mcp::CallToolResult;
    ///
    /// let refused = Refusal::new(RefusalKind::KeyMismatch, "the key was used for another batch");
    /// let result = CallToolResult::from_refusal(&refused);
    /// assert!(result.is_error());
    /// let read = CallToolResult::from_json(&result.to_json())?.answer::<serde_json::Value>()?;
    /// assert_eq!(read, Answer::Refused(refused));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn from_refusal(refusal: &crate::guarantee::Refusal) -> Self {
        CallToolResult::from_refusal_for(refusal, McpRevision::LATEST)
    }

    /// [`CallToolResult::from_refusal`] for a client that negotiated `revision`.
    #[must_use]
    pub fn from_refusal_for(refusal: &crate::guarantee::Refusal, revision: McpRevision) -> Self {
        let json = refusal.to_json();
        let structured_content = revision.has_structured_content().then(|| json.clone());
        CallToolResult {
            result_type: revision.has_result_type().then(|| COMPLETE.to_owned()),
            content: vec![Content::Text(TextContent::new(json))],
            structured_content,
            is_error: Some(true),
            meta: None,
        }
    }

    /// Projects anything a guarantee tool answers: [`CallToolResult::from_guarantee`] for a
    /// result, [`CallToolResult::from_refusal`] for a refusal.
    ///
    /// # Errors
    ///
    /// As for [`CallToolResult::from_guarantee`].
    pub fn from_answer<T: Serialize>(
        answer: &crate::guarantee::Answer<T>,
    ) -> Result<Self, serde_json::Error> {
        match answer {
            crate::guarantee::Answer::Result(result) => CallToolResult::from_guarantee(result),
            crate::guarantee::Answer::Refused(refusal) => Ok(CallToolResult::from_refusal(refusal)),
        }
    }

    /// Appends an image block: `bytes` are base64-encoded once, here.
    #[must_use]
    pub fn with_image(mut self, bytes: &[u8], mime_type: impl Into<String>) -> Self {
        self.content
            .push(Content::Image(ImageContent::encode(bytes, mime_type)));
        self
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: JsonObject) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The content blocks.
    #[must_use]
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// The JSON text of `structuredContent`, as it was written or read.
    #[must_use]
    pub fn structured_content(&self) -> Option<&str> {
        self.structured_content.as_deref()
    }

    /// `isError`; absent means `false`.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }

    /// `resultType`; absent means `"complete"`.
    #[must_use]
    pub fn result_type(&self) -> &str {
        self.result_type.as_deref().unwrap_or(COMPLETE)
    }

    /// `_meta`, if any.
    #[must_use]
    pub fn meta(&self) -> Option<&JsonObject> {
        self.meta.as_ref()
    }

    /// The compact JSON of the result, written in one pass: the structured content is copied
    /// as the text it already is, not serialized again.
    ///
    /// # Panics
    ///
    /// Never: every part is JSON already or serializes infallibly.
    #[must_use]
    pub fn to_json(&self) -> String {
        let structured = self.structured_content.as_ref().map_or(0, String::len);
        let text: usize = self.content.iter().map(Content::len_hint).sum();
        let mut out = Vec::with_capacity(64 + structured + text + text / 8);
        out.push(b'{');
        if let Some(result_type) = &self.result_type {
            out.extend_from_slice(b"\"resultType\":");
            serde_json::to_writer(&mut out, result_type).expect("a string serializes");
            out.push(b',');
        }
        out.extend_from_slice(b"\"content\":");
        serde_json::to_writer(&mut out, &self.content).expect("content serializes");
        if let Some(structured) = &self.structured_content {
            out.extend_from_slice(b",\"structuredContent\":");
            out.extend_from_slice(structured.as_bytes());
        }
        if let Some(is_error) = self.is_error {
            out.extend_from_slice(if is_error {
                b",\"isError\":true"
            } else {
                b",\"isError\":false"
            });
        }
        if let Some(meta) = &self.meta {
            out.extend_from_slice(b",\"_meta\":");
            serde_json::to_writer(&mut out, meta).expect("a JSON object serializes");
        }
        out.push(b'}');
        String::from_utf8(out).expect("JSON is UTF-8")
    }
}

/// Through serde the structured content goes as a raw value, which `serde_json` checks once
/// more; [`CallToolResult::to_json`] is the fast path.
impl Serialize for CallToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let mut out = serializer.serialize_map(None)?;
        if let Some(result_type) = &self.result_type {
            out.serialize_entry("resultType", result_type)?;
        }
        out.serialize_entry("content", &self.content)?;
        if let Some(structured) = &self.structured_content {
            let raw: &RawValue = serde_json::from_str(structured).map_err(S::Error::custom)?;
            out.serialize_entry("structuredContent", raw)?;
        }
        if let Some(is_error) = self.is_error {
            out.serialize_entry("isError", &is_error)?;
        }
        if let Some(meta) = &self.meta {
            out.serialize_entry("_meta", meta)?;
        }
        out.end()
    }
}
