//! Open, validated code strings: [`ErrorCode`], [`WarningCode`] and [`KnownCode`].
//!
//! Codes narrow a category. The set is open (agents tolerate codes they do not know by falling
//! back to the category), but every code is non-empty kebab-case: lowercase ASCII letters and
//! digits in runs separated by single hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`).
//!
//! The codes the contract documents are constants. An error code constant is a [`KnownCode`]:
//! it carries its category, so [`ToolError::new`](crate::ToolError::new) cannot pair it with the
//! wrong one.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use crate::ErrorCategory;

/// Whether `s` is a non-empty kebab-case code: `^[a-z0-9]+(-[a-z0-9]+)*$`.
///
/// A `const fn`, so [`ErrorCode::from_static`] can reject a bad constant at compile time.
#[must_use]
pub const fn is_kebab_case(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    let mut previous_was_hyphen = true; // a leading hyphen is as bad as a doubled one
    while i < bytes.len() {
        match bytes[i] {
            b'a'..=b'z' | b'0'..=b'9' => previous_was_hyphen = false,
            b'-' if !previous_was_hyphen => previous_was_hyphen = true,
            _ => return false,
        }
        i += 1;
    }
    !previous_was_hyphen
}

/// The check behind every `from_static`: in a `const`, a bad code is a compile error.
const fn checked_static(code: &'static str) -> &'static str {
    assert!(is_kebab_case(code), "codes are non-empty kebab-case");
    code
}

/// The error returned when a string is not a valid code.
///
/// ```
/// use agent_tool_result::ErrorCode;
///
/// let err = ErrorCode::new("Element_Not_Found").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid code `Element_Not_Found`: codes are non-empty kebab-case \
///      (lowercase letters and digits separated by single hyphens)",
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidCode {
    input: String,
}

impl InvalidCode {
    fn new(input: &str) -> Self {
        const MAX_ECHO: usize = 64;
        let mut echoed: String = input.chars().take(MAX_ECHO).collect();
        if echoed.len() < input.len() {
            echoed.push('…');
        }
        InvalidCode { input: echoed }
    }
}

impl fmt::Display for InvalidCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.input.is_empty() {
            f.write_str("invalid code: codes must not be empty")
        } else {
            write!(
                f,
                "invalid code `{}`: codes are non-empty kebab-case \
                 (lowercase letters and digits separated by single hyphens)",
                self.input
            )
        }
    }
}

impl std::error::Error for InvalidCode {}

/// Declares a validated code newtype; shared by [`ErrorCode`] and [`WarningCode`].
macro_rules! code_type {
    ($(#[$doc:meta])* $name:ident, $what:literal, $lookup:path) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Cow<'static, str>);

        impl $name {
            #[doc = concat!("Makes ", $what, " from a string literal, checked at compile time in a `const`.")]
            ///
            /// # Panics
            ///
            /// Panics if `code` is not kebab-case. In a `const` item that panic is a compile
            /// error, which is the point: a misspelt constant never ships.
            #[must_use]
            pub const fn from_static(code: &'static str) -> Self {
                $name(Cow::Borrowed(checked_static(code)))
            }

            #[doc = concat!("Makes ", $what, " from any string, checking that it is kebab-case.")]
            ///
            /// # Errors
            ///
            /// [`InvalidCode`] when the string is empty or not kebab-case.
            pub fn new(code: impl Into<Cow<'static, str>>) -> Result<Self, InvalidCode> {
                let code = code.into();
                if is_kebab_case(&code) {
                    Ok($name(code))
                } else {
                    Err(InvalidCode::new(&code))
                }
            }

            /// Checks a borrowed string, reusing the static constant when it is a known code.
            fn parse(code: &str) -> Result<Self, InvalidCode> {
                if let Some(known) = $lookup(code) {
                    return Ok($name(Cow::Borrowed(known)));
                }
                if is_kebab_case(code) {
                    Ok($name(Cow::Owned(code.to_owned())))
                } else {
                    Err(InvalidCode::new(code))
                }
            }

            /// The code as a string slice.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.as_str())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl FromStr for $name {
            type Err = InvalidCode;

            fn from_str(s: &str) -> Result<Self, InvalidCode> {
                $name::parse(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidCode;

            fn try_from(s: String) -> Result<Self, InvalidCode> {
                $name::new(s)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl serde::de::Visitor<'_> for Visitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str(concat!($what, " string in kebab-case"))
                    }

                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).map_err(|err| crate::breach::fail(crate::Rule::CodeKebabCase, err))
                    }
                }
                deserializer.deserialize_str(Visitor)
            }
        }

        #[cfg(feature = "schemars")]
        impl schemars::JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "description": concat!("The code: ", $what, " in non-empty kebab-case; the set is open."),
                    "type": "string",
                    "pattern": CODE_PATTERN,
                })
            }
        }
    };
}

