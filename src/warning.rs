//! [`Warning`]: a non-fatal condition that accompanies a result.

use serde::{Deserialize, Serialize};

use crate::WarningCode;

/// A non-fatal condition: the call went on, but the agent should know that something was
/// adjusted, degraded or assumed. Warnings may accompany a success or a failure.
///
/// On the wire it is `{ "code": ..., "detail": ... }`, both required, nothing else allowed.
///
/// ```
/// use agent_tool_result::{Warning, WarningCode};
///
/// let warning = Warning::new(WarningCode::MINIMIZED_WINDOW, "Target was restored before capture.");
/// assert_eq!(
///     serde_json::to_string(&warning)?,
///     r#"{"code":"minimized-window","detail":"Target was restored before capture."}"#,
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schemars",
    schemars(description = "A non-fatal condition that accompanies a result.")
)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// Stable machine code for the condition; agents may branch on it.
    code: WarningCode,
    /// Human-readable explanation of the condition.
    detail: String,
}

impl Warning {
    /// A warning with its code and a human-readable detail.
    #[must_use]
    pub fn new(code: WarningCode, detail: impl Into<String>) -> Self {
        Warning {
            code,
            detail: detail.into(),
        }
    }

    /// The warning's code.
    #[must_use]
    pub fn code(&self) -> &WarningCode {
        &self.code
    }

    /// The human-readable detail.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }
}
