//! [`Classified`]: an error code with the one category a failure under it is reported under,
//! decided when it compiles. What [`ToolError::new`](crate::ToolError::new) takes.

use super::open::ErrorCode;
use crate::ErrorCategory;

/// An error code and its category, paired so that the pair is one the contract allows: a
/// well-known code under one of the categories it rides under, or a tool's own code under the
/// category its author chose. [`ToolError::new`](crate::ToolError::new) takes one, so a
/// failure's category is never looked up, or found missing, at run time.
///
/// Three ways to have one, each checked when it compiles:
///
/// - a well-known code that brings its category is a constant of this type, as in `http`'s
///   `StatusCode`: `Classified::WINDOW_NOT_FOUND` (under `no-target`);
/// - a tool's own code is declared with its category: `classified!("cache-cold", Timeout)`;
/// - a well-known code that rides under several categories is given one of them:
///   `classified!("frame-all-black", OcrBlank)` (or `classified!(ErrorCode::FRAME_ALL_BLACK,
///   OcrBlank)`).
///
/// ```
/// use agent_tool_result::{Classified, ErrorCategory, ToolError, classified};
///
/// const CACHE_COLD: Classified = classified!("cache-cold", Timeout);
///
/// let own = ToolError::new(CACHE_COLD, "The index was still warming up.");
/// assert_eq!(own.category(), ErrorCategory::Timeout);
///
/// let known = ToolError::new(Classified::WINDOW_NOT_FOUND, "No window titled 'Invoice'.");
/// assert_eq!(known.category(), ErrorCategory::NoTarget);
///
/// let picked = ToolError::new(classified!("frame-all-black", OcrBlank), "Nothing to read.");
/// assert_eq!(picked.category(), ErrorCategory::OcrBlank);
/// ```
///
/// A pair known only at run time (read from configuration, say) is checked by
/// [`Classified::new`], which returns an error instead.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Classified {
    code: ErrorCode,
    category: ErrorCategory,
}

impl Classified {
    /// `code` under `category`, checked at run time: any category for a tool's own code, one of
    /// its own for a well-known code. For a literal, [`classified!`](crate::classified) checks
    /// the same when it compiles.
    ///
    /// # Errors
    ///
    /// [`CategoryMismatch`] when a well-known code does not ride under `category`.
    ///
    /// ```
    /// use agent_tool_result::{Classified, ErrorCategory, ErrorCode};
    ///
    /// let own: ErrorCode = "quota-spent".parse()?;
    /// assert!(Classified::new(own, ErrorCategory::Internal).is_ok());
    /// let err = Classified::new(ErrorCode::FRAME_ALL_BLACK, ErrorCategory::Timeout).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "code `frame-all-black` rides under `capture-blank` or `ocr-blank`, not `timeout`"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(code: ErrorCode, category: ErrorCategory) -> Result<Self, CategoryMismatch> {
        if code.rides_under(category) {
            Ok(Classified { code, category })
        } else {
            Err(CategoryMismatch::new(code, Some(category)))
        }
    }

    /// `selector-matched-N` under `ambiguous-selector`: a selector matched `count`
    /// candidates; `None` below 2, which is no ambiguity
    /// ([`ErrorCode::selector_matched`]).
    #[must_use]
    pub fn selector_matched(count: u32) -> Option<Self> {
        ErrorCode::selector_matched(count).map(|code| Classified {
            code,
            category: ErrorCategory::AmbiguousSelector,
        })
    }

    /// The code.
    #[must_use]
    pub const fn code(&self) -> &ErrorCode {
        &self.code
    }

    /// The category.
    #[must_use]
    pub const fn category(&self) -> ErrorCategory {
        self.category
    }

    /// The code and the category, owned.
    #[must_use]
    pub fn into_parts(self) -> (ErrorCode, ErrorCategory) {
        (self.code, self.category)
    }

    /// A pair the table or a macro has checked.
    pub(crate) const fn checked(code: &'static str, category: ErrorCategory) -> Self {
        Classified {
            code: ErrorCode::__from_checked(code),
            category,
        }
    }

    /// Not public API: [`classified!`](crate::classified)'s constructor, for a pair it
    /// checked with [`Classified::__mismatch`].
    #[doc(hidden)]
    #[must_use]
    pub const fn __checked(code: &'static str, category: ErrorCategory) -> Self {
        Classified::checked(code, category)
    }
}

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

/// What names a failure's code and its category together: a [`Classified`] (or a reference to
/// one). A bare [`ErrorCode`] does not: it does not say which category the failure is under.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say which category the failure is under",
    label = "a code without its category",
    note = "a tool's own code is declared with its category: \
            `const CACHE_COLD: Classified = classified!(\"cache-cold\", Timeout);`",
    note = "a well-known code that rides under several categories is given one of them: \
            `classified!(\"frame-all-black\", OcrBlank)`",
    note = "a well-known code that brings its category is a constant of `Classified`: \
            `Classified::WINDOW_NOT_FOUND`"
)]
pub trait IntoClassified {
    /// The code and its category.
    fn into_classified(self) -> Classified;
}

impl IntoClassified for Classified {
    fn into_classified(self) -> Classified {
        self
    }
}

impl IntoClassified for &Classified {
    fn into_classified(self) -> Classified {
        self.clone()
    }
}
