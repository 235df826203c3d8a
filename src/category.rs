//! The closed error taxonomy: [`ErrorCategory`] and [`RetryClass`].
//!
//! `error.category` is the field an agent branches on exhaustively once it has read `ok`. The set
//! is closed: a new failure mode maps onto an existing category, and adding a category is a
//! contract revision (and a semver-major release of this crate). This module holds the one table
//! that says, for every category, its wire name, what it means, how an agent recovers and whether
//! retrying can help. Everything else (the README, `atr explain`, the schema's enum) reads it.
//!
//! ```
//! use agent_tool_result::ErrorCategory;
//! use agent_tool_result::category::RetryClass;
//!
//! for category in ErrorCategory::ALL {
//!     assert_eq!(category.as_str().parse::<ErrorCategory>()?, category);
//! }
//! assert_eq!(ErrorCategory::StaleElement.retry_class(), RetryClass::AfterReobserving);
//! assert!("Timeout".parse::<ErrorCategory>().is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

/// How an agent may retry after a failure of a given [`ErrorCategory`].
///
/// ```
/// use agent_tool_result::ErrorCategory;
/// use agent_tool_result::category::RetryClass;
///
/// assert_eq!(ErrorCategory::Timeout.retry_class(), RetryClass::AfterWaiting);
/// assert!(!ErrorCategory::Elevation.retry_class().is_retryable());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RetryClass {
    /// The same call may succeed later, once time passes or something outside the agent clears.
    AfterWaiting,
    /// Refresh what the agent knows first (query, find, recapture, focus), then retry.
    AfterReobserving,
    /// The same request keeps failing; retry only after changing its arguments.
    AfterChangingRequest,
    /// The agent cannot recover; surface the failure to a person.
    NotRecoverable,
}

impl RetryClass {
    /// Every retry class, in order from most to least recoverable.
    pub const ALL: [RetryClass; 4] = [
        RetryClass::AfterWaiting,
        RetryClass::AfterReobserving,
        RetryClass::AfterChangingRequest,
        RetryClass::NotRecoverable,
    ];

    /// The kebab-case name used by `atr explain` and in documentation.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            RetryClass::AfterWaiting => "after-waiting",
            RetryClass::AfterReobserving => "after-reobserving",
            RetryClass::AfterChangingRequest => "after-changing-request",
            RetryClass::NotRecoverable => "not-recoverable",
        }
    }

    /// A short sentence describing what the class asks of the agent.
    #[must_use]
    pub const fn description(self) -> &'static str {
        match self {
            RetryClass::AfterWaiting => "retry the same call after waiting",
            RetryClass::AfterReobserving => "re-observe first, then retry",
            RetryClass::AfterChangingRequest => "retry only with a changed request",
            RetryClass::NotRecoverable => "not recoverable by the agent",
        }
    }

    /// Whether any retry by the agent can succeed.
    #[must_use]
    pub const fn is_retryable(self) -> bool {
        !matches!(self, RetryClass::NotRecoverable)
    }
}

