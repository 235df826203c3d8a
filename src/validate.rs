//! Validation of untyped JSON against the contract: the compiled schema plus the lints the
//! schema cannot express.
//!
//! [`Validator`] compiles the embedded envelope schema once; reuse it (or the shared instance
//! from [`Validator::shared`]). [`Validator::validate`] returns a [`Report`] with every
//! violation, each with the [`Rule`] it breaks, a JSON Pointer and a message, and, apart from
//! them, the lints: documents that keep the contract but are probably not what their producer
//! meant.

use std::fmt;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::breach::{Breach, Object};
use crate::guarantee::GuaranteeResult;
use crate::object::json_type;
use crate::pointer::push_token;
use crate::rule::Finding;
use crate::strict::Checked;
use crate::{Envelope, ErrorCategory, ErrorCode, JsonObject, ParseError, Rule};
use annotations::{annotated_finding, annotated_rules};
use lints::{guarantee_counts, is_legacy_command_result, lints, lints_for, unaccounted_lint};
use scan::Verdict;

mod annotations;
mod call_tool_result;
mod lints;
mod scan;
mod skeleton;

/// The outcome of validating one document.
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
            Kind::Envelope => Object::at(pointer),
            Kind::Guarantee => Object::in_guarantee(pointer),
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

/// A result that is checked to be a JSON object and skipped, never built; what it skips is
/// checked as a parsed value would be (numbers, strings, depth).
struct SkippedResult;

impl<'de> serde::Deserialize<'de> for SkippedResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = SkippedResult;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SkippedResult, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(SkippedResult)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl Validator {
    /// Validates one document given as JSON text, with line and column on every finding.
    ///
    /// The fast path reads the text once, by hand for the common shapes and otherwise with the
    /// typed, contract-checking reader, building nothing of the tool's result; only a document
    /// it finds invalid is parsed again (without its payloads) and run through the compiled
    /// schema to report every violation. Its verdicts are the schema's
    /// (a differential test holds them together), with two additions the schema cannot see:
    /// text that is not JSON (`well-formed-json`, `nesting-limit`) and a key repeated in the
    /// envelope, an error or a warning (`no-duplicate-keys`).
    ///
    /// ```
    /// use agent_tool_result::Rule;
    /// use agent_tool_result::validate::Validator;
    ///
    /// let report = Validator::shared().validate_text("{\n  \"ok\": false\n}");
    /// let finding = &report.violations()[0];
    /// assert_eq!(finding.rule(), Rule::FailureRequiresError);
    /// assert_eq!((finding.line(), finding.column()), (1, 1));
    /// ```
    #[must_use]
    pub fn validate_text(&self, text: &str) -> Report {
        self.fast_report(text)
            .unwrap_or_else(|| self.full_report(text))
    }

    /// The fast path's report: `Some` when the typed reader accepts `text`.
    pub(crate) fn fast_report(&self, text: &str) -> Option<Report> {
        self.fast(text).map(|lints| Report {
            violations: Vec::new(),
            lints: locate_all(text, lints),
        })
    }

