//! The open codes' type and syntax: [`ErrorCode`] and [`WarningCode`], each a non-empty
//! kebab-case string. Which codes are well known, and what they mean, is the table's.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The well-known spellings of a code type, which reading a code borrows instead of copying.
/// The table implements it, so the type needs nothing above it.
pub(super) trait WellKnown {
    /// The static spelling of a well-known code spelt `code`, if it is one.
    fn spelling(code: &str) -> Option<&'static str>;
}

/// Whether `s` is a non-empty kebab-case code: `^[a-z0-9]+(-[a-z0-9]+)*$`.
///
/// A `const fn`, so [`error_code!`](crate::error_code) can reject a bad literal when it
/// compiles.
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
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe_invalid(.input, *.policy))]
pub struct InvalidCode {
    input: String,
    policy: bool,
}

impl InvalidCode {
    fn new(input: &str) -> Self {
        const MAX_ECHO: usize = 64;
        let mut echoed: String = input.chars().take(MAX_ECHO).collect();
        if echoed.len() < input.len() {
            echoed.push('…');
        }
        InvalidCode {
            input: echoed,
            policy: false,
        }
    }

    /// The error for a string that is not a guarantee result's policy code.
    pub(crate) fn policy(input: &str) -> Self {
        InvalidCode {
            policy: true,
            ..InvalidCode::new(input)
        }
    }
}

fn describe_invalid(input: &str, policy: bool) -> String {
    if input.is_empty() {
        "invalid code: codes must not be empty".to_owned()
    } else if policy {
        format!(
            "invalid policy code `{input}`: policy codes are lowercase letters and digits in \
             words joined by `_` or `-`"
        )
    } else {
        format!(
            "invalid code `{input}`: codes are non-empty kebab-case \
             (lowercase letters and digits separated by single hyphens)"
        )
    }
}

/// Declares a validated code newtype; shared by [`ErrorCode`] and [`WarningCode`].
macro_rules! code_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Cow<'static, str>);

        impl $name {
            /// Not public API: the code macros' constructor, for a literal they checked.
            #[doc(hidden)]
            #[must_use]
            pub const fn __from_checked(code: &'static str) -> Self {
                $name(Cow::Borrowed(code))
            }

            /// Not public API: the spelling of a constant, for the code macros (which run in a
            /// `const`, where a code may not be dropped).
            #[doc(hidden)]
            #[must_use]
            pub const fn __spelling(self) -> &'static str {
                let spelling = match &self.0 {
                    Cow::Borrowed(spelling) => *spelling,
                    Cow::Owned(_) => "",
                };
                std::mem::forget(self);
                spelling
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
                if let Some(known) = <$name as WellKnown>::spelling(code) {
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
        #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
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
    /// Agents may branch on codes they know (see [`ErrorCode::known`]) and must fall back to
    /// the category for the rest. The well-known codes are associated constants of this type.
    ///
    /// ```
    /// use agent_tool_result::{ErrorCategory, ErrorCode};
    ///
    /// const MY_CODE: ErrorCode = agent_tool_result::error_code!("cache-cold");
    /// assert_eq!(MY_CODE.category(), None);
    ///
    /// let code: ErrorCode = "window-not-found".parse()?;
    /// assert_eq!(code, ErrorCode::WINDOW_NOT_FOUND);
    /// assert_eq!(code.category(), Some(ErrorCategory::NoTarget));
    /// # Ok::<(), agent_tool_result::code::InvalidCode>(())
    /// ```
    ErrorCode, "an error code"
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
    WarningCode, "a warning code"
);

const SELECTOR_MATCHED_PREFIX: &str = "selector-matched-";

impl ErrorCode {
    /// `selector-matched-N`: a selector matched `count` candidates (an `ambiguous-selector`
    /// failure), or `None` when `count` is below 2: no match is a `no-target` failure and one
    /// match is a success, not an ambiguity.
    ///
    /// ```
    /// use agent_tool_result::{ErrorCategory, ErrorCode};
    ///
    /// let code = ErrorCode::selector_matched(3).unwrap();
    /// assert_eq!(code.as_str(), "selector-matched-3");
    /// assert_eq!(code.category(), Some(ErrorCategory::AmbiguousSelector));
    /// assert_eq!(code.selector_match_count(), Some(3));
    /// assert_eq!(ErrorCode::selector_matched(1), None);
    /// ```
    #[must_use]
    pub fn selector_matched(count: u32) -> Option<Self> {
        (count >= 2).then(|| ErrorCode::selector_matched_unchecked(count))
    }

    /// `selector-matched-N` for any `N`, as read back from a document.
    pub(crate) fn selector_matched_unchecked(count: u32) -> Self {
        ErrorCode(Cow::Owned(format!("{SELECTOR_MATCHED_PREFIX}{count}")))
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
}
