//! Validation of untyped JSON against the contract: the compiled schema plus the lints the
//! schema cannot express.
//!
//! [`Validator`] compiles the embedded envelope schema once; reuse it (or the shared instance
//! from [`Validator::shared`]). [`Validator::validate`] returns a [`Report`] with every
//! violation, each with the [`Rule`] it breaks, a JSON Pointer and a message, and, apart from
//! them, the lints: documents that keep the contract but are probably not what their producer
//! meant.
//!
//! ```
//! use agent_tool_result::Rule;
//! use agent_tool_result::validate::Validator;
//! use serde_json::json;
//!
//! let report = Validator::shared().validate(&json!({
//!     "ok": false,
//!     "error": { "code": "x", "category": "Timeout", "detail": "" }
//! }));
//! assert!(!report.is_valid());
//! let finding = &report.violations()[0];
//! assert_eq!(finding.rule(), Rule::CategoryClosedSet);
//! assert_eq!(finding.pointer(), "/error/category");
//! ```

use std::fmt;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::breach::{Breach, Object};
use crate::document::TopMembers;
use crate::object::json_type;
use crate::pointer::push_token;
use crate::rule::Finding;
use crate::{ErrorCategory, ErrorCode, Rule};
use annotations::{annotated_finding, annotated_rules};
use lints::{guarantee_counts, is_legacy_command_result, lints, lints_for, unaccounted_lint};
pub use output_schema::{InvalidOutputSchema, OutputSchema};

mod annotations;
mod call_tool_result;
mod closed;
mod lints;
mod output_schema;
mod scan;
mod skeleton;
mod text;

/// The outcome of validating one document.
///
/// ```
/// use agent_tool_result::Rule;
/// use agent_tool_result::validate::Validator;
///
/// // A lint: the document keeps the contract but is probably not what its producer meant.
/// let report = Validator::shared().validate_text(
///     r#"{"ok":false,"error":{"code":"window-not-found","category":"timeout","detail":"gone"}}"#,
/// );
/// assert!(report.is_valid());
/// assert_eq!(report.lints()[0].rule(), Rule::CodeCategoryMismatch);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub(crate) violations: Vec<Finding>,
    pub(crate) lints: Vec<Finding>,
}

impl Report {
    /// A report of these violations and lints, for checks of one's own.
    #[must_use]
    pub fn new(violations: Vec<Finding>, lints: Vec<Finding>) -> Self {
        Report { violations, lints }
    }

    /// Whether the document keeps the contract (lints do not count).
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    /// Every broken rule, in document order.
    #[must_use]
    pub fn violations(&self) -> &[Finding] {
        &self.violations
    }

    /// The lints.
    #[must_use]
    pub fn lints(&self) -> &[Finding] {
        &self.lints
    }
}

/// A `tools/call` result, checked: the report, and what the check read on the way
/// ([`Validator::check_call_tool_result_text`]).
#[derive(Clone, Debug)]
pub struct CheckedCallToolResult {
    report: Report,
    structured: Option<Value>,
    is_error: bool,
    /// Whether the result was read to its end as a `tools/call` result: what
    /// `structured` and `is_error` say is then all there is.
    read_whole: bool,
    members: TopMembers,
}

impl CheckedCallToolResult {
    /// The findings.
    #[must_use]
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The findings, and the parsed `structuredContent`.
    #[must_use]
    pub fn into_parts(self) -> (Report, Option<Value>) {
        (self.report, self.structured)
    }

    /// The result's `structuredContent`, parsed, when it carries one that is JSON.
    #[must_use]
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// Whether the result's `isError` is `true`.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The findings of `schema` (the result's tool's advertised `outputSchema`) on this
    /// result, whose `text` was checked: [`OutputSchema::check_text`]'s, without parsing the
    /// `structuredContent` this check parsed already (the text is read only to place a
    /// finding). When this check stopped before the end of the result (a member it refused),
    /// what it read says nothing of the rest, and the text is read whole.
    #[must_use]
    pub fn check_output_schema(&self, schema: &OutputSchema, text: &str) -> Vec<Finding> {
        if !self.read_whole {
            return schema.check_text(text);
        }
        let findings = schema.check_structured(self.structured.as_ref(), self.is_error);
        if findings.is_empty() {
            return findings;
        }
        crate::locate::locate_all(text, findings)
    }