    /// The full report of a document the fast path did not accept: every violation, located;
    /// or, when neither the schema nor the key check finds one, the typed reader's verdict.
    pub(crate) fn full_report(&self, text: &str) -> Report {
        // The typed reader's own account, with where it stopped; read again only when needed.
        let typed_error = || {
            let read = match self.kind {
                Kind::Envelope => Envelope::<SkippedResult>::from_json(text).err(),
                Kind::Guarantee => GuaranteeResult::<JsonObject>::from_json(text).err(),
            };
            read.map_or_else(
                || Finding::new(Rule::WellFormedJson, "", "the document could not be read"),
                ParseError::into_finding,
            )
        };
        // The schema asks nothing of an envelope's payloads but their type: leave them out.
        // The skeleton also tells whether a key may repeat in one of the contract's objects.
        let parsed = match self.kind {
            Kind::Envelope => skeleton::parse(text),
            Kind::Guarantee => serde_json::from_str::<Value>(text).map(|value| (value, true)),
        };
        let Ok((value, maybe_repeated)) = parsed else {
            return Report {
                violations: vec![typed_error()],
                lints: Vec::new(),
            };
        };
        let mut report = self.report(&value, self.schema_violations(&value));
        // The parsed value has merged repeated keys; the text still has them. Keys may not
        // repeat in the contract's own objects; inside a payload, the last one wins.
        let closed = |pointer: &str| match self.kind {
            Kind::Envelope => matches!(
                Object::at(pointer),
                Some(Object::Envelope | Object::Error | Object::Warning)
            ),
            Kind::Guarantee => Object::in_guarantee(pointer).is_some(),
        };
        let repeated = if maybe_repeated {
            crate::locate::repeated_keys(text, &closed)
        } else {
            Vec::new()
        };
        let merged = !repeated.is_empty();
        for pointer in repeated {
            let key =
                crate::pointer::unescape_token(pointer.rsplit('/').next().unwrap_or_default());
            let message = Breach::DuplicateKey { key: &key }.to_string();
            report
                .violations
                .push(Finding::new(Rule::NoDuplicateKeys, pointer, message));
        }
        if merged {
            // The schema saw the last of each repeated value; the typed reader stops at the
            // first breach in document order, which may lie in an earlier one (`{"ok":1,
            // "ok":true}`). Its finding is reported too, so every reader's rule is here.
            let typed = typed_error();
            let known = report
                .violations
                .iter()
                .any(|f| f.rule() == typed.rule() && f.pointer() == typed.pointer());
            if !known {
                report.violations.push(typed);
            }
        }
        if report.violations.is_empty() {
            // Only the typed reader can tell: a valid document the fast path left to it, or
            // one that breaks what only the typed reader sees.
            if let Some(lints) = self.typed(text) {
                report.lints = lints;
            } else {
                report.violations.push(typed_error());
                report.lints.clear();
            }
        }
        Report {
            violations: locate_all(text, report.violations),
            lints: locate_all(text, report.lints),
        }
    }

    /// The fast path: `Some(lints)` when the document is certainly valid, `None` when it is
    /// certainly not or the full report must tell.
    fn fast(&self, text: &str) -> Option<Vec<Finding>> {
        match self.kind {
            Kind::Envelope => match scan::envelope(text) {
                Verdict::Valid(lints) => Some(lints),
                // The full report will find what is wrong; the typed reader would only agree.
                Verdict::Invalid => None,
                Verdict::Unsure => self.typed(text),
            },
            Kind::Guarantee => self.typed(text),
        }
    }

    /// The typed reader's verdict: `Some(lints)` when the document is valid.
    fn typed(&self, text: &str) -> Option<Vec<Finding>> {
        match self.kind {
            Kind::Envelope => skim(text).ok().map(|envelope| {
                envelope
                    .error()
                    .map(|error| lints_for(error.code(), Some(error.category())))
                    .unwrap_or_default()
            }),
            Kind::Guarantee => serde_json::from_str::<GuaranteeResult<JsonObject>>(text)
                .ok()
                .map(|result| {
                    if result.has_unaccounted_recipients() {
                        vec![unaccounted_lint()]
                    } else {
                        Vec::new()
                    }
                }),
        }
    }

    /// The fast path's verdict alone: whether `text` is a valid envelope.
    #[must_use]
    pub fn is_valid_text(&self, text: &str) -> bool {
        match self.kind {
            Kind::Envelope => match scan::envelope(text) {
                Verdict::Valid(_) => true,
                Verdict::Invalid | Verdict::Unsure => skim(text).is_ok(),
            },
            Kind::Guarantee => serde_json::from_str::<GuaranteeResult<JsonObject>>(text).is_ok(),
        }
    }
}

/// The fast path's read: the typed reader, checking every rule and building none of the
/// payloads (only the error's code and category are read from what it returns).
fn skim(text: &str) -> Result<Envelope<SkippedResult>, serde_json::Error> {
    let _skimming = crate::strict::Skimming::start();
    serde_json::from_str(text)
}

/// Gives every finding without a position the position of its pointer in `text`.
pub(crate) fn locate_all(text: &str, findings: Vec<Finding>) -> Vec<Finding> {
    findings
        .into_iter()
        .map(|finding| {
            if finding.line() > 0 {
                return finding;
            }
            let (line, column) = crate::locate::locate(text, finding.pointer());
            finding.at(line, column)
        })
        .collect()
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
