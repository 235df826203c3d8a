//! The contract's named rules ([`Rule`]), which every rejection and lint points to, how grave
//! breaking one is ([`Severity`]), and one breach of a rule at one place ([`Finding`]).
//!
//! Every reader of this crate reads JSON the same way; [`MAX_DEPTH`] is how deep a document
//! may nest.
//!
//! ```
//! use agent_tool_result::rule::{Finding, Severity};
//! use agent_tool_result::Rule;
//!
//! let finding = Finding::new(Rule::FailureRequiresError, "", "ok is false but there is no error");
//! assert_eq!(finding.severity(), Severity::Error);
//! assert_eq!(
//!     finding.to_string(),
//!     "the document root: ok is false but there is no error [failure-requires-error]"
//! );
//! ```

use std::fmt;
use std::str::FromStr;

/// How many arrays and objects deep a document may nest (`serde_json`'s limit, less one).
pub const MAX_DEPTH: usize = 127;

/// Whether breaking a rule makes a document invalid or only earns a lint.
///
/// ```
/// use agent_tool_result::Rule;
/// use agent_tool_result::rule::Severity;
///
/// let lints = Rule::ALL.iter().filter(|rule| rule.severity() == Severity::Warning).count();
/// assert!(lints > 0 && lints < Rule::ALL.len());
/// assert_eq!(Severity::Warning.as_str(), "warning");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The document breaks the contract.
    Error,
    /// The document keeps the contract but is probably not what its producer meant.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A doc comment's text, as the lines of `///` comments joined make it, without the space
/// that starts it: the description a table row's documentation gives at run time.
pub(crate) const fn doc_text(text: &'static str) -> &'static str {
    match text.as_bytes() {
        [b' ', rest @ ..] => match std::str::from_utf8(rest) {
            Ok(rest) => rest,
            Err(_) => text,
        },
        _ => text,
    }
}

/// Declares [`Rule`] and its table: one row per rule.
macro_rules! rules {
    ($( $(#[doc = $doc:literal])* $variant:ident = $wire:literal, $severity:ident, $summary:literal; )+) => {
        /// A rule of the contract, as named in parse errors, validation violations and lints.
        ///
        /// ```
        /// use agent_tool_result::Rule;
        /// use agent_tool_result::rule::Severity;
        ///
        /// assert_eq!(Rule::FailureRequiresError.as_str(), "failure-requires-error");
        /// assert_eq!(Rule::SelectorMatchCount.severity(), Severity::Warning);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl Rule {
            /// Every rule: first those that make a document invalid, then the lints.
            pub const ALL: [Rule; [$($wire),+].len()] = [$(Rule::$variant),+];

            /// The rule's kebab-case name.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( Rule::$variant => $wire, )+ }
            }

            /// Whether breaking the rule is an error or a lint.
            #[must_use]
            pub const fn severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$severity, )+ }
            }

            /// One sentence stating the rule.
            #[must_use]
            pub const fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )+ }
            }

            /// What breaks the rule, as its documentation says it (Markdown: code in
            /// backticks), in one paragraph.
            ///
            /// ```
            /// use agent_tool_result::Rule;
            ///
            /// assert_eq!(
            ///     Rule::FailureRequiresError.description(),
            ///     "`ok` is false and there is no `error`.",
            /// );
            /// ```
            #[must_use]
            pub const fn description(self) -> &'static str {
                match self { $( Rule::$variant => doc_text(concat!($($doc),*)), )+ }
            }

            /// The rule's entry in this crate's documentation on docs.rs, at this version:
            /// what a code-scanning alert links to.
            ///
            /// ```
            /// use agent_tool_result::Rule;
            ///
            /// assert!(Rule::FailureRequiresError.help_url().ends_with(
            ///     "/agent_tool_result/rule/enum.Rule.html#variant.FailureRequiresError",
            /// ));
            /// ```
            #[must_use]
            pub fn help_url(self) -> String {
                let anchor = match self { $( Rule::$variant => stringify!($variant), )+ };
                format!(
                    "https://docs.rs/agent-tool-result/{}/agent_tool_result/rule/enum.Rule.html#variant.{anchor}",
                    env!("CARGO_PKG_VERSION"),
                )
            }
        }

        impl FromStr for Rule {
            type Err = ParseRuleError;

            fn from_str(s: &str) -> Result<Self, ParseRuleError> {
                match s {
                    $( $wire => Ok(Rule::$variant), )+
                    _ => Err(ParseRuleError(())),
                }
            }
        }
    };
}

