//! `rmcp` integration (feature `rmcp`): tools return envelopes, results convert both ways.
//!
//! An `rmcp` `#[tool]` function may return an [`Envelope`] directly, or a
//! [`CallToolResult`] when it hands over images too; advertise the envelope's schema with
//! `#[tool(output_schema = Envelope::<T>::rmcp_output_schema())]`.
//!
//! Conversions go through the wire form both types model, so nothing is lost between them.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::CallToolResponse;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{CallToolResult, McpError};
use crate::{Envelope, JsonObject};

impl<T: Serialize> IntoCallToolResult for Envelope<T> {
    /// The envelope's projection; an envelope that does not serialize (its result is not an
    /// object) is a bug in the tool, reported as an internal error.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        CallToolResult::from_envelope(&self)
            .map_err(|err| {
                ErrorData::internal_error(format!("the envelope does not serialize: {err}"), None)
            })?
            .into_call_tool_result()
    }
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        rmcp::model::CallToolResult::try_from(self)
            .map(CallToolResponse::from)
            .map_err(|err| {
                ErrorData::internal_error(format!("the result does not convert: {err}"), None)
            })
    }
}

impl TryFrom<CallToolResult> for rmcp::model::CallToolResult {
    type Error = serde_json::Error;

    /// Converts through the wire form.
    fn try_from(result: CallToolResult) -> Result<Self, serde_json::Error> {
        serde_json::from_str(&result.to_json())
    }
}

impl TryFrom<&rmcp::model::CallToolResult> for CallToolResult {
    type Error = McpError;

    /// Converts through the wire form.
    fn try_from(result: &rmcp::model::CallToolResult) -> Result<Self, McpError> {
        let json = serde_json::to_string(result)
            .map_err(|err| McpError::new(super::McpErrorKind::Malformed, err.to_string()))?;
        CallToolResult::from_json(&json)
    }
}

impl<T: DeserializeOwned> Envelope<T> {
    /// Reads the envelope out of an `rmcp` `tools/call` result (the client side).
    ///
    /// # Errors
    ///
    /// [`McpError`] as for [`CallToolResult::envelope`].
    pub fn from_rmcp(result: &rmcp::model::CallToolResult) -> Result<Self, McpError> {
        CallToolResult::try_from(result)?.envelope()
    }
}

impl<T: schemars::JsonSchema> Envelope<T> {
    /// [`Envelope::output_schema`] in the form `rmcp` takes for a tool's `output_schema`.
    #[must_use]
    pub fn rmcp_output_schema() -> Arc<JsonObject> {
        Arc::new(Self::output_schema())
    }
}