    /// Whether the result names `resultType` at its top (read as the document rule reads
    /// names), whatever its value: what a result of MCP 2026-07-28 on carries.
    #[must_use]
    pub fn names_result_type(&self) -> bool {
        self.members.result_type
    }

    /// Whether the text names a member of a `tools/call` result at its top (`content`,
    /// `structuredContent` or `isError`, whatever its value), read as the document rule
    /// reads names: what tells a tool result whose request is not at hand.
    #[must_use]
    pub fn has_tool_result_members(&self) -> bool {
        self.members.content || self.members.structured_content || self.members.is_error
    }
}

/// Which contract a validator checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Envelope,
    Guarantee,
}

/// The compiled envelope schema and the contract lints.
///
/// ```
/// use agent_tool_result::Rule;
/// use agent_tool_result::validate::Validator;
/// use serde_json::json;
///
/// let validator = Validator::shared();
/// let report = validator.validate(&json!({ "ok": false, "result": { "n": 1 } }));
/// let rules: Vec<Rule> = report.violations().iter().map(|v| v.rule()).collect();
/// assert_eq!(rules, [Rule::FailureRequiresError, Rule::FailureForbidsResult]);
///
/// let report = validator.validate(&json!({
///     "ok": false,
///     "error": { "code": "element-not-found", "category": "timeout", "detail": "" },
/// }));
/// assert!(report.is_valid());
/// assert_eq!(report.lints()[0].rule(), Rule::CodeCategoryMismatch);
/// ```
pub struct Validator {
    kind: Kind,
    /// The compiled schema, on first use: a valid document of a common shape never needs it.
    compiled: OnceLock<Compiled>,
}

/// A contract's schema, compiled, and what its annotations say.
struct Compiled {
    schema: jsonschema::Validator,
    /// Schema locations that enforce one named rule, read from their `$comment: "rule: ..."`.
    rule_locations: Vec<(String, Rule)>,
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validator")
            .field("kind", &self.kind)
            .field("compiled", &self.compiled.get().is_some())
            .finish()
    }
}

impl Default for Validator {
    fn default() -> Self {
        Validator::new()
    }
}

impl Validator {
    /// The validator of the embedded envelope schema, compiled on first use.
    ///
    /// # Panics
    ///
    /// Never in practice: the embedded schema compiles, which the crate's tests check.
    #[must_use]
    pub fn new() -> Self {
        Validator {
            kind: Kind::Envelope,
            compiled: OnceLock::new(),
        }
    }

    /// The validator of the embedded guarantee result schema, compiled on first use: the
    /// validator of the second contract, with the same findings, rules and pointers, the
    /// invariant the schema cannot express (counts within `requested`) and its lint
    /// (recipients unaccounted for).
    ///
    /// ```
    /// use agent_tool_result::Rule;
    /// use agent_tool_result::validate::Validator;
    ///
    /// let report = Validator::shared_guarantee().validate_text(
    ///     r#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"deny","code":"contact_opted_out"}}"#,
    /// );
    /// assert_eq!(report.violations()[0].rule(), Rule::GuaranteeDenyBeforeProvider);
    /// ```
    ///
    /// # Panics
    ///
    /// Never in practice: the embedded schema compiles, which the crate's tests check.
    #[must_use]
    pub fn guarantee() -> Self {
        Validator {
            kind: Kind::Guarantee,
            compiled: OnceLock::new(),
        }
    }

