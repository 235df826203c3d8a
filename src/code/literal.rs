//! The code macros: [`error_code!`](crate::error_code), [`warning_code!`](crate::warning_code)
//! and [`classified!`](crate::classified), each evaluated in a `const` wherever it is written,
//! so a literal that is not a code, or a category its code never rides under, fails to compile
//! with a message that says what to write.

/// An [`ErrorCode`](crate::ErrorCode) from a string literal, checked when it compiles: the
/// macro runs in a `const`, so a literal that is not kebab-case is a compile error that names
/// it, wherever the macro is written, and nothing is checked at run time.
///
/// ```
/// use agent_tool_result::{ErrorCode, error_code};
///
/// const CACHE_COLD: ErrorCode = error_code!("cache-cold");
/// assert_eq!(CACHE_COLD.as_str(), "cache-cold");
/// assert_eq!(error_code!("window-not-found"), ErrorCode::WINDOW_NOT_FOUND);
/// ```
///
/// Not kebab-case (upper case, a space, an underscore), empty, or with a doubled hyphen: each
/// fails to compile, in a `const` or not.
///
/// ```compile_fail,E0080
/// let code = agent_tool_result::error_code!("Cache Cold");
/// ```
///
/// ```compile_fail,E0080
/// const EMPTY: agent_tool_result::ErrorCode = agent_tool_result::error_code!("");
/// ```
///
/// ```compile_fail,E0080
/// let code = agent_tool_result::error_code!("window--closed");
/// ```
///
/// A string known only at run time goes through [`ErrorCode::new`](crate::ErrorCode::new),
/// which returns an error instead.
#[macro_export]
macro_rules! error_code {
    ($code:literal) => {
        const {
            $crate::__code_literal!("error code", $code);
            $crate::ErrorCode::__from_checked($code)
        }
    };
}

/// A [`WarningCode`](crate::WarningCode) from a string literal, checked when it compiles, as
/// [`error_code!`](crate::error_code) is.
///
/// ```
/// use agent_tool_result::{WarningCode, warning_code};
///
/// const CACHE_WARM: WarningCode = warning_code!("cache-warming");
/// assert_eq!(CACHE_WARM.as_str(), "cache-warming");
/// ```
///
/// ```compile_fail,E0080
/// let code = agent_tool_result::warning_code!("cache_warming");
/// ```
#[macro_export]
macro_rules! warning_code {
    ($code:literal) => {
        const {
            $crate::__code_literal!("warning code", $code);
            $crate::WarningCode::__from_checked($code)
        }
    };
}

/// A [`Classified`](crate::Classified) from a code literal and a category, checked when it compiles: the macro
/// runs in a `const`, so a pair the contract does not allow is a compile error that says what
/// to write instead, and nothing is checked at run time.
///
/// The code is a string literal (a tool's own code, or a well-known one) or a well-known
/// constant (`ErrorCode::FRAME_ALL_BLACK`); the category is an
/// [`ErrorCategory`](crate::ErrorCategory) variant's name.
///
/// ```
/// use agent_tool_result::{Classified, ErrorCategory, ErrorCode, classified};
///
/// const CACHE_COLD: Classified = classified!("cache-cold", Timeout);
/// assert_eq!(CACHE_COLD.code().as_str(), "cache-cold");
///
/// let blank = classified!(ErrorCode::FRAME_ALL_BLACK, CaptureBlank);
/// assert_eq!(blank.category(), ErrorCategory::CaptureBlank);
/// ```
///
/// A well-known code under a category it never rides under:
///
/// ```compile_fail,E0080
/// let wrong = agent_tool_result::classified!("frame-all-black", Timeout);
/// ```
///
/// ```compile_fail,E0080
/// use agent_tool_result::ErrorCode;
/// let wrong = agent_tool_result::classified!(ErrorCode::WINDOW_NOT_FOUND, Timeout);
/// ```
///
/// A code that is not kebab-case:
///
/// ```compile_fail,E0080
/// let wrong = agent_tool_result::classified!("Cache Cold", Timeout);
/// ```
#[macro_export]
macro_rules! classified {
    ($code:literal, $category:ident) => {
        const {
            $crate::__code_literal!("error code", $code);
            if let ::core::option::Option::Some(why) =
                $crate::Classified::__mismatch($code, $crate::ErrorCategory::$category)
            {
                ::core::panic!("{}", why);
            }
            $crate::Classified::__checked($code, $crate::ErrorCategory::$category)
        }
    };
    ($code:expr, $category:ident) => {
        const {
            let spelling = $code.__spelling();
            if let ::core::option::Option::Some(why) =
                $crate::Classified::__mismatch(spelling, $crate::ErrorCategory::$category)
            {
                ::core::panic!("{}", why);
            }
            $crate::Classified::__checked(spelling, $crate::ErrorCategory::$category)
        }
    };
}

/// Not public API: the check every code macro makes of its literal, in its `const`: a literal
/// that is not kebab-case fails to compile, with a message that names it.
#[doc(hidden)]
#[macro_export]
macro_rules! __code_literal {
    ($what:literal, $code:literal) => {
        if !$crate::code::is_kebab_case($code) {
            ::core::panic!(::core::concat!(
                $what,
                " \"",
                $code,
                "\" is not kebab-case: write lowercase letters and digits in words joined by \
                 single hyphens, as in \"cache-cold\""
            ));
        }
    };
}
