//! [`ParseError`]: why a document could not be read as an envelope, and where.

use std::fmt;

use serde::de::DeserializeOwned;

use crate::breach::{self, Breach};
use crate::rule::Finding;
use crate::strict::is_too_deep;
use crate::{Rule, pointer};

/// Why a document is not a valid envelope: the [`Rule`] it breaks, the JSON Pointer of the
/// offending value, and (when read from text) the line and column.
///
/// Messages are lowercase and name the rule:
///
/// ```
/// use agent_tool_result::{Envelope, Rule};
///
/// let err = Envelope::<serde_json::Value>::from_json(r#"{"ok":false}"#).unwrap_err();
/// assert_eq!(err.rule(), Rule::FailureRequiresError);
/// assert_eq!(
///     err.to_string(),
///     "ok is false but error is missing: a failure must carry an error object \
///      [failure-requires-error] at the document root, line 1 column 12",
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", Shown(.finding))]
pub struct ParseError {
    finding: Finding,
}

impl ParseError {
    /// The rule the document breaks.
    #[must_use]
    pub fn rule(&self) -> Rule {
        self.finding.rule()
    }

    /// The JSON Pointer (RFC 6901) of the offending value; empty for the document root.
    #[must_use]
    pub fn pointer(&self) -> &str {
        self.finding.pointer()
    }

    /// What is wrong, without the location.
    #[must_use]
    pub fn message(&self) -> &str {
        self.finding.message()
    }

    /// The rule, pointer, message and position together.
    #[must_use]
    pub fn finding(&self) -> &Finding {
        &self.finding
    }

    /// Takes the finding.
    #[must_use]
    pub fn into_finding(self) -> Finding {
        self.finding
    }

    /// The 1-based line where reading stopped, or 0 when the input was not text.
    #[must_use]
    pub fn line(&self) -> usize {
        self.finding.line()
    }

    /// The 1-based column where reading stopped, or 0 when the input was not text.
    #[must_use]
    pub fn column(&self) -> usize {
        self.finding.column()
    }

    /// Reads `input` again with path tracking to explain `first`, the error of the fast read.
    /// Text that is not JSON is refused as such, whatever a value the reader refused before
    /// the break would have said.
    pub(crate) fn locate<T: DeserializeOwned>(input: &[u8], first: &serde_json::Error) -> Self {
        if first.classify() == serde_json::error::Category::Data
            && let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(input)
            && let Some(not_json) = ParseError::not_json(input, &err)
        {
            return not_json;
        }
        breach::clear();
        let mut deserializer = serde_json::Deserializer::from_slice(input);
        match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
            Err(err) => ParseError::from_serde(pointer::of_path(err.path()), err.inner(), input),
            Ok(_) => match deserializer.end() {
                Err(trailing) => ParseError::from_serde(String::new(), &trailing, input),
                Ok(()) => ParseError::from_serde(String::new(), first, input),
            },
        }
    }

    /// The finding for text that is not JSON: `err` is a JSON reader's error on `input`;
    /// `None` when the reader refused a value, not the text (a data error).
    pub(crate) fn not_json(input: &[u8], err: &serde_json::Error) -> Option<Self> {
        if err.classify() == serde_json::error::Category::Data {
            return None;
        }
        breach::clear();
        Some(ParseError::from_serde(String::new(), err, input))
    }

    /// Reads `value` again with path tracking to explain why it is not an envelope.
    pub(crate) fn locate_in_value<T: DeserializeOwned>(value: &serde_json::Value) -> Self {
        breach::clear();
        match serde_path_to_error::deserialize::<_, T>(value) {
            Err(err) => ParseError::from_serde(pointer::of_path(err.path()), err.inner(), &[]),
            Ok(_) => ParseError {
                finding: Finding::new(
                    Rule::FieldType,
                    "",
                    "the value could not be read as an envelope",
                ),
            },
        }
    }

    /// The finding for `err`, raised at `pointer` while reading `input`: syntax errors by
    /// serde's own classification, every other by the breach the reader recorded.
    fn from_serde(mut pointer: String, err: &serde_json::Error, input: &[u8]) -> Self {
        use serde_json::error::Category;
        let pending = breach::take();
        let mut message = bare_message(err);
        let rule = match err.classify() {
            Category::Syntax if is_too_deep(input, offset(input, err.line(), err.column())) => {
                message = Breach::TooDeep.to_string();
                Rule::NestingLimit
            }
            Category::Syntax if input.starts_with(BYTE_ORDER_MARK) && err.line() == 1 => {
                message = Breach::ByteOrderMark.to_string();
                Rule::WellFormedJson
            }
            Category::Syntax if message.contains("hex escape") => {
                if let Some(escape) = lone_surrogate(input, offset(input, err.line(), err.column()))
                {
                    message = format!(
                        "a lone surrogate `{escape}` in a string: a high surrogate (\\ud800 to \\udbff) \
                         is valid JSON text only followed by a low one (\\udc00 to \\udfff), and \
                         a low one only after a high one"
                    );
                }
                Rule::WellFormedJson
            }
            Category::Io | Category::Eof | Category::Syntax => Rule::WellFormedJson,
            Category::Data => match pending {
                Some(pending) => {
                    pointer.push_str(&pending.at);
                    pending.rule
                }
                None => Rule::FieldType,
            },
        };
        ParseError {
            finding: Finding::new(rule, pointer, message).at(err.line(), err.column()),
        }
    }
}

/// The `\uXXXX` surrogate escape that ends at or just before `at` (where serde stopped
/// reading), if the text there is one.
fn lone_surrogate(input: &[u8], at: usize) -> Option<String> {
    let end = at.min(input.len());
    let window = &input[end.saturating_sub(16)..end.saturating_add(1).min(input.len())];
    let text = String::from_utf8_lossy(window);
    text.rmatch_indices("\\u").find_map(|(i, _)| {
        let hex = text.get(i + 2..i + 6)?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (0xD800..=0xDFFF)
            .contains(&unit)
            .then(|| format!("\\u{hex}"))
    })
}

/// UTF-8's encoding of U+FEFF, which some editors write at the start of a file.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// The byte offset of serde's 1-based line and column (the column of the last byte read).
fn offset(input: &[u8], line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        input
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .nth(line - 2)
            .map_or(input.len(), |(i, _)| i + 1)
    };
    (line_start + column).saturating_sub(1)
}

/// The `serde_json` message without its ` at line L column C` suffix.
fn bare_message(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    match message.strip_prefix("EOF while parsing") {
        Some(rest) => format!("unexpected end of input while parsing{rest}"),
        None => message.to_owned(),
    }
}

/// The message, the rule and the place, as a [`ParseError`] shows them.
struct Shown<'a>(&'a Finding);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let finding = self.0;
        write!(f, "{} [{}] at ", finding.message(), finding.rule())?;
        finding.write_place(f)?;
        if finding.line() > 0 {
            write!(f, ", line {} column {}", finding.line(), finding.column())?;
        }
        Ok(())
    }
}