    /// The guarantee validator shared by the whole process, compiled on first use.
    #[must_use]
    pub fn shared_guarantee() -> &'static Validator {
        static SHARED: OnceLock<Validator> = OnceLock::new();
        SHARED.get_or_init(Validator::guarantee)
    }

    /// The compiled schema, compiling it on first use.
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            let source = match self.kind {
                Kind::Envelope => crate::schema::envelope_schema(),
                Kind::Guarantee => crate::schema::guarantee_schema(),
            };
            let schema =
                jsonschema::draft202012::new(source).expect("the embedded schemas compile");
            let mut rule_locations = Vec::new();
            annotated_rules(source, &mut String::new(), &mut rule_locations);
            Compiled {
                schema,
                rule_locations,
            }
        })
    }

    /// A validator shared by the whole process, compiled on first use.
    #[must_use]
    pub fn shared() -> &'static Validator {
        static SHARED: OnceLock<Validator> = OnceLock::new();
        SHARED.get_or_init(Validator::new)
    }

    /// Whether `document` keeps the contract; the schema's verdict alone, without building a
    /// report.
    #[must_use]
    pub fn is_valid(&self, document: &Value) -> bool {
        self.compiled().schema.is_valid(document)
    }

    /// Checks `document` against the contract: every violation, and the lints.
    #[must_use]
    pub fn validate(&self, document: &Value) -> Report {
        if self.compiled().schema.is_valid(document) {
            self.report(document, Vec::new())
        } else {
            self.report(document, self.schema_violations(document))
        }
    }

    /// What the compiled schema finds wrong with `document`, in document order.
    fn schema_violations(&self, document: &Value) -> Vec<Finding> {
        let mut violations = Vec::new();
        let mut errors = self.compiled().schema.iter_errors(document).peekable();
        if errors.peek().is_some()
            && self.kind == Kind::Envelope
            && is_legacy_command_result(document)
        {
            let breach = Breach::LegacyCommandResult;
            violations.push(Finding::new(breach.rule(), "", breach.to_string()));
        }
        for error in errors {
            self.describe(&error, &mut violations);
        }
        violations
    }

    /// The report on `document` given the schema's violations: the invariants and lints the
    /// schema cannot express added.
    fn report(&self, document: &Value, mut violations: Vec<Finding>) -> Report {
        match self.kind {
            Kind::Envelope => Report {
                violations,
                lints: lints(document),
            },
            Kind::Guarantee => {
                let (over, unaccounted) = guarantee_counts(document);
                if over {
                    let breach = Breach::ImpactOverRequested;
                    violations.push(Finding::new(breach.rule(), "", breach.to_string()));
                }
                let lints = if violations.is_empty() && unaccounted {
                    vec![unaccounted_lint()]
                } else {
                    Vec::new()
                };
                Report { violations, lints }
            }
        }
    }

    fn describe(&self, error: &jsonschema::ValidationError<'_>, out: &mut Vec<Finding>) {
        let pointer = error.instance_path().as_str();
        if let Some(rule) = self.annotated_rule(error.schema_path().as_str())
            && annotated_finding(rule, error, out)
        {
            return;
        }
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    let mut at = pointer.to_owned();
                    push_token(&mut at, key);
                    let message = match self.object_at(pointer) {
                        Some(object) => Breach::UnknownField { object, key }.to_string(),
                        None => format!("unknown field `{key}`"),
                    };
                    out.push(Finding::new(Rule::NoUnknownFields, at, message));
                }
            }
            ValidationErrorKind::Required { property } => {
                let field = property.as_str().unwrap_or_default();
                let message = match self.object_at(pointer) {
                    Some(object) => Breach::MissingField { object, field }.to_string(),
                    None => format!("missing field `{field}`"),
                };
                out.push(Finding::new(Rule::RequiredField, pointer, message));
            }
            ValidationErrorKind::Enum { .. } => {
                let input = error.instance().as_str().unwrap_or_default();
                let message = match input.parse::<ErrorCategory>() {
                    Err(err) => err.to_string(),
                    Ok(_) => lowercase_first(&error.to_string()),
                };
                out.push(Finding::new(Rule::CategoryClosedSet, pointer, message));
            }
            ValidationErrorKind::Pattern { .. } => {
                let input = error.instance().as_str().unwrap_or_default();
                let message = match ErrorCode::new(input.to_owned()) {
                    Err(err) => err.to_string(),
                    Ok(_) => lowercase_first(&error.to_string()),
                };
                out.push(Finding::new(Rule::CodeKebabCase, pointer, message));
            }
            ValidationErrorKind::Type { kind } => {
                let rule = match pointer {
                    "" => Rule::EnvelopeIsObject,
                    "/result" | "/error/lastObservation" | "/error/partialResult" => {
                        Rule::PayloadIsObject
                    }
                    _ => Rule::FieldType,
                };
                let expected = expected_type(kind);
                let found = json_type(error.instance());
                let message = Breach::WrongType {
                    expected: &expected,
                    found,
                }
                .to_string();
                out.push(Finding::new(rule, pointer, message));
            }
            _ => {
                let message = lowercase_first(&error.to_string());
                out.push(Finding::new(Rule::FieldType, pointer, message));
            }
        }
    }

    /// The closed object of this validator's contract that a pointer names, if any.
    fn object_at(&self, pointer: &str) -> Option<Object> {
        match self.kind {
            Kind::Envelope => closed::in_envelope(pointer),
            Kind::Guarantee => closed::in_guarantee(pointer),
        }
    }

    /// The rule of the annotated schema location that `schema_path` falls in, if any.
    fn annotated_rule(&self, schema_path: &str) -> Option<Rule> {
        self.compiled()
            .rule_locations
            .iter()
            .filter(|(location, _)| {
                schema_path
                    .strip_prefix(location.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .max_by_key(|(location, _)| location.len())
            .map(|&(_, rule)| rule)
    }
}

/// The type or types a `type` keyword asked for, in prose.
fn expected_type(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn lowercase_first(message: &str) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A document the fast path did not accept (from [`Validator::fast_report`]): its report,
/// read the slow way, finds every violation, or, rarely, that it is valid after all.
#[derive(Debug)]
#[must_use = "a document not yet reported"]
pub struct SlowPath<'a> {
    validator: &'a Validator,
    text: &'a str,
}

impl SlowPath<'_> {
    /// The report [`Validator::validate_text`] gives the document.
    #[must_use]
    pub fn report(self) -> Report {
        self.validator.full_report(self.text)
    }

    /// The report [`Validator::validate_any_text`] gives the document.
    #[must_use]
    pub fn report_any(self) -> Report {
        self.validator.slow_any_report(self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_compiled_when_a_document_needs_it() {
        for validator in [Validator::new(), Validator::guarantee()] {
            assert!(validator.compiled.get().is_none());
            let _ = validator.compiled();
            assert!(validator.compiled.get().is_some(), "{validator:?}");
        }
        let validator = Validator::new();
        let report = validator.validate_text(r#"{"ok":true,"result":{"n":[1,"a"]}}"#);
        assert!(report.is_valid());
        assert!(
            validator.compiled.get().is_none(),
            "a common valid envelope"
        );
        assert!(!validator.validate_text(r#"{"ok":1}"#).is_valid());
        assert!(validator.compiled.get().is_some());
    }

    #[test]
    fn every_annotated_schema_location_names_a_rule() {
        let validator = Validator::new();
        let locations: Vec<(&str, Rule)> = validator
            .compiled()
            .rule_locations
            .iter()
            .map(|(location, rule)| (location.as_str(), *rule))
            .collect();
        assert_eq!(
            locations,
            [
                (
                    "/$defs/captureSummary/allOf/0",
                    Rule::CaptureArtifactExclusive
                ),
                ("/$defs/noBase64", Rule::NoBase64InObservation),
                ("/allOf/0", Rule::FailureRequiresError),
                ("/allOf/1", Rule::SuccessForbidsError),
                ("/allOf/2", Rule::FailureForbidsResult),
            ]
        );
    }
}