impl fmt::Display for RetryClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Declares [`ErrorCategory`] and its table: one row per category.
macro_rules! categories {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $wire:literal, $retry:ident,
            meaning: $meaning:literal,
            recovery: $recovery:literal;
    )+) => {
        /// The coarse failure class of a [`ToolError`](crate::ToolError), from the closed set
        /// of the contract's schema.
        ///
        /// Agents may `match` on it exhaustively; the enum is deliberately not
        /// `#[non_exhaustive]`, because adding a category is a contract revision.
        ///
        /// ```
        /// use agent_tool_result::ErrorCategory;
        ///
        /// let category: ErrorCategory = "ambiguous-selector".parse()?;
        /// assert_eq!(category, ErrorCategory::AmbiguousSelector);
        /// assert_eq!(category.to_string(), "ambiguous-selector");
        /// assert!("Timeout".parse::<ErrorCategory>().is_err());
        /// # Ok::<(), agent_tool_result::category::ParseCategoryError>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ErrorCategory {
            $( $(#[$doc])* $variant, )+
        }

        impl ErrorCategory {
            /// Every category, in the order of the contract's schema.
            pub const ALL: [ErrorCategory; [$($wire),+].len()] = [$(ErrorCategory::$variant),+];

            /// The wire name, as it appears in `error.category`.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( ErrorCategory::$variant => $wire, )+ }
            }

            /// When the category applies.
            #[must_use]
            pub const fn meaning(self) -> &'static str {
                match self { $( ErrorCategory::$variant => $meaning, )+ }
            }

            /// What an agent should do when it sees the category.
            #[must_use]
            pub const fn recovery(self) -> &'static str {
                match self { $( ErrorCategory::$variant => $recovery, )+ }
            }

            /// Whether, and after what, an agent may retry.
            #[must_use]
            pub const fn retry_class(self) -> RetryClass {
                match self { $( ErrorCategory::$variant => RetryClass::$retry, )+ }
            }

            /// Parses a wire name exactly (lowercase kebab-case), without allocating.
            #[must_use]
            pub fn from_wire(name: &str) -> Option<ErrorCategory> {
                match name {
                    $( $wire => Some(ErrorCategory::$variant), )+
                    _ => None,
                }
            }
        }
    };
}

categories! {
    /// A wait or poll expired before its condition held.
    Timeout = "timeout", AfterWaiting,
        meaning: "A wait or poll (such as wait-for) ran out of time before its condition held.",
        recovery: "Observe again, then retry with a longer timeout, or give up on the step.";
    /// A selector matched several candidates and the tool would not guess.
    AmbiguousSelector = "ambiguous-selector", AfterChangingRequest,
        meaning: "A selector matched more than one candidate, and the tool refused to pick one.",
        recovery: "Make the selector narrower (an automationId first, then a className or a more exact name) and retry.";
    /// A reference resolved earlier is no longer valid.
    StaleElement = "stale-element", AfterReobserving,
        meaning: "An element or handle resolved earlier is no longer valid: its window closed or its tree was rebuilt.",
        recovery: "Query or find again for a fresh reference, then retry with it.";
    /// A selector matched nothing.
    NoTarget = "no-target", AfterReobserving,
        meaning: "A selector matched no window or element.",
        recovery: "Query to discover what is there, broaden the selector, or wait for the target to appear.";
    /// The request itself is malformed or cannot apply to its target.
    InvalidArgument = "invalid-argument", AfterChangingRequest,
        meaning: "The request is malformed or cannot apply: an argument is invalid (unknown action, oversized region) or the target lacks what the action needs.",
        recovery: "Correct the arguments and send a different request; repeating the same call, broadening a selector or finding the target again will not help.";
    /// A capture was produced but is black or blank.
    CaptureBlank = "capture-blank", AfterReobserving,
        meaning: "A screenshot was taken but is black or blank (the window was occluded, composited away, or the session locked).",
        recovery: "Restore or foreground the window and capture again (a region capture may help), or report the limitation; the suspect image is in error.partialResult.";
    /// The image handed to OCR was blank.
    OcrBlank = "ocr-blank", AfterReobserving,
        meaning: "The image given to text recognition was blank, so there was nothing to read.",
        recovery: "Capture a visible, foreground window again and rerun recognition on the new image.";
    /// Recognition ran on a real image and found no text.
    OcrNoText = "ocr-no-text", AfterChangingRequest,
        meaning: "Text recognition ran on a non-blank image and found no text (or not the text asked for).",
        recovery: "Point recognition at another region or element, or read the control through the accessibility tree instead.";
    /// Keyboard focus could not be confirmed on the target.
    Focus = "focus", AfterReobserving,
        meaning: "An action needed keyboard focus on the target and focus could not be confirmed there.",
        recovery: "Click the exact control (a real click focuses what a programmatic focus misses), or drive it with invoke instead of keystrokes.";
    /// The target runs at a higher integrity level than the tool.
    Elevation = "elevation", NotRecoverable,
        meaning: "The target runs with higher privileges than the tool (UAC elevation) and cannot be driven.",
        recovery: "Tell the operator; the action cannot go ahead unless the tool runs elevated too.";
    /// The target could not be brought to the foreground.
    Foreground = "foreground", AfterWaiting,
        meaning: "An action needed the target in the foreground and the operating system would not bring it forward.",
        recovery: "Retry once whatever holds the foreground (a foreground lock, a modal dialog, a full-screen window) has gone, or ask the operator to click the target.";
    /// An unexpected fault inside the tool.
    Internal = "internal", NotRecoverable,
        meaning: "An unexpected fault inside the tool: a bug or an unhandled exception.",
        recovery: "Do not retry blindly; report it with error.lastObservation so the fault can be reproduced.";
}

