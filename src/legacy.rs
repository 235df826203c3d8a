//! [`Migration`]: from the reference producer's older `CommandResult` to the envelope.
//!
//! The older shape is `{ success, command, error, errorCode?, errorCategory?, data?, warnings? }`.
//! It maps onto the envelope as the contract's table says:
//!
//! | `CommandResult` | envelope |
//! |---|---|
//! | `success` | `ok` |
//! | `data` (success) | `result` |
//! | `data` (failure) | `error.partialResult` |
//! | `error` (string) | `error.detail`; missing or empty: "The command failed without a message." |
//! | `errorCode` | `error.code`; missing, empty or not kebab-case: `unhandled` |
//! | `errorCategory` | `error.category`; missing, unknown or wrong-case: `internal` (the code is kept) |
//! | `warnings` | `warnings`, on success and failure (entries without a kebab-case code and a detail are left out) |
//! | `command` | dropped (it belongs in the trace) |
//! | — | `sessionId` and `error.lastObservation`, from the caller |
//!
//! A `data` that is not a JSON object has no place in the envelope and is left out.
//!
//! One rule is opt-in, by naming the tool: a `wait-for` whose success carries `data.found ==
//! false` timed out, so it becomes a `timeout` failure with code `wait-condition-timeout` (its
//! data dropped, its warnings kept).
//!
//! ```
//! use agent_tool_result::ErrorCategory;
//! use agent_tool_result::legacy::Migration;
//! use serde_json::json;
//!
//! let legacy = json!({
//!     "success": false,
//!     "command": "find",
//!     "error": "No element named 'Cancel'.",
//!     "errorCode": "element-not-found",
//!     "errorCategory": "no-target"
//! });
//! let envelope = Migration::new().with_session("s-4f2a").migrate(&legacy)?;
//! let error = envelope.error().unwrap();
//! assert_eq!(error.category(), ErrorCategory::NoTarget);
//! assert_eq!(error.detail(), "No element named 'Cancel'.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde_json::Value;

use crate::{
    Classified, Envelope, ErrorCategory, ErrorCode, JsonObject, Observation, ToolError, Warning,
    WarningCode,
};

/// The detail of a failure that carried no message.
pub const NO_MESSAGE: &str = "The command failed without a message.";

/// The detail of a `wait-for` reclassified as a timeout.
pub const WAIT_FOR_TIMEOUT: &str = "wait-for exhausted its timeout before the element appeared.";

/// How to migrate legacy results: the tool that produced them, the session they belong to, and
/// the session's last good observation.
///
/// ```
/// use agent_tool_result::ErrorCategory;
/// use agent_tool_result::legacy::Migration;
/// use serde_json::json;
///
/// let legacy = json!({ "success": true, "command": "wait-for", "data": { "found": false } });
/// let envelope = Migration::new().with_tool("Wait-For").with_session("s-1").migrate(&legacy)?;
/// assert_eq!(envelope.error().unwrap().category(), ErrorCategory::Timeout);
///
/// let legacy = json!({ "success": false, "command": "find", "error": "No matching window",
///                      "errorCode": "window-not-found", "errorCategory": "no-target" });
/// let envelope = Migration::new().migrate(&legacy)?;
/// assert_eq!(envelope.error().unwrap().category(), ErrorCategory::NoTarget);
/// # Ok::<(), agent_tool_result::legacy::LegacyError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Migration {
    tool: Option<String>,
    session_id: Option<String>,
    last_observation: Option<Observation>,
}

impl Migration {
    /// A migration with no tool, session or observation.
    #[must_use]
    pub fn new() -> Self {
        Migration::default()
    }

    /// Names the tool; `wait-for` (any case) turns on the timeout rule.
    #[must_use]
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Sets the session id of the migrated envelopes.
    #[must_use]
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Sets the session's last good observation, attached to failures.
    #[must_use]
    pub fn with_last_observation(mut self, observation: Observation) -> Self {
        self.last_observation = Some(observation);
        self
    }

    /// Migrates one legacy result.
    ///
    /// # Errors
    ///
    /// [`LegacyError`] when the value is not an object or has no boolean `success`.
    pub fn migrate(&self, legacy: &Value) -> Result<Envelope<JsonObject>, LegacyError> {
        let object = legacy.as_object().ok_or(LegacyError::NotAnObject)?;
        let success = object
            .get("success")
            .and_then(Value::as_bool)
            .ok_or(LegacyError::NoSuccess)?;
        let data = object.get("data").and_then(Value::as_object);
        let envelope = if success {
            if self.is_wait_for() && data.and_then(|d| d.get("found")) == Some(&Value::Bool(false))
            {
                Envelope::failure(self.with_observation(ToolError::new(
                    Classified::WAIT_CONDITION_TIMEOUT,
                    WAIT_FOR_TIMEOUT,
                )))
            } else {
                match data {
                    Some(data) => Envelope::success(data.clone()),
                    None => Envelope::success_empty(),
                }
            }
        } else {
            Envelope::failure(self.failure(object, data))
        };
        let envelope = envelope.with_warnings(warnings(object));
        Ok(match &self.session_id {
            Some(id) => envelope.with_session(id.clone()),
            None => envelope,
        })
    }

    fn is_wait_for(&self) -> bool {
        self.tool
            .as_deref()
            .is_some_and(|tool| tool.eq_ignore_ascii_case("wait-for"))
    }

    fn failure(&self, legacy: &JsonObject, data: Option<&JsonObject>) -> ToolError {
        let text = |key: &str| {
            legacy
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let detail = text("error").unwrap_or(NO_MESSAGE);
        let code = text("errorCode")
            .and_then(|code| ErrorCode::new(code.to_owned()).ok())
            .unwrap_or(ErrorCode::UNHANDLED);
        let category = text("errorCategory")
            .and_then(ErrorCategory::from_wire)
            .unwrap_or(ErrorCategory::Internal);
        let error = self.with_observation(ToolError::build(code, category, detail.to_owned()));
        match data {
            Some(data) => error.with_partial_result(data.clone()),
            None => error,
        }
    }

    fn with_observation(&self, error: ToolError) -> ToolError {
        match &self.last_observation {
            Some(observation) => error.with_last_observation(observation.clone()),
            None => error,
        }
    }
}

/// The legacy warnings that fit the contract: objects with a kebab-case `code` and a `detail`.
fn warnings(legacy: &JsonObject) -> Vec<Warning> {
    legacy
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|warning| {
            let code = warning.get("code")?.as_str()?;
            let detail = warning.get("detail")?.as_str()?;
            Some(Warning::new(
                WarningCode::new(code.to_owned()).ok()?,
                detail,
            ))
        })
        .collect()
}

/// Why a value cannot be migrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LegacyError {
    /// The value is not a JSON object.
    #[error("a legacy command result is a JSON object")]
    NotAnObject,
    /// `success` is missing or not a boolean.
    #[error("a legacy command result needs a boolean `success`")]
    NoSuccess,
}
