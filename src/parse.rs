//! [`ParseError`]: why a document could not be read as an envelope, and where.

use std::fmt;

use serde::de::DeserializeOwned;

use crate::envelope::wire::{MISSING_ERROR, UNEXPECTED_ERROR, UNEXPECTED_RESULT};
use crate::observation::{BOTH_ARTIFACT_FIELDS, NO_ARTIFACT_FIELD, NO_BASE64};
use crate::{Finding, Rule};

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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    pub(crate) fn locate<T: DeserializeOwned>(input: &[u8], first: &serde_json::Error) -> Self {
        let mut deserializer = serde_json::Deserializer::from_slice(input);
        match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
            Err(err) => {
                let pointer = pointer_of(err.path());
                ParseError::from_serde(pointer, err.inner())
            }
            Ok(_) => match deserializer.end() {
                Err(trailing) => ParseError::from_serde(String::new(), &trailing),
                Ok(()) => ParseError::from_serde(String::new(), first),
            },
        }
    }

    /// Reads `value` again with path tracking to explain why it is not an envelope.
    pub(crate) fn locate_in_value<T: DeserializeOwned>(value: &serde_json::Value) -> Self {
        match serde_path_to_error::deserialize::<_, T>(value) {
            Err(err) => ParseError::from_serde(pointer_of(err.path()), err.inner()),
            Ok(_) => ParseError {
                finding: Finding::new(
                    Rule::FieldType,
                    "",
                    "the value could not be read as an envelope",
                ),
            },
        }
    }

    fn from_serde(mut pointer: String, err: &serde_json::Error) -> Self {
        let message = bare_message(err);
        let rule = classify(err, &message, &pointer);
        match rule {
            // serde reports a duplicate on reading the key, before the path records it.
            Rule::NoDuplicateKeys => {
                if let Some(key) = backquoted(&message) {
                    push_token(&mut pointer, key);
                }
            }
            Rule::SuccessForbidsError => pointer.push_str("/error"),
            Rule::FailureForbidsResult => pointer.push_str("/result"),
            _ => {}
        }
        ParseError {
            finding: Finding::new(rule, pointer, message).at(err.line(), err.column()),
        }
    }
}

/// The `serde_json` message without its ` at line L column C` suffix, lowercased where it is not.
fn bare_message(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full);
    match message.strip_prefix("EOF while parsing") {
        Some(rest) => format!("unexpected end of input while parsing{rest}"),
        None => message.to_owned(),
    }
}

fn classify(err: &serde_json::Error, message: &str, pointer: &str) -> Rule {
    use serde_json::error::Category;
    match err.classify() {
        Category::Syntax if message.starts_with("recursion limit exceeded") => {
            return Rule::NestingLimit;
        }
        Category::Io | Category::Eof | Category::Syntax => return Rule::WellFormedJson,
        Category::Data => {}
    }
    let payload = pointer.is_empty() && message.contains("expected an envelope object");
    match message {
        MISSING_ERROR => Rule::FailureRequiresError,
        UNEXPECTED_ERROR => Rule::SuccessForbidsError,
        UNEXPECTED_RESULT => Rule::FailureForbidsResult,
        _ if payload => Rule::EnvelopeIsObject,
        m if m.starts_with(NO_BASE64) => Rule::NoBase64InObservation,
        m if m.starts_with(BOTH_ARTIFACT_FIELDS) || m.starts_with(NO_ARTIFACT_FIELD) => {
            Rule::CaptureArtifactExclusive
        }
        m if m.starts_with("missing field") => Rule::RequiredField,
        m if m.starts_with("unknown field") => Rule::NoUnknownFields,
        m if m.starts_with("duplicate field") => Rule::NoDuplicateKeys,
        m if m.starts_with("unknown error category") => Rule::CategoryClosedSet,
        m if m.starts_with("invalid code") => Rule::CodeKebabCase,
        m if m.contains("to be a JSON object or null") => Rule::PayloadIsObject,
        m if m.ends_with("expected a map")
            && (pointer.ends_with("/lastObservation") || pointer.ends_with("/partialResult")) =>
        {
            Rule::PayloadIsObject
        }
        _ => Rule::FieldType,
    }
}

/// The first backquoted name in a serde message (``duplicate field `x` ``).
fn backquoted(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// Appends one reference token to a JSON Pointer, escaping `~` and `/` (RFC 6901).
pub(crate) fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => push_token(&mut pointer, &index.to_string()),
            Segment::Map { key } => push_token(&mut pointer, key),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}] at ", self.message(), self.rule())?;
        self.finding.write_place(f)?;
        if self.line() > 0 {
            write!(f, ", line {} column {}", self.line(), self.column())?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_tokens_are_escaped() {
        let mut pointer = String::new();
        push_token(&mut pointer, "a/b~c");
        assert_eq!(pointer, "/a~1b~0c");
    }
}
