//! Open, validated code strings: [`ErrorCode`] and [`WarningCode`], with the well-known ones
//! as constants of the type itself and, for matching, [`KnownErrorCode`].
//!
//! Codes narrow a category. The set is open (agents tolerate codes they do not know by falling
//! back to the category), but every code is non-empty kebab-case: lowercase ASCII letters and
//! digits in runs separated by single hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`).
//!
//! The codes the contract's reference producer emits are constants (`ErrorCode::WINDOW_NOT_FOUND`),
//! and each knows the categories it rides under ([`ErrorCode::categories`]). A code that rides
//! under one brings it: [`ToolError::new`](crate::ToolError::new) cannot pair it with another.
//! A code that rides under several (`frame-all-black`: `capture-blank` or `ocr-blank`), and
//! any code of a tool's own, is given its category with
//! [`ToolError::classified`](crate::ToolError::classified).

mod open;
mod table;

#[cfg(feature = "schemars")]
pub(crate) use open::CODE_PATTERN;
pub use open::{ErrorCode, InvalidCode, WarningCode, is_kebab_case};
pub use table::KnownErrorCode;

use crate::ErrorCategory;

/// The error for a well-known code put under a category it does not ride under, or a code
/// that needs a category given with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe_mismatch(.code, *.category, .categories))]
pub struct CategoryMismatch {
    code: ErrorCode,
    category: Option<ErrorCategory>,
    categories: &'static [ErrorCategory],
}

impl CategoryMismatch {
    pub(crate) fn new(code: ErrorCode, category: Option<ErrorCategory>) -> Self {
        let categories = code.categories();
        CategoryMismatch {
            code,
            category,
            categories,
        }
    }

    /// The code.
    #[must_use]
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }

    /// The categories it rides under.
    #[must_use]
    pub fn categories(&self) -> &'static [ErrorCategory] {
        self.categories
    }
}

fn describe_mismatch(
    code: &ErrorCode,
    category: Option<ErrorCategory>,
    categories: &[ErrorCategory],
) -> String {
    let rides = categories
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    match category {
        Some(category) => format!("code `{code}` rides under {rides}, not `{category}`"),
        None if categories.is_empty() => {
            format!("code `{code}` is not a well-known code, so it needs a category")
        }
        None => format!("code `{code}` rides under {rides}, so it needs one of them"),
    }
}

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
