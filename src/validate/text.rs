//! Validating JSON text: the fast path (one pass that accepts or refutes), the full report
//! (the schema on a skeleton of the text, repeated keys, the typed reader's word), and the
//! positions of findings in the text.

use std::fmt;

use serde_json::Value;

use super::lints::{lints_for, unaccounted_lint};
use super::scan::{self, Verdict};
use super::{Kind, Report, SlowPath, Validator, closed, skeleton};
use crate::breach::Breach;
use crate::guarantee::GuaranteeResult;
use crate::locate::locate_all;
use crate::rule::Finding;
use crate::strict::Checked;
use crate::{Envelope, JsonObject, ParseError, Rule};

/// A result that is checked to be a JSON object and skipped, never built; what it skips is
/// checked as a parsed value would be (numbers, strings, depth).
pub(super) struct SkippedResult;

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
        self.fast_report(text).unwrap_or_else(SlowPath::report)
    }

    /// The report of `text` when the fast path accepts it (a valid document, its lints if
    /// any); otherwise the document, for [`SlowPath`] to report. `validate_text` is this, then
    /// [`SlowPath::report`]; a caller with something else to try before the slow path (is the
    /// document another kind of message?) tries it in between, and reads the text once.
    ///
    /// ```
    /// use agent_tool_result::Rule;
    /// use agent_tool_result::validate::Validator;
    ///
    /// let validator = Validator::shared();
    /// assert!(validator.fast_report(r#"{"ok":true}"#).is_ok_and(|r| r.is_valid()));
    /// let slow = validator.fast_report(r#"{"ok":"yes"}"#).unwrap_err();
    /// assert_eq!(slow.report().violations()[0].rule(), Rule::FieldType);
    /// ```
    ///
    /// # Errors
    ///
    /// The document, when the fast path does not accept it.
    pub fn fast_report<'a>(&'a self, text: &'a str) -> Result<Report, SlowPath<'a>> {
        match self.fast(text) {
            Some(lints) => Ok(Report {
                violations: Vec::new(),
                lints: locate_all(text, lints),
            }),
            None => Err(SlowPath {
                validator: self,
                text,
            }),
        }
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
        let (value, maybe_repeated) = match parsed {
            Ok(parsed) => parsed,
            // Not JSON (a break anywhere: a broken name or string, a cut, a number beyond a
            // double): the typed reader's account of what it met first, and the break after
            // it, however far on. Past the nesting limit, the typed reader's account stands
            // (an array is first of all not an envelope).
            Err(err) => {
                let typed = typed_error();
                let mut violations = vec![];
                if !matches!(typed.rule(), Rule::WellFormedJson | Rule::NestingLimit)
                    && let Some(not_json) = ParseError::not_json(text.as_bytes(), &err)
                        .map(ParseError::into_finding)
                        .filter(|finding| finding.rule() == Rule::WellFormedJson)
                {
                    violations.push(not_json);
                }
                violations.insert(0, typed);
                return Report {
                    violations,
                    lints: Vec::new(),
                };
            }
        };
        let mut report = self.report(&value, self.schema_violations(&value));
        // The parsed value has merged repeated keys; the text still has them. Keys may not
        // repeat in the contract's own objects; inside a payload, the last one wins.
        let closed = |pointer: &str| match self.kind {
            Kind::Envelope => closed::is_envelope_own(pointer),
            Kind::Guarantee => closed::in_guarantee(pointer).is_some(),
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
pub(super) fn skim(text: &str) -> Result<Envelope<SkippedResult>, serde_json::Error> {
    let _skimming = crate::strict::Skimming::start();
    serde_json::from_str(text)
}