/// The code pattern as a JSON Schema `pattern`.
#[cfg(feature = "schemars")]
pub(crate) const CODE_PATTERN: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";

code_type!(
    /// The fine-grained, open code of a [`ToolError`](crate::ToolError), such as
    /// `element-not-found` or `selector-matched-3`.
    ///
    /// Agents may branch on codes they know and must fall back to the category for the rest.
    /// The codes the contract documents are associated constants of type [`KnownCode`], which
    /// also carry their category.
    ///
    /// ```
    /// use agent_tool_result::{ErrorCategory, ErrorCode};
    ///
    /// const MY_CODE: ErrorCode = ErrorCode::from_static("cache-cold");
    /// assert_eq!(MY_CODE.known_category(), None);
    ///
    /// let code: ErrorCode = "window-not-found".parse()?;
    /// assert_eq!(code, ErrorCode::WINDOW_NOT_FOUND);
    /// assert_eq!(code.known_category(), Some(ErrorCategory::NoTarget));
    /// # Ok::<(), agent_tool_result::InvalidCode>(())
    /// ```
    ErrorCode, "an error code", known_error_code
);

code_type!(
    /// The open code of a [`Warning`](crate::Warning), such as `minimized-window`.
    ///
    /// ```
    /// use agent_tool_result::WarningCode;
    ///
    /// assert_eq!(WarningCode::TREE_TRUNCATED.as_str(), "tree-truncated");
    /// assert!(WarningCode::new("Tree Truncated").is_err());
    /// ```
    WarningCode, "a warning code", known_warning_code
);

/// An error code together with the category it belongs to.
///
/// The well-known constants on [`ErrorCode`] are `KnownCode`s, and a tool crate can declare its
/// own with [`KnownCode::from_static`]; [`ToolError::new`](crate::ToolError::new) takes the
/// category from the code, so the two cannot disagree.
///
/// ```
/// use agent_tool_result::{ErrorCategory, ErrorCode, KnownCode};
///
/// const CACHE_COLD: KnownCode = KnownCode::from_static("cache-cold", ErrorCategory::Timeout);
/// assert_eq!(CACHE_COLD.category(), ErrorCategory::Timeout);
/// assert_eq!(ErrorCode::FRAME_ALL_BLACK.category(), ErrorCategory::CaptureBlank);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KnownCode {
    code: ErrorCode,
    category: ErrorCategory,
}

impl KnownCode {
    /// Declares a code and its category, checked at compile time in a `const`.
    ///
    /// # Panics
    ///
    /// Panics (a compile error in a `const` item) if `code` is not kebab-case.
    #[must_use]
    pub const fn from_static(code: &'static str, category: ErrorCategory) -> Self {
        KnownCode {
            code: ErrorCode::from_static(code),
            category,
        }
    }

    /// The code.
    #[must_use]
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }

    /// The category the code belongs to.
    #[must_use]
    pub const fn category(&self) -> ErrorCategory {
        self.category
    }

    /// The code as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.code.as_str()
    }

    /// Splits into the code and its category.
    #[must_use]
    pub fn into_parts(self) -> (ErrorCode, ErrorCategory) {
        (self.code, self.category)
    }
}

