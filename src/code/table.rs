//! The one table of well-known codes: each error code's constant, its matchable
//! [`KnownErrorCode`] variant, its wire name and the categories it rides under; each warning
//! code's constant and wire name. These are the codes the contract's reference producer emits
//! (and the contract document's own examples), with their categories as it writes them.

use super::classified::Classified;
use super::open::{ErrorCode, WarningCode, WellKnown, is_kebab_case};
use crate::ErrorCategory;

/// Declares the well-known error codes: one row per code, with the categories it rides under
/// (the first is the one its constant is documented under), or `any` for a code that keeps
/// whatever category the failure named.
macro_rules! known_error_codes {
    ($( $(#[$doc:meta])* $name:ident, $variant:ident = $wire:literal => $categories:tt; )+) => {
        impl ErrorCode {
            $(
                $(#[$doc])*
                pub const $name: ErrorCode = {
                    assert!(is_kebab_case($wire));
                    ErrorCode::__from_checked($wire)
                };
            )+

            /// Every fixed well-known code, in the order of the table.
            /// `selector-matched-N` is a family, built with [`ErrorCode::selector_matched`].
            pub const WELL_KNOWN: &'static [ErrorCode] = &[$(ErrorCode::$name),+];
        }

        /// The well-known error codes, to `match` on: what [`ErrorCode::known`] returns.
        ///
        /// New codes join as the reference producer adds them, so the enum is
        /// `#[non_exhaustive]`: match the ones you handle and fall back to the category.
        ///
        /// ```
        /// use agent_tool_result::code::KnownErrorCode;
        /// use agent_tool_result::ErrorCode;
        ///
        /// let code: ErrorCode = "selector-matched-3".parse()?;
        /// let advice = match code.known() {
        ///     Some(KnownErrorCode::WindowNotFound) => "list the windows",
        ///     Some(KnownErrorCode::SelectorMatched(n)) if n > 2 => "narrow the selector a lot",
        ///     Some(KnownErrorCode::SelectorMatched(_)) => "narrow the selector",
        ///     _ => "fall back to the category",
        /// };
        /// assert_eq!(advice, "narrow the selector a lot");
        /// # Ok::<(), agent_tool_result::code::InvalidCode>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum KnownErrorCode {
            $( $(#[$doc])* $variant, )+
            /// `selector-matched-N`: a selector matched N (2 or more) candidates.
            SelectorMatched(u32),
        }

        impl KnownErrorCode {
            /// Every fixed well-known code (the `selector-matched-N` family apart).
            pub const ALL: &'static [KnownErrorCode] = &[$(KnownErrorCode::$variant),+];

            /// The code.
            #[must_use]
            pub fn code(self) -> ErrorCode {
                match self {
                    $( KnownErrorCode::$variant => ErrorCode::$name, )+
                    KnownErrorCode::SelectorMatched(n) => ErrorCode::selector_matched_unchecked(n),
                }
            }

            /// The category a failure with this code gets when none is named: its only one, or
            /// `internal` for a code that keeps any (the reference producer's rule for
            /// `unhandled`); `None` for a code that rides under several, which the producer
            /// picks from.
            #[must_use]
            pub const fn category(self) -> Option<ErrorCategory> {
                match self.categories() {
                    [only] => Some(*only),
                    all if all.len() == ErrorCategory::ALL.len() => Some(ErrorCategory::Internal),
                    _ => None,
                }
            }

            /// The categories the code rides under; all twelve for a code that keeps any.
            #[must_use]
            pub const fn categories(self) -> &'static [ErrorCategory] {
                match self {
                    $( KnownErrorCode::$variant => known_error_codes!(@set $categories), )+
                    KnownErrorCode::SelectorMatched(_) => &[ErrorCategory::AmbiguousSelector],
                }
            }

            /// The code with the category it brings, when it brings one (see
            /// [`KnownErrorCode::category`]); `None` for a code that rides under several,
            /// which is given one with [`classified!`](crate::classified).
            #[must_use]
            pub fn classified(self) -> Option<Classified> {
                match self {
                    $( KnownErrorCode::$variant => known_error_codes!(@brought $name $categories), )+
                    KnownErrorCode::SelectorMatched(count) => Classified::selector_matched(count),
                }
            }

            /// Whether the code rides under `category`.
            #[must_use]
            pub const fn rides_under(self, category: ErrorCategory) -> bool {
                let categories = self.categories();
                let mut i = 0;
                while i < categories.len() {
                    if categories[i] as u8 == category as u8 {
                        return true;
                    }
                    i += 1;
                }
                false
            }

            /// The well-known code spelt `code`, in a `const`: a fixed one, or a
            /// `selector-matched-N` with `N` of 2 or more, written canonically.
            const fn spelt(code: &str) -> Option<KnownErrorCode> {
                $( if same(code, $wire) { return Some(KnownErrorCode::$variant); } )+
                match selector_count(code) {
                    Some(count) if count >= 2 => Some(KnownErrorCode::SelectorMatched(count)),
                    _ => None,
                }
            }

            /// What a compile error says of this code under a category it never rides
            /// under: the categories it does, and what to write.
            const fn mismatch(self) -> &'static str {
                match self {
                    $( KnownErrorCode::$variant => known_error_codes!(@mismatch $name $wire $categories), )+
                    KnownErrorCode::SelectorMatched(_) => {
                        "error code \"selector-matched-N\" rides under AmbiguousSelector only: \
                         write Classified::selector_matched(n)"
                    }
                }
            }
        }

        impl Classified {
            $( known_error_codes!(@classified $(#[$doc])* $name $wire $categories); )+

    /// Not public API: [`classified!`](crate::classified)'s check, in a `const`: why `code`
            /// cannot ride under `category`, as a compile error's message; `None` when it can.
            #[doc(hidden)]
            #[must_use]
            pub const fn __mismatch(code: &str, category: ErrorCategory) -> Option<&'static str> {
                if !is_kebab_case(code) {
                    return Some("an error code is non-empty kebab-case");
                }
                match KnownErrorCode::spelt(code) {
                    Some(known) if !known.rides_under(category) => Some(known.mismatch()),
                    _ => None,
                }
            }
        }

        /// The fixed well-known code spelt `code`, if any.
        fn known_error_code(code: &str) -> Option<(&'static str, KnownErrorCode)> {
            match code {
                $( $wire => Some(($wire, KnownErrorCode::$variant)), )+
                _ => None,
            }
        }
    };
    (@set any) => { &ANY_CATEGORY };
    (@set [$($category:ident),+]) => { &[$(ErrorCategory::$category),+] };
    (@brought $name:ident [$first:ident $(, $rest:ident)+]) => { None };
    (@brought $name:ident $categories:tt) => { Some(Classified::$name) };
    (@mismatch $name:ident $wire:literal any) => { "" };
    (@mismatch $name:ident $wire:literal [$only:ident]) => {
        concat!(
            "error code \"", $wire, "\" rides under ", stringify!($only),
            " only: write Classified::", stringify!($name)
        )
    };
    (@mismatch $name:ident $wire:literal [$first:ident $(, $rest:ident)+]) => {
        concat!(
            "error code \"", $wire, "\" rides under ", stringify!($first),
            $(" or ", stringify!($rest),)+
            " only: write classified!(\"", $wire, "\", ", stringify!($first),
            "), or with another of those"
        )
    };
    (@classified $(#[$doc:meta])* $name:ident $wire:literal [$only:ident]) => {
        $(#[$doc])*
        #[doc = concat!("\n\n`", $wire, "` under `", stringify!($only), "`, its one category.")]
        pub const $name: Classified = Classified::checked($wire, ErrorCategory::$only);
    };
    (@classified $(#[$doc:meta])* $name:ident $wire:literal any) => {
        $(#[$doc])*
        #[doc = concat!(
            "\n\n`", $wire, "` under `internal`, what a failure that names no category gets; ",
            "`classified!(\"", $wire, "\", ..)` puts it under another."
        )]
        pub const $name: Classified = Classified::checked($wire, ErrorCategory::Internal);
    };
    // A code that rides under several categories brings none: its constant does not compile
    // where it is used, and the error says how to give it one.
    (@classified $(#[$doc:meta])* $name:ident $wire:literal [$first:ident $(, $rest:ident)+]) => {
        #[doc(hidden)]
        pub const $name: Classified =
            panic!("{}", known_error_codes!(@mismatch $name $wire [$first $(, $rest)+]));
    };
}

/// Whether two strings are the same, in a `const`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The `N` of `selector-matched-N` written canonically (no sign, no leading zero, fits a
/// `u32`), in a `const`.
const fn selector_count(code: &str) -> Option<u32> {
    const PREFIX: &[u8] = b"selector-matched-";
    let bytes = code.as_bytes();
    if bytes.len() <= PREFIX.len() {
        return None;
    }
    let mut i = 0;
    while i < PREFIX.len() {
        if bytes[i] != PREFIX[i] {
            return None;
        }
        i += 1;
    }
    if bytes[i] == b'0' && bytes.len() > i + 1 {
        return None;
    }
    let mut count: u32 = 0;
    while i < bytes.len() {
        let digit = bytes[i];
        if !digit.is_ascii_digit() {
            return None;
        }
        count = match count.checked_mul(10) {
            Some(tens) => match tens.checked_add((digit - b'0') as u32) {
                Some(count) => count,
                None => return None,
            },
            None => return None,
        };
        i += 1;
    }
    Some(count)
}

/// The categories of a code that rides under any: internal (what a failure that names none
/// gets) first, then the rest.
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
    WAIT_CONDITION_TIMEOUT, WaitConditionTimeout = "wait-condition-timeout" => [Timeout];
    /// An element resolved earlier is no longer in the tree.
    ELEMENT_STALE, ElementStale = "element-stale" => [StaleElement];
    /// The window an earlier reference pointed at has closed.
    WINDOW_CLOSED, WindowClosed = "window-closed" => [StaleElement];
    /// No window matched the selector.
    WINDOW_NOT_FOUND, WindowNotFound = "window-not-found" => [NoTarget];
    /// No element matched the selector.
    ELEMENT_NOT_FOUND, ElementNotFound = "element-not-found" => [NoTarget];
    /// The session id names no open session.
    UNKNOWN_SESSION, UnknownSession = "unknown-session" => [InvalidArgument];
    /// The arguments are malformed (missing, wrong type, out of range).
    BAD_ARGUMENTS, BadArguments = "bad-arguments" => [InvalidArgument];
    /// The target does not support the pattern the action needs.
    PATTERN_UNSUPPORTED, PatternUnsupported = "pattern-unsupported" => [InvalidArgument];
    /// The requested action is not one the tool knows.
    ACTION_UNKNOWN, ActionUnknown = "action-unknown" => [InvalidArgument];
    /// The requested region is larger than the screen or the tool's limit.
    REGION_TOO_LARGE, RegionTooLarge = "region-too-large" => [InvalidArgument];
    /// The requested region lies outside the screen or window.
    REGION_OUT_OF_BOUNDS, RegionOutOfBounds = "region-out-of-bounds" => [InvalidArgument];
    /// The image given to text recognition is larger than it accepts.
    OCR_IMAGE_TOO_LARGE, OcrImageTooLarge = "ocr-image-too-large" => [InvalidArgument];
    /// A launch was asked for a path that does not exist.
    LAUNCH_PATH_MISSING, LaunchPathMissing = "launch-path-missing" => [InvalidArgument];
    /// A recording was asked for an action it does not know.
    RECORD_ACTION_UNKNOWN, RecordActionUnknown = "record-action-unknown" => [InvalidArgument];
    /// A recording was started while one is already running.
    RECORDING_IN_PROGRESS, RecordingInProgress = "recording-in-progress" => [InvalidArgument];
    /// A recording was stopped or read when none is running.
    NO_RECORDING, NoRecording = "no-recording" => [InvalidArgument];
    /// A clipboard write was asked for without its text.
    CLIPBOARD_TEXT_MISSING, ClipboardTextMissing = "clipboard-text-missing" => [InvalidArgument];
    /// A window query named a condition the tool does not know.
    WINDOWS_UNKNOWN_CONDITION, WindowsUnknownCondition = "windows-unknown-condition" => [InvalidArgument];
    /// A window query gave no criteria at all.
    WINDOWS_NO_CRITERIA, WindowsNoCriteria = "windows-no-criteria" => [InvalidArgument];
    /// The category's own name as a code, as one reference tool writes it.
    INVALID_ARGUMENT, InvalidArgument = "invalid-argument" => [InvalidArgument];
    /// The command is not one the tool knows: `internal` from the dispatcher, `invalid-argument`
    /// from a tool that validates its own command names.
    UNKNOWN_COMMAND, UnknownCommand = "unknown-command" => [Internal, InvalidArgument];
    /// Every pixel of the frame is black: `capture-blank` from a window capture, `ocr-blank`
    /// from text recognition of a blank frame.
    FRAME_ALL_BLACK, FrameAllBlack = "frame-all-black" => [CaptureBlank, OcrBlank];
    /// Nearly every pixel of the capture is one colour (the contract's example; the reference
    /// producer writes `frame-uniform`).
    FRAME_MOSTLY_BLANK, FrameMostlyBlank = "frame-mostly-blank" => [CaptureBlank];
    /// Every pixel of the frame is one (not black) colour: `capture-blank` from a capture,
    /// `ocr-blank` from text recognition.
    FRAME_UNIFORM, FrameUniform = "frame-uniform" => [CaptureBlank, OcrBlank];
    /// Text recognition ran on a non-blank frame and found no text.
    OCR_NO_TEXT, OcrNoText = "ocr-no-text" => [OcrNoText];
    /// The focus tool could not confirm that a control took keyboard focus.
    FOCUS_NOT_CONFIRMED, FocusNotConfirmed = "focus-not-confirmed" => [Focus];
    /// A programmatic set-focus did not leave the element with keyboard focus.
    FOCUS_NOT_SET, FocusNotSet = "focus-not-set" => [Focus];
    /// The target runs elevated and refuses the tool's access.
    TARGET_ELEVATED, TargetElevated = "target-elevated" => [Elevation];
    /// The operating system refused to bring the target to the foreground.
    FOREGROUND_NOT_SET, ForegroundNotSet = "foreground-not-set" => [Foreground];
    /// The operator pressed the emergency stop; nothing runs until it is released.
    EMERGENCY_STOPPED, EmergencyStopped = "emergency-stopped" => [Internal];
    /// The server runs in bootstrap mode and accepts only bootstrap commands.
    BOOTSTRAP_ONLY, BootstrapOnly = "bootstrap-only" => [Internal];
    /// The user has not yet answered the consent prompt.
    CONSENT_PENDING, ConsentPending = "consent-pending" => [Internal];
    /// Agent commands are switched off on this machine.
    AGENT_COMMANDS_DISABLED, AgentCommandsDisabled = "agent-commands-disabled" => [Internal];
    /// The tool name is not one the server knows.
    UNKNOWN_TOOL, UnknownTool = "unknown-tool" => [Internal];
    /// This command is switched off on this machine.
    COMMAND_DISABLED, CommandDisabled = "command-disabled" => [Internal];
    /// The automation engine is not running.
    ENGINE_UNAVAILABLE, EngineUnavailable = "engine-unavailable" => [Internal];
    /// The command was dropped before it ran.
    COMMAND_DROPPED, CommandDropped = "command-dropped" => [Internal];
    /// Handing the command to the engine timed out (the tool's plumbing, not a wait the agent
    /// asked for, hence `internal`).
    SEND_COMMAND_TIMEOUT, SendCommandTimeout = "send-command-timeout" => [Internal];
    /// The caller may not provision this machine.
    PROVISIONING_NOT_AUTHORIZED, ProvisioningNotAuthorized = "provisioning-not-authorized" => [Internal];
    /// Provisioning the machine failed.
    PROVISIONING_FAILED, ProvisioningFailed = "provisioning-failed" => [Internal];
    /// The session token was refused.
    SESSION_TOKEN_INVALID, SessionTokenInvalid = "session-token-invalid" => [Internal];
    /// No consent prompt can be shown.
    CONSENT_UNAVAILABLE, ConsentUnavailable = "consent-unavailable" => [Internal];
    /// The user did not answer the consent prompt in time (`internal`, like
    /// `send-command-timeout`).
    CONSENT_TIMEOUT, ConsentTimeout = "consent-timeout" => [Internal];
    /// The user refused consent.
    CONSENT_DENIED, ConsentDenied = "consent-denied" => [Internal];
    /// The command finished without producing its output.
    NO_OUTPUT, NoOutput = "no-output" => [Internal];
    /// The accessibility (UI Automation) layer faulted.
    UIA_FAULTED, UiaFaulted = "uia-faulted" => [Internal];
    /// Dispatching the action faulted inside the tool.
    INVOKE_FAULTED, InvokeFaulted = "invoke-faulted" => [Internal];
    /// Text recognition is not available on this machine.
    OCR_UNAVAILABLE, OcrUnavailable = "ocr-unavailable" => [Internal];
    /// Reading an element's text threw.
    GET_TEXT_EXCEPTION, GetTextException = "get-text-exception" => [Internal];
    /// Capturing the screen or window threw.
    CAPTURE_EXCEPTION, CaptureException = "capture-exception" => [Internal];
    /// The program could not be launched.
    LAUNCH_FAILED, LaunchFailed = "launch-failed" => [Internal];
    /// The recorder threw.
    RECORD_EXCEPTION, RecordException = "record-exception" => [Internal];
    /// The recording captured no frames.
    RECORD_NO_FRAMES, RecordNoFrames = "record-no-frames" => [Internal];
    /// The recording could not be written.
    RECORD_WRITE_FAILED, RecordWriteFailed = "record-write-failed" => [Internal];
    /// An exception escaped the tool's own code (the contract's example; the reference
    /// producer writes `unhandled`).
    UNHANDLED_EXCEPTION, UnhandledException = "unhandled-exception" => [Internal];
    /// A failure with no code of its own: it keeps whatever category the failure named, and
    /// `internal` when none.
    UNHANDLED, Unhandled = "unhandled" => any;
}

/// Declares the well-known warning codes: one row per code.
macro_rules! known_warning_codes {
    ($( $(#[$doc:meta])* $name:ident = $wire:literal; )+) => {
        impl WarningCode {
            $(
                $(#[$doc])*
                pub const $name: WarningCode = {
                    assert!(is_kebab_case($wire));
                    WarningCode::__from_checked($wire)
                };
            )+

            /// Every well-known warning code.
            pub const WELL_KNOWN: &'static [WarningCode] = &[$(WarningCode::$name),+];
        }

        /// The well-known warning code spelt `code`, if any.
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

impl WellKnown for ErrorCode {
    fn spelling(code: &str) -> Option<&'static str> {
        known_error_code(code).map(|(wire, _)| wire)
    }
}

impl WellKnown for WarningCode {
    fn spelling(code: &str) -> Option<&'static str> {
        known_warning_code(code)
    }
}

impl ErrorCode {
    /// The well-known code this is, to `match` on; `None` for a code this crate does not know
    /// (and for `selector-matched-0` and `-1`, which report no ambiguity).
    #[must_use]
    pub fn known(&self) -> Option<KnownErrorCode> {
        if let Some((_, known)) = known_error_code(self.as_str()) {
            return Some(known);
        }
        self.selector_match_count()
            .filter(|&n| n >= 2)
            .map(KnownErrorCode::SelectorMatched)
    }

    /// The categories this code rides under, as the reference producer writes it: one for
    /// most well-known codes, two for a few, all twelve for `unhandled` (which keeps the
    /// category the failure named); empty for a code this crate does not know.
    ///
    /// ```
    /// use agent_tool_result::{ErrorCategory, ErrorCode};
    ///
    /// assert_eq!(
    ///     ErrorCode::FRAME_UNIFORM.categories(),
    ///     [ErrorCategory::CaptureBlank, ErrorCategory::OcrBlank]
    /// );
    /// assert_eq!(ErrorCode::FRAME_UNIFORM.category(), None, "two categories: the producer picks");
    /// ```
    #[must_use]
    pub fn categories(&self) -> &'static [ErrorCategory] {
        self.known().map_or(&[], KnownErrorCode::categories)
    }

    /// The category a [`ToolError::new`](crate::ToolError::new) with this code gets: the one
    /// a well-known code rides under, or `internal` for `unhandled` (which keeps whatever
    /// category a failure names, internal when none). `None` for a code that rides under
    /// several and for a code this crate does not know: those are given one.
    #[must_use]
    pub fn category(&self) -> Option<ErrorCategory> {
        self.known().and_then(KnownErrorCode::category)
    }

    /// Whether this code may ride under `category`: any category for a code this crate does
    /// not know, one of its own for a well-known one.
    #[must_use]
    pub fn rides_under(&self, category: ErrorCategory) -> bool {
        let categories = self.categories();
        categories.is_empty() || categories.contains(&category)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_any_set_holds_every_category_internal_first() {
        assert_eq!(ANY_CATEGORY[0], ErrorCategory::Internal);
        assert!(ErrorCategory::ALL.iter().all(|c| ANY_CATEGORY.contains(c)));
    }

    #[test]
    fn every_variant_round_trips_through_its_code() {
        for known in KnownErrorCode::ALL {
            assert_eq!(known.code().known(), Some(*known));
            assert!(!known.categories().is_empty());
        }
        assert_eq!(KnownErrorCode::ALL.len(), ErrorCode::WELL_KNOWN.len());
    }

    #[test]
    fn the_runtime_check_and_the_const_one_agree() {
        for known in KnownErrorCode::ALL {
            for category in ErrorCategory::ALL {
                let at_run_time = Classified::new(known.code(), category).is_ok();
                let when_compiled =
                    Classified::__mismatch(known.code().as_str(), category).is_none();
                assert_eq!(at_run_time, when_compiled, "{known:?} under {category}");
            }
        }
        assert_eq!(
            Classified::__mismatch("cache-cold", ErrorCategory::Focus),
            None
        );
        assert!(Classified::__mismatch("Cache", ErrorCategory::Focus).is_some());
    }

    #[test]
    fn a_mismatch_names_the_code_its_categories_and_the_fix() {
        let why = Classified::__mismatch("frame-all-black", ErrorCategory::Timeout).unwrap();
        assert_eq!(
            why,
            "error code \"frame-all-black\" rides under CaptureBlank or OcrBlank only: write \
             classified!(\"frame-all-black\", CaptureBlank), or with another of those"
        );
        let why = Classified::__mismatch("window-not-found", ErrorCategory::Timeout).unwrap();
        assert!(why.contains("NoTarget only"), "{why}");
        assert!(why.contains("Classified::WINDOW_NOT_FOUND"), "{why}");
    }
}