rules! {
    /// The input is not well-formed JSON (syntax, truncation, encoding, trailing data).
    WellFormedJson = "well-formed-json", Error,
        "the document is one well-formed JSON value in UTF-8";
    /// The input nests deeper than a parser will follow.
    NestingLimit = "nesting-limit", Error,
        "the document nests no deeper than the parser's limit";
    /// The envelope is not a JSON object.
    EnvelopeIsObject = "envelope-is-object", Error,
        "an envelope is a JSON object";
    /// A required field (`ok`, or an error's or warning's `code`, `category`, `detail`) is missing.
    RequiredField = "required-field", Error,
        "ok, and every error's and warning's code, category and detail, are present";
    /// A field is not among those the contract defines at its level.
    NoUnknownFields = "no-unknown-fields", Error,
        "the envelope, the error and each warning carry no field the contract does not define";
    /// A key appears twice in the same object.
    NoDuplicateKeys = "no-duplicate-keys", Error,
        "no key appears twice in the envelope, the error or a warning";
    /// A field has the wrong JSON type.
    FieldType = "field-type", Error,
        "every field has the JSON type the contract gives it";
    /// `result`, `lastObservation` or `partialResult` is present but not an object.
    PayloadIsObject = "payload-is-object", Error,
        "result, lastObservation and partialResult are JSON objects or null";
    /// `ok` is false and there is no `error`.
    FailureRequiresError = "failure-requires-error", Error,
        "a failure (ok: false) carries an error object";
    /// `ok` is true and there is an `error`.
    SuccessForbidsError = "success-forbids-error", Error,
        "a success (ok: true) carries no error";
    /// `ok` is false and `result` is not null.
    FailureForbidsResult = "failure-forbids-result", Error,
        "a failure (ok: false) omits result or sets it to null";
    /// `error.category` is not one of the closed set.
    CategoryClosedSet = "category-closed-set", Error,
        "error.category is one of the twelve wire names, in lowercase kebab-case";
    /// A code is empty or not kebab-case.
    CodeKebabCase = "code-kebab-case", Error,
        "error and warning codes are non-empty kebab-case";
    /// `lastObservation` holds a `base64` key or a long base64 string somewhere.
    NoBase64InObservation = "no-base64-in-observation", Error,
        "lastObservation holds no base64 key and no string over 4 KiB that decodes as base64";
    /// A capture summary has both or neither of `artifact` and `artifactError`.
    CaptureArtifactExclusive = "capture-artifact-exclusive", Error,
        "a capture summary carries exactly one of artifact and artifactError";
    /// A guarantee result's `schemaVersion` is not 1.
    GuaranteeSchemaVersion = "guarantee-schema-version", Error,
        "a guarantee result's schemaVersion is 1";
    /// `settlement.state` is not one of the closed set.
    GuaranteeStateClosedSet = "guarantee-state-closed-set", Error,
        "settlement.state is not_started, committed or unknown";
    /// `policy.decision` is not one of the closed set.
    GuaranteeDecisionClosedSet = "guarantee-decision-closed-set", Error,
        "policy.decision is allow, deny or defer";
    /// `policy.code` is not lowercase words joined by `_` or `-`.
    GuaranteePolicyCodeForm = "guarantee-policy-code-form", Error,
        "policy.code is lowercase letters and digits in words joined by _ or -";
    /// `policy.retryAt` is not an RFC 3339 UTC instant.
    GuaranteeRetryAtForm = "guarantee-retry-at-form", Error,
        "policy.retryAt is an RFC 3339 instant in UTC";
    /// A deny that is not `not_started`, or that committed something.
    GuaranteeDenyBeforeProvider = "guarantee-deny-before-provider", Error,
        "a deny happens before the provider: not_started, nothing committed";
    /// A deny or a defer without `policy.code`.
    GuaranteeDecisionNeedsCode = "guarantee-decision-needs-code", Error,
        "a deny or a defer carries policy.code";
    /// `retryAt` on an allow.
    GuaranteeRetryAtOnDenyOrDefer = "guarantee-retry-at-on-deny-or-defer", Error,
        "policy.retryAt rides only on a deny or a defer";
    /// A defer that committed sends but is not `committed`.
    GuaranteeHoldIsCommitted = "guarantee-hold-is-committed", Error,
        "a defer that committed sends (a partial send with a durable hold) is committed";
    /// `not_started` with committed sends.
    GuaranteeNotStartedCommitsNothing = "guarantee-not-started-commits-nothing", Error,
        "a not_started settlement commits nothing";
    /// The counts add up to more than `requested`.
    GuaranteeImpactWithinRequested = "guarantee-impact-within-requested", Error,
        "committed, deferred, denied and failed add up to no more than requested";
    /// A tool's own field takes the name of an RFC 9457 problem member, which a deny's 422
    /// problem takes for itself.
    GuaranteeFieldsNotProblemMembers = "guarantee-fields-not-problem-members", Error,
        "the tool's own fields are not named type, title, status, detail or instance (a deny rides in a problem)";
    /// A guarantee tool's refusal is not a problem that names a refusal kind.
    RefusalShape = "refusal-shape", Error,
        "a guarantee tool's refusal is an RFC 9457 problem whose type and status name a refusal";
    /// The document is the older `CommandResult` shape (`success`, `command`), not an envelope.
    NotLegacyCommandResult = "not-legacy-command-result", Error,
        "an envelope is not the older CommandResult shape; atr migrate converts one";
    /// A `tools/call` result is not well-formed (content blocks, field types, base64 images).
    McpResultShape = "mcp-result-shape", Error,
        "a tools/call result is an object with a content array of typed blocks";
    /// A `tools/call` result carries no envelope, or is not complete.
    McpEnvelopePresent = "mcp-envelope-present", Error,
        "a complete tools/call result carries the envelope in structuredContent or a text block";
    /// `isError` does not mirror the document: `!ok` for an envelope, a deny for a guarantee
    /// result, `true` for a refusal.
    McpIsErrorMirror = "mcp-is-error-mirror", Error,
        "a tools/call result's isError is the envelope's !ok, true exactly for a guarantee deny, true for a refusal";
    /// The text block and `structuredContent` carry different JSON.
    McpTextMatchesStructured = "mcp-text-matches-structured", Error,
        "the text block holds the same JSON as structuredContent";
    /// A line of a recorded session is not a JSON-RPC 2.0 message: a request or notification
    /// (`method`), or a response with exactly one of `result` and `error`, each with
    /// `"jsonrpc": "2.0"` and an `id` that is a string, a number or null. An empty batch (`[]`)
    /// is none either: JSON-RPC 2.0 answers it as an invalid request.
    JsonRpcMessage = "jsonrpc-message", Error,
        "each message of a session is a JSON-RPC 2.0 request, notification, or response with exactly one of result and error";
    /// A `tools/call` result's `structuredContent` breaks the `outputSchema` the session's
    /// `tools/list` advertised for the tool (error results too, as strict clients check), a
    /// result that is not an error carries none, or the listing advertises an `outputSchema`
    /// that is not an object schema (`"type": "object"`, as MCP requires).
    OutputSchema = "output-schema", Error,
        "a tools/call result's structuredContent keeps the outputSchema its tool advertised";
    /// The `result` is an object, but not one the tool's own result type reads.
    ToolResultType = "tool-result-type", Error,
        "result has the shape of the tool's own result type (typed readers only)";
    /// A well-known error code appears under a category other than its own.
    CodeCategoryMismatch = "code-category-mismatch", Warning,
        "a well-known error code appears under its documented category";
    /// Under a committed settlement, requested recipients the counts do not account for.
    GuaranteeImpactAccounted = "guarantee-impact-accounted", Warning,
        "under a committed settlement the counts account for every requested recipient";
    /// A `selector-matched-N` code has `N` below 2, which is not ambiguous.
    SelectorMatchCount = "selector-match-count", Warning,
        "selector-matched-N reports an ambiguity, so N is at least 2";
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string names no [`Rule`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule name")]
pub struct ParseRuleError(());

/// One broken rule (or lint) at one place in a document: the [`Rule`], the JSON Pointer of the
/// value concerned, and a lowercase message.
///
/// The [`Validator`](crate::validate::Validator) reports findings; a [`ParseError`](crate::ParseError)
/// carries one.
///
/// ```
/// use agent_tool_result::rule::Finding;
/// use agent_tool_result::{Envelope, Rule};
///
/// let err = Envelope::<serde_json::Value>::from_json(r#"{"ok":true,"extra":1}"#).unwrap_err();
/// let finding = err.finding();
/// assert_eq!(finding.rule(), Rule::NoUnknownFields);
/// assert_eq!((finding.pointer(), finding.line()), ("/extra", 1));
/// ```
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
    fn names_round_trip_and_errors_come_first() {
        let mut seen_warning = false;
        for rule in Rule::ALL {
            assert_eq!(rule.as_str().parse::<Rule>(), Ok(rule));
            match rule.severity() {
                Severity::Warning => seen_warning = true,
                Severity::Error => assert!(!seen_warning, "{rule} listed after a lint"),
            }
        }
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let finding = Finding::new(Rule::FieldType, "", "é".repeat(400));
        assert!(finding.message().len() <= MAX_MESSAGE + '…'.len_utf8());
        assert!(finding.message().ends_with('…'));
    }
}