impl fmt::Display for KnownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<KnownCode> for ErrorCode {
    fn from(known: KnownCode) -> Self {
        known.code
    }
}

impl PartialEq<KnownCode> for ErrorCode {
    fn eq(&self, other: &KnownCode) -> bool {
        *self == other.code
    }
}

impl PartialEq<ErrorCode> for KnownCode {
    fn eq(&self, other: &ErrorCode) -> bool {
        self.code == *other
    }
}

const SELECTOR_MATCHED_PREFIX: &str = "selector-matched-";

/// Declares the well-known error codes: one row per code, with the categories it rides under
/// (the first is the one its constant carries), or `any` for a code that keeps whatever
/// category the failure named (its constant carries `internal`).
macro_rules! known_error_codes {
    ($( $(#[$doc:meta])* $name:ident = $wire:literal => $categories:tt; )+) => {
        impl ErrorCode {
            $(
                $(#[$doc])*
                pub const $name: KnownCode =
                    KnownCode::from_static($wire, known_error_codes!(@first $categories));
            )+

            /// Every fixed well-known code, in the order of the contract's table.
            /// `selector-matched-N` is a family, built with [`ErrorCode::selector_matched`].
            pub const WELL_KNOWN: &'static [KnownCode] = &[$(ErrorCode::$name),+];
        }

        fn known_error_code_row(code: &str) -> Option<(&'static str, &'static [ErrorCategory])> {
            match code {
                $( $wire => Some(($wire, known_error_codes!(@set $categories))), )+
                _ => None,
            }
        }
    };
    (@first any) => { ErrorCategory::Internal };
    (@first [$first:ident $(, $rest:ident)*]) => { ErrorCategory::$first };
    (@set any) => { &ANY_CATEGORY };
    (@set [$($category:ident),+]) => { &[$(ErrorCategory::$category),+] };
}

/// The categories of a code that rides under any: internal (its own) first, then the rest.
const ANY_CATEGORY: [ErrorCategory; ErrorCategory::ALL.len()] = {
    let mut all = ErrorCategory::ALL;
    let mut i = 0;
    while i < all.len() {
        if matches!(all[i], ErrorCategory::Internal) {
            all[i] = all[0];
            all[0] = ErrorCategory::Internal;
        }
        i += 1;
    }
    all
};

known_error_codes! {
    /// A `wait-for` condition did not hold before its timeout.
    WAIT_CONDITION_TIMEOUT = "wait-condition-timeout" => [Timeout];
    /// An element resolved earlier is no longer in the tree.
    ELEMENT_STALE = "element-stale" => [StaleElement];
    /// The window an earlier reference pointed at has closed.
    WINDOW_CLOSED = "window-closed" => [StaleElement];
    /// No window matched the selector.
    WINDOW_NOT_FOUND = "window-not-found" => [NoTarget];
    /// No element matched the selector.
    ELEMENT_NOT_FOUND = "element-not-found" => [NoTarget];
    /// The session id names no open session.
    UNKNOWN_SESSION = "unknown-session" => [InvalidArgument];
    /// The arguments are malformed (missing, wrong type, out of range).
    BAD_ARGUMENTS = "bad-arguments" => [InvalidArgument];
    /// The target does not support the pattern the action needs.
    PATTERN_UNSUPPORTED = "pattern-unsupported" => [InvalidArgument];
    /// The requested action is not one the tool knows.
    ACTION_UNKNOWN = "action-unknown" => [InvalidArgument];
    /// The requested region is larger than the screen or the tool's limit.
    REGION_TOO_LARGE = "region-too-large" => [InvalidArgument];
    /// The requested region lies outside the screen or window.
    REGION_OUT_OF_BOUNDS = "region-out-of-bounds" => [InvalidArgument];
    /// The image given to text recognition is larger than it accepts.
    OCR_IMAGE_TOO_LARGE = "ocr-image-too-large" => [InvalidArgument];
    /// A launch was asked for a path that does not exist.
    LAUNCH_PATH_MISSING = "launch-path-missing" => [InvalidArgument];
    /// A recording was asked for an action it does not know.
    RECORD_ACTION_UNKNOWN = "record-action-unknown" => [InvalidArgument];
    /// A recording was started while one is already running.
    RECORDING_IN_PROGRESS = "recording-in-progress" => [InvalidArgument];
    /// A recording was stopped or read when none is running.
    NO_RECORDING = "no-recording" => [InvalidArgument];
    /// A clipboard write was asked for without its text.
    CLIPBOARD_TEXT_MISSING = "clipboard-text-missing" => [InvalidArgument];
    /// A window query named a condition the tool does not know.
    WINDOWS_UNKNOWN_CONDITION = "windows-unknown-condition" => [InvalidArgument];
    /// A window query gave no criteria at all.
    WINDOWS_NO_CRITERIA = "windows-no-criteria" => [InvalidArgument];
    /// The category's own name as a code, as one reference tool writes it.
    INVALID_ARGUMENT = "invalid-argument" => [InvalidArgument];
    /// The command is not one the tool knows: `internal` from the dispatcher, `invalid-argument`
    /// from a tool that validates its own command names.
    UNKNOWN_COMMAND = "unknown-command" => [Internal, InvalidArgument];
    /// Every pixel of the frame is black: `capture-blank` from a window capture, `ocr-blank`
    /// from text recognition of a blank frame.
    FRAME_ALL_BLACK = "frame-all-black" => [CaptureBlank, OcrBlank];
    /// Nearly every pixel of the capture is one colour (the contract's example; the reference
    /// producer writes `frame-uniform`).
    FRAME_MOSTLY_BLANK = "frame-mostly-blank" => [CaptureBlank];
    /// Every pixel of the frame is one (not black) colour: `capture-blank` from a capture,
    /// `ocr-blank` from text recognition.
    FRAME_UNIFORM = "frame-uniform" => [CaptureBlank, OcrBlank];
    /// Text recognition ran on a non-blank frame and found no text.
    OCR_NO_TEXT = "ocr-no-text" => [OcrNoText];
    /// The focus tool could not confirm that a control took keyboard focus.
    FOCUS_NOT_CONFIRMED = "focus-not-confirmed" => [Focus];
    /// A programmatic set-focus did not leave the element with keyboard focus.
    FOCUS_NOT_SET = "focus-not-set" => [Focus];
    /// The target runs elevated and refuses the tool's access.
    TARGET_ELEVATED = "target-elevated" => [Elevation];
    /// The operating system refused to bring the target to the foreground.
    FOREGROUND_NOT_SET = "foreground-not-set" => [Foreground];
    /// The operator pressed the emergency stop; nothing runs until it is released.
    EMERGENCY_STOPPED = "emergency-stopped" => [Internal];
    /// The server runs in bootstrap mode and accepts only bootstrap commands.
    BOOTSTRAP_ONLY = "bootstrap-only" => [Internal];
    /// The user has not yet answered the consent prompt.
    CONSENT_PENDING = "consent-pending" => [Internal];
    /// Agent commands are switched off on this machine.
    AGENT_COMMANDS_DISABLED = "agent-commands-disabled" => [Internal];
    /// The tool name is not one the server knows.
    UNKNOWN_TOOL = "unknown-tool" => [Internal];
    /// This command is switched off on this machine.
    COMMAND_DISABLED = "command-disabled" => [Internal];
    /// The automation engine is not running.
    ENGINE_UNAVAILABLE = "engine-unavailable" => [Internal];
    /// The command was dropped before it ran.
    COMMAND_DROPPED = "command-dropped" => [Internal];
    /// Handing the command to the engine timed out (the tool's plumbing, not a wait the agent
    /// asked for, hence `internal`).
    SEND_COMMAND_TIMEOUT = "send-command-timeout" => [Internal];
    /// The caller may not provision this machine.
    PROVISIONING_NOT_AUTHORIZED = "provisioning-not-authorized" => [Internal];
    /// Provisioning the machine failed.
    PROVISIONING_FAILED = "provisioning-failed" => [Internal];
    /// The session token was refused.
    SESSION_TOKEN_INVALID = "session-token-invalid" => [Internal];
    /// No consent prompt can be shown.
    CONSENT_UNAVAILABLE = "consent-unavailable" => [Internal];
    /// The user did not answer the consent prompt in time (`internal`, like
    /// `send-command-timeout`).
    CONSENT_TIMEOUT = "consent-timeout" => [Internal];
    /// The user refused consent.
    CONSENT_DENIED = "consent-denied" => [Internal];
    /// The command finished without producing its output.
    NO_OUTPUT = "no-output" => [Internal];
    /// The accessibility (UI Automation) layer faulted.
    UIA_FAULTED = "uia-faulted" => [Internal];
    /// Dispatching the action faulted inside the tool.
    INVOKE_FAULTED = "invoke-faulted" => [Internal];
    /// Text recognition is not available on this machine.
    OCR_UNAVAILABLE = "ocr-unavailable" => [Internal];
    /// Reading an element's text threw.
    GET_TEXT_EXCEPTION = "get-text-exception" => [Internal];
    /// Capturing the screen or window threw.
    CAPTURE_EXCEPTION = "capture-exception" => [Internal];
    /// The program could not be launched.
    LAUNCH_FAILED = "launch-failed" => [Internal];
    /// The recorder threw.
    RECORD_EXCEPTION = "record-exception" => [Internal];
    /// The recording captured no frames.
    RECORD_NO_FRAMES = "record-no-frames" => [Internal];
    /// The recording could not be written.
    RECORD_WRITE_FAILED = "record-write-failed" => [Internal];
    /// An exception escaped the tool's own code (the contract's example; the reference
    /// producer writes `unhandled`).
    UNHANDLED_EXCEPTION = "unhandled-exception" => [Internal];
    /// A failure with no code of its own: it keeps whatever category the failure named, and
    /// `internal` when none.
    UNHANDLED = "unhandled" => any;
}

fn known_error_code(code: &str) -> Option<&'static str> {
    known_error_code_row(code).map(|(wire, _)| wire)
}

impl ErrorCode {
    /// `selector-matched-N`: a selector matched `count` candidates (an `ambiguous-selector`
    /// failure). `count` is the literal match count, normally 2 or more.
    ///
    /// ```
    /// use agent_tool_result::{ErrorCategory, ErrorCode};
    ///
    /// let code = ErrorCode::selector_matched(3);
    /// assert_eq!(code.as_str(), "selector-matched-3");
    /// assert_eq!(code.category(), ErrorCategory::AmbiguousSelector);
    /// assert_eq!(code.code().selector_match_count(), Some(3));
    /// ```
    #[must_use]
    pub fn selector_matched(count: u32) -> KnownCode {
        KnownCode {
            code: ErrorCode(Cow::Owned(format!("{SELECTOR_MATCHED_PREFIX}{count}"))),
            category: ErrorCategory::AmbiguousSelector,
        }
    }

    /// The `N` of a `selector-matched-N` code, or `None` for any other code.
    ///
    /// `N` must be written canonically (no sign, no leading zero) and fit a `u32`.
    #[must_use]
    pub fn selector_match_count(&self) -> Option<u32> {
        let digits = self.as_str().strip_prefix(SELECTOR_MATCHED_PREFIX)?;
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        if canonical { digits.parse().ok() } else { None }
    }

    /// The categories a well-known code rides under (including the `selector-matched-N`
    /// family), the one its constant carries first; empty for a code this crate does not
    /// know. A code that keeps any category (`unhandled`) lists all twelve.
    ///
    /// ```
    /// use agent_tool_result::{ErrorCategory, ErrorCode};
    ///
    /// let code: ErrorCode = "frame-uniform".parse()?;
    /// assert_eq!(code.known_categories(), [ErrorCategory::CaptureBlank, ErrorCategory::OcrBlank]);
    /// assert_eq!(code.known_category(), None, "two categories: the producer picks");
    /// # Ok::<(), agent_tool_result::InvalidCode>(())
    /// ```
    #[must_use]
    pub fn known_categories(&self) -> &'static [ErrorCategory] {
        if let Some((_, categories)) = known_error_code_row(self.as_str()) {
            return categories;
        }
        match self.selector_match_count() {
            Some(_) => &[ErrorCategory::AmbiguousSelector],
            None => &[],
        }
    }

    /// The one category a well-known code rides under, or `None` for a code this crate does
    /// not know or one that rides under several.
    #[must_use]
    pub fn known_category(&self) -> Option<ErrorCategory> {
        match self.known_categories() {
            [only] => Some(*only),
            _ => None,
        }
    }
}

/// Declares the well-known warning codes: one row per code.
macro_rules! known_warning_codes {
    ($( $(#[$doc:meta])* $name:ident = $wire:literal; )+) => {
        impl WarningCode {
            $( $(#[$doc])* pub const $name: WarningCode = WarningCode::from_static($wire); )+

            /// Every well-known warning code.
            pub const WELL_KNOWN: &'static [WarningCode] = &[$(WarningCode::$name),+];
        }

        fn known_warning_code(code: &str) -> Option<&'static str> {
            match code {
                $( $wire => Some($wire), )+
                _ => None,
            }
        }
    };
}

known_warning_codes! {
    /// The target was minimized and was restored before the call went on.
    MINIMIZED_WINDOW = "minimized-window";
    /// The accessibility tree was clipped to a depth or node limit.
    TREE_TRUNCATED = "tree-truncated";
    /// The requested region was clipped to the screen.
    REGION_CLAMPED = "region-clamped";
    /// A region capture looks blank (a blank region is a warning; a blank window capture is a
    /// `capture-blank` error).
    CAPTURE_BLANK = "capture-blank";
    /// The preferred capture method failed and a fallback method produced the image.
    CAPTURE_FALLBACK = "capture-fallback";
    /// The preferred text recognition engine failed and a fallback produced the text.
    OCR_FALLBACK = "ocr-fallback";
    /// A recording that was never fetched was thrown away when a new one started.
    UNFETCHED_RECORDING_DISCARDED = "unfetched-recording-discarded";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab_case_accepts_and_rejects() {
        for ok in ["a", "a-b", "selector-matched-3", "0", "x1-2y"] {
            assert!(is_kebab_case(ok), "{ok}");
        }
        for bad in ["", "-", "-a", "a-", "a--b", "A", "a_b", "a b", "é", "a.b"] {
            assert!(!is_kebab_case(bad), "{bad}");
        }
    }

    #[test]
    fn parsing_a_known_code_borrows_the_constant() {
        let code: ErrorCode = "uia-faulted".parse().unwrap();
        assert!(matches!(code.0, Cow::Borrowed(_)));
        let code: WarningCode = "region-clamped".parse().unwrap();
        assert!(matches!(code.0, Cow::Borrowed(_)));
    }

    #[test]
    fn selector_match_count_is_canonical() {
        let count = |s: &str| s.parse::<ErrorCode>().unwrap().selector_match_count();
        assert_eq!(count("selector-matched-0"), Some(0));
        assert_eq!(count("selector-matched-42"), Some(42));
        assert_eq!(count("selector-matched-007"), None);
        assert_eq!(count("selector-matched-99999999999"), None);
        assert_eq!(count("selector-matched-x"), None);
        assert_eq!(count("selector-matched-1-2"), None);
    }

    #[test]
    fn every_well_known_constant_carries_the_first_of_its_categories() {
        for known in ErrorCode::WELL_KNOWN {
            assert_eq!(known.code().known_categories()[0], known.category());
        }
        assert_eq!(ANY_CATEGORY.len(), 12);
        assert!(ErrorCategory::ALL.iter().all(|c| ANY_CATEGORY.contains(c)));
    }
}