impl fmt::Display for ErrorCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorCategory {
    type Err = ParseCategoryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCategory::from_wire(s).ok_or_else(|| ParseCategoryError {
            input: s.chars().take(MAX_ECHO).collect(),
        })
    }
}

/// How many characters of a rejected input an error message repeats.
const MAX_ECHO: usize = 64;

/// The error returned when a string is not one of the [`ErrorCategory`] wire names.
///
/// Its message lists the accepted names and, when the input differs from one only in case or
/// separators (`Timeout`, `no_target`), suggests it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", Describe(self))]
pub struct ParseCategoryError {
    input: String,
}

impl ParseCategoryError {
    /// The wire name the input was probably meant to be, if it differs only in case or in using
    /// `_` or a space for `-`.
    #[must_use]
    pub fn suggestion(&self) -> Option<ErrorCategory> {
        let folded: String = self
            .input
            .chars()
            .map(|c| match c {
                '_' | ' ' => '-',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        ErrorCategory::from_wire(&folded)
    }
}

/// Writes the message through [`ParseCategoryError::describe`].
struct Describe<'a>(&'a ParseCategoryError);

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.describe(f)
    }
}

impl ParseCategoryError {
    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown error category `{}`", self.input)?;
        if let Some(suggestion) = self.suggestion() {
            write!(
                f,
                " (categories are lowercase kebab-case: did you mean `{suggestion}`?)"
            )?;
        }
        f.write_str(": expected one of ")?;
        for (i, category) in ErrorCategory::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(category.as_str())?;
        }
        Ok(())
    }
}

impl serde::Serialize for ErrorCategory {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCategory {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ErrorCategory;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an error category string")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ErrorCategory, E> {
                v.parse()
                    .map_err(|err| crate::breach::fail(crate::Rule::CategoryClosedSet, err))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(feature = "schemars")]
#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
impl schemars::JsonSchema for ErrorCategory {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorCategory".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ErrorCategory::ALL.iter().map(|c| c.as_str()).collect();
        schemars::json_schema!({
            "description": "Coarse failure class from the closed taxonomy.",
            "type": "string",
            "enum": names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for category in ErrorCategory::ALL {
            assert!(seen.insert(category.as_str()), "duplicate {category}");
        }
    }

    #[test]
    fn suggestion_folds_case_and_separators() {
        let err = "No_Target".parse::<ErrorCategory>().unwrap_err();
        assert_eq!(err.suggestion(), Some(ErrorCategory::NoTarget));
        assert!(err.to_string().contains("did you mean `no-target`"));
        let err = "bogus".parse::<ErrorCategory>().unwrap_err();
        assert_eq!(err.suggestion(), None);
    }

    #[test]
    fn long_inputs_are_not_echoed_whole() {
        let long = "x".repeat(10_000);
        let message = long.parse::<ErrorCategory>().unwrap_err().to_string();
        assert!(message.len() < 400, "{}", message.len());
    }
}
