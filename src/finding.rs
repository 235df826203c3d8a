//! [`Finding`]: one broken rule at one place in a document.

use std::fmt;

use crate::Rule;
use crate::rule::Severity;

/// One broken rule (or lint) at one place in a document: the [`Rule`], the JSON Pointer of the
/// value concerned, and a lowercase message.
///
/// The [`Validator`](crate::validate::Validator) reports findings; a [`ParseError`](crate::ParseError)
/// carries one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    rule: Rule,
    pointer: String,
    message: String,
    line: usize,
    column: usize,
}

/// Messages quote the offending value; a 10 MB string is cut short.
const MAX_MESSAGE: usize = 300;

impl Finding {
    /// The rule concerned.
    #[must_use]
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Whether this makes the document invalid or is a lint.
    #[must_use]
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }

    /// The JSON Pointer (RFC 6901) of the value concerned; empty for the document root.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What is wrong, in lowercase prose.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The 1-based line of the value concerned, or 0 when the finding came from a parsed value
    /// rather than text.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }

    /// The 1-based byte column of the value concerned, or 0 when unknown.
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }

    /// Sets the 1-based line and byte column.
    #[must_use]
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = line;
        self.column = column;
        self
    }

    /// A finding of `rule` at `pointer`. Messages over 300 bytes are cut short.
    #[must_use]
    pub fn new(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_MESSAGE {
            let mut cut = MAX_MESSAGE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push('…');
        }
        Finding {
            rule,
            pointer: pointer.into(),
            message,
            line: 0,
            column: 0,
        }
    }

    /// Writes where the finding is: its pointer, or "the document root".
    pub(crate) fn write_place(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str("the document root")
        } else {
            f.write_str(&self.pointer)
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_place(f)?;
        write!(f, ": {} [{}]", self.message, self.rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let finding = Finding::new(Rule::FieldType, "", "é".repeat(400));
        assert!(finding.message().len() <= MAX_MESSAGE + '…'.len_utf8());
        assert!(finding.message().ends_with('…'));
    }
}
