//! Open, validated code strings: [`ErrorCode`] and [`WarningCode`], with the well-known ones
//! as constants of the type itself and, for matching, [`KnownErrorCode`].
//!
//! Codes narrow a category. The set is open (agents tolerate codes they do not know by falling
//! back to the category), but every code is non-empty kebab-case: lowercase ASCII letters and
//! digits in runs separated by single hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`).
//!
//! The codes the contract's reference producer emits are constants (`ErrorCode::WINDOW_NOT_FOUND`),
//! and each knows the categories it rides under ([`ErrorCode::categories`]). A failure names its
//! code and its category together, as a [`Classified`], checked when it compiles: a well-known
//! code that rides under one category is a constant of it (`Classified::WINDOW_NOT_FOUND`); a
//! code that rides under several (`frame-all-black`: `capture-blank` or `ocr-blank`), and any
//! code of a tool's own, is given its category with [`classified!`](crate::classified). A
//! code literal alone is [`error_code!`](crate::error_code), checked the same way.
//!
//! ```compile_fail
//! use agent_tool_result::{ToolError, error_code};
//!
//! // A tool's own code brings no category: the compiler asks for one.
//! let failure = ToolError::new(error_code!("cache-cold"), "The index was warming up.");
//! ```
//!
//! ```compile_fail
//! use agent_tool_result::{ErrorCode, ToolError};
//!
//! // Two categories: the compiler asks which.
//! let failure = ToolError::new(ErrorCode::FRAME_ALL_BLACK, "Nothing to read.");
//! ```

mod classified;
mod literal;
mod open;
mod table;

pub use classified::{CategoryMismatch, Classified, IntoClassified};
#[cfg(feature = "schemars")]
pub(crate) use open::CODE_PATTERN;
pub use open::{ErrorCode, InvalidCode, WarningCode, is_kebab_case};
pub use table::KnownErrorCode;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_matched_refuses_what_is_not_ambiguous() {
        assert_eq!(ErrorCode::selector_matched(0), None);
        assert_eq!(ErrorCode::selector_matched(1), None);
        let two = ErrorCode::selector_matched(2).unwrap();
        assert_eq!(two.known(), Some(KnownErrorCode::SelectorMatched(2)));
        let one: ErrorCode = "selector-matched-1".parse().unwrap();
        assert_eq!(one.known(), None, "read back, but not a known ambiguity");
    }

    #[test]
    fn every_closed_name_is_kebab_case() {
        for category in crate::ErrorCategory::ALL {
            assert!(is_kebab_case(category.as_str()), "{category}");
        }
        for rule in crate::Rule::ALL {
            assert!(is_kebab_case(rule.as_str()), "{rule}");
        }
    }
}
