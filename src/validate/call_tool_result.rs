//! Validation of MCP `tools/call` results: the transport around an envelope, then the envelope.

use serde::de::IgnoredAny;
use serde_json::Value;

use super::{CheckedCallToolResult, Report, Validator};
use crate::document::{Document, TopMembers};
use crate::locate::locate_all;
use crate::mcp::{CallToolResult, Content, McpErrorKind};
use crate::rule::Finding;
use crate::{ParseError, Rule};

impl Validator {
    /// Validates one MCP `tools/call` result given as JSON text: its shape, that it is complete
    /// and carries an envelope (in `structuredContent`, else the first text block), the envelope
    /// itself (pointers prefixed with where it was found), `isError` as `!ok`, and a text block
    /// that holds the same JSON as `structuredContent`.
    ///
    /// ```
    /// use agent_tool_result::Rule;
    /// use agent_tool_result::validate::Validator;
    ///
    /// let text = r#"{"content":[{"type":"text","text":"{\"ok\":true}"}],"isError":true}"#;
    /// let report = Validator::shared().validate_call_tool_result_text(text);
    /// assert_eq!(report.violations()[0].rule(), Rule::McpIsErrorMirror);
    /// ```
    #[must_use]
    pub fn validate_call_tool_result_text(&self, text: &str) -> Report {
        self.check_call_tool_result_text(text).report
    }

    /// [`Validator::validate_call_tool_result_text`], with what the check read on the way:
    /// the result's `structuredContent` parsed and its `isError`, for a reader that checks
    /// them further (against the tool's advertised
    /// [`OutputSchema`](super::OutputSchema), say) without reading the text again.
    ///
    /// ```
    /// use agent_tool_result::validate::{OutputSchema, Validator};
    /// use serde_json::json;
    ///
    /// let text = r#"{"content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true}}"#;
    /// let checked = Validator::shared().check_call_tool_result_text(text);
    /// assert!(checked.report().is_valid());
    /// assert_eq!(checked.structured_content(), Some(&json!({ "ok": true })));
    /// let schema = OutputSchema::new("t", &json!({ "type": "object", "required": ["result"] })).unwrap();
    /// let findings = checked.check_output_schema(&schema, text);
    /// assert_eq!(findings[0].pointer(), "/structuredContent");
    /// ```
    #[must_use]
    pub fn check_call_tool_result_text(&self, text: &str) -> CheckedCallToolResult {
        let members = TopMembers::of(text);
        let refused = |report: Report| CheckedCallToolResult {
            report,
            structured: None,
            is_error: false,
            read_whole: false,
            members,
        };
        let result = match CallToolResult::from_json(text) {
            Ok(result) => result,
            Err(err) => {
                // The reader stops at the first value it refuses; text that is not JSON past
                // that point is refused as such all the same.
                let not_json = serde_json::from_str::<IgnoredAny>(text)
                    .err()
                    .and_then(|err| ParseError::not_json(text.as_bytes(), &err));
                let finding = if let Some(not_json) = not_json {
                    not_json.into_finding()
                } else {
                    let rule = if err.kind() == McpErrorKind::NotJson {
                        Rule::WellFormedJson
                    } else {
                        Rule::McpResultShape
                    };
                    Finding::new(rule, "", err.to_string())
                };
                return refused(Report::new(locate_all(text, vec![finding]), Vec::new()));
            }
        };
        let mut violations = Vec::new();
        if result.result_type() != "complete" {
            violations.push(Finding::new(
                Rule::McpEnvelopePresent,
                "/resultType",
                format!(
                    "the result is not complete (resultType `{}`), so it carries no envelope",
                    result.result_type()
                ),
            ));
        }
        let first_text = result
            .content()
            .iter()
            .enumerate()
            .find_map(|(i, block)| match block {
                Content::Text(text) => Some((i, text.text())),
                _ => None,
            });
        let Some(carrier) = Carrier::of(&result, first_text) else {
            violations.push(Finding::new(
                Rule::McpEnvelopePresent,
                "",
                "the result has neither structuredContent nor a text block to carry the envelope",
            ));
            return CheckedCallToolResult {
                is_error: result.is_error(),
                read_whole: true,
                ..refused(Report::new(locate_all(text, violations), Vec::new()))
            };
        };
        // The carried JSON is an envelope, a guarantee result or a guarantee tool's refusal,
        // by the one rule every reader applies.
        let document = TopMembers::of(carrier.text).document();
        let inner = match document {
            Document::Guarantee => Validator::shared_guarantee().validate_text(carrier.text),
            Document::Refusal => refusal_report(carrier.text),
            Document::Envelope => self.validate_text(carrier.text),
        };
        violations.extend(inner.violations.into_iter().map(|f| carrier.nest(&f)));
        let lints: Vec<Finding> = inner.lints.into_iter().map(|f| carrier.nest(&f)).collect();
        let parsed: Option<Value> = serde_json::from_str(carrier.text).ok();
        violations.extend(mirror_and_copy(
            members,
            &result,
            &carrier,
            parsed.as_ref(),
            first_text,
            document,
        ));
        CheckedCallToolResult {
            report: Report::new(locate_all(text, violations), locate_all(text, lints)),
            structured: parsed.filter(|_| !carrier.in_text_block),
            is_error: result.is_error(),
            read_whole: true,
            members,
        }
    }

    /// Validates a document that may be an envelope, a guarantee result (an object with a
    /// `schemaVersion`) or a `tools/call` result: an object with a `content` member that is
    /// not a valid envelope is checked as a `tools/call` result.
    #[must_use]
    pub fn validate_any_text(&self, text: &str) -> Report {
        // A valid envelope has neither `schemaVersion` nor `content`: most documents are
        // answered by the envelope's fast path alone, in one read.
        self.fast_report(text)
            .unwrap_or_else(super::SlowPath::report_any)
    }

    /// [`Validator::validate_any_text`]'s report of a document the envelope's fast path did
    /// not accept.
    pub(super) fn slow_any_report(&self, text: &str) -> Report {
        let members = TopMembers::of(text);
        if !members.content {
            match members.document() {
                Document::Guarantee => return Validator::shared_guarantee().validate_text(text),
                Document::Refusal => return refusal_report(text),
                Document::Envelope => {}
            }
        }
        let report = self.full_report(text);
        if report.is_valid() || !members.content {
            report
        } else {
            self.validate_call_tool_result_text(text)
        }
    }
}

/// Where the envelope was found in a result.
struct Carrier<'a> {
    text: &'a str,
    pointer: String,
    in_text_block: bool,
}

impl<'a> Carrier<'a> {
    fn of(result: &'a CallToolResult, first_text: Option<(usize, &'a str)>) -> Option<Self> {
        match (result.structured_content(), first_text) {
            (Some(structured), _) => Some(Carrier {
                text: structured,
                pointer: "/structuredContent".to_owned(),
                in_text_block: false,
            }),
            (None, Some((i, text))) => Some(Carrier {
                text,
                pointer: format!("/content/{i}/text"),
                in_text_block: true,
            }),
            (None, None) => None,
        }
    }

    /// A finding about the envelope, placed in the result: under `structuredContent`, or at the
    /// text block with the inner pointer named in the message.
    fn nest(&self, finding: &Finding) -> Finding {
        if self.in_text_block {
            let message = if finding.pointer().is_empty() {
                finding.message().to_owned()
            } else {
                format!(
                    "{} (at {} inside the text block)",
                    finding.message(),
                    finding.pointer()
                )
            };
            Finding::new(finding.rule(), self.pointer.clone(), message)
        } else {
            let pointer = format!("{}{}", self.pointer, finding.pointer());
            Finding::new(finding.rule(), pointer, finding.message())
        }
    }
}

/// A refusal's problem: `type`, `title` and `status` name a refusal.
fn refusal_report(text: &str) -> Report {
    let Err(err) = crate::guarantee::Refusal::from_json(text) else {
        return Report::new(Vec::new(), Vec::new());
    };
    // Not JSON as every reader reads it (a number beyond a double's range, say): the document
    // rule's finding, as the envelope's and the guarantee result's readers give it.
    if let Err(err) = serde_json::from_str::<Value>(text)
        && let Some(not_json) = ParseError::not_json(text.as_bytes(), &err)
    {
        return Report::new(locate_all(text, vec![not_json.into_finding()]), Vec::new());
    }
    Report::new(
        vec![Finding::new(Rule::RefusalShape, "", err.to_string())],
        Vec::new(),
    )
}

/// `isError` mirrors the carried document (`!ok` for an envelope, a deny for a guarantee
/// result, always for a refusal); a text block next to `structuredContent` must hold the same
/// JSON.
fn mirror_and_copy(
    members: TopMembers,
    result: &CallToolResult,
    carrier: &Carrier<'_>,
    envelope: Option<&Value>,
    first_text: Option<(usize, &str)>,
    document: Document,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let is_error_at = if members.is_error { "/isError" } else { "" };
    if document == Document::Refusal && !result.is_error() {
        findings.push(Finding::new(
            Rule::McpIsErrorMirror,
            is_error_at,
            "isError is false but the result is a refusal: isError is true for every refusal",
        ));
    }
    // A guarantee result: isError is true exactly for a policy deny.
    if let Some(decision) = envelope
        .filter(|_| document == Document::Guarantee)
        .and_then(|e| e.pointer("/policy/decision"))
        .and_then(Value::as_str)
        && result.is_error() != (decision == "deny")
    {
        findings.push(Finding::new(
            Rule::McpIsErrorMirror,
            is_error_at,
            format!(
                "isError is {} but the decision is {decision}: isError is true exactly for a deny",
                result.is_error()
            ),
        ));
    }
    if let Some(ok) = envelope
        .filter(|_| document == Document::Envelope)
        .and_then(|e| e.get("ok"))
        .and_then(Value::as_bool)
        && result.is_error() == ok
    {
        findings.push(Finding::new(
            Rule::McpIsErrorMirror,
            is_error_at,
            format!(
                "isError is {} but the envelope's ok is {ok}: isError must be !ok",
                result.is_error()
            ),
        ));
    }
    if let (Some(structured), Some((i, block))) = (envelope, first_text)
        && !carrier.in_text_block
        && serde_json::from_str::<Value>(block).ok().as_ref() != Some(structured)
    {
        findings.push(Finding::new(
            Rule::McpTextMatchesStructured,
            format!("/content/{i}/text"),
            "the text block does not hold the same JSON as structuredContent",
        ));
    }
    findings
}
