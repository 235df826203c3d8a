//! Validation of MCP `tools/call` results: the transport around an envelope, then the envelope.

use serde_json::Value;

use super::{Report, Validator, locate_all};
use crate::Rule;
use crate::mcp::{CallToolResult, Content, McpErrorKind};
use crate::rule::Finding;

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
        let result = match CallToolResult::from_json(text) {
            Ok(result) => result,
            Err(err) => {
                let rule = if err.kind() == McpErrorKind::NotJson {
                    Rule::WellFormedJson
                } else {
                    Rule::McpResultShape
                };
                return Report::new(
                    locate_all(text, vec![Finding::new(rule, "", err.to_string())]),
                    Vec::new(),
                );
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
            return Report::new(locate_all(text, violations), Vec::new());
        };
        // The carried JSON is an envelope, or (with a schemaVersion) a guarantee result.
        let inner = if TopMembers::of(carrier.text).schema_version {
            Validator::shared_guarantee().validate_text(carrier.text)
        } else {
            self.validate_text(carrier.text)
        };
        violations.extend(inner.violations.into_iter().map(|f| carrier.nest(&f)));
        let lints: Vec<Finding> = inner.lints.into_iter().map(|f| carrier.nest(&f)).collect();
        violations.extend(mirror_and_copy(text, &result, &carrier, first_text));
        Report::new(locate_all(text, violations), locate_all(text, lints))
    }

    /// Validates a document that may be an envelope, a guarantee result (an object with a
    /// `schemaVersion`) or a `tools/call` result: an object with a `content` member that is
    /// not a valid envelope is checked as a `tools/call` result.
    #[must_use]
    pub fn validate_any_text(&self, text: &str) -> Report {
        // A valid envelope has neither `schemaVersion` nor `content`: most documents are
        // answered by the envelope's fast path alone, in one read.
        if let Some(report) = self.fast_report(text) {
            return report;
        }
        let members = TopMembers::of(text);
        if members.schema_version && !members.content {
            return Validator::shared_guarantee().validate_text(text);
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

/// `isError` must be `!ok`; a text block next to `structuredContent` must hold the same JSON.
fn mirror_and_copy(
    text: &str,
    result: &CallToolResult,
    carrier: &Carrier<'_>,
    first_text: Option<(usize, &str)>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let envelope: Option<Value> = serde_json::from_str(carrier.text).ok();
    let is_error_at = if TopMembers::of(text).is_error {
        "/isError"
    } else {
        ""
    };
    // A guarantee result: isError is true exactly for a policy deny.
    if let Some(decision) = envelope
        .as_ref()
        .filter(|e| e.get("schemaVersion").is_some())
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
        .as_ref()
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
    if let (Some(structured), Some((i, block))) = (&envelope, first_text)
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

/// Which of the members that route a document the top-level object in `text` has: read in
/// one pass, keys borrowed, values skipped. A text that is not a JSON object has neither.
#[derive(Clone, Copy, Debug, Default)]
struct TopMembers {
    schema_version: bool,
    content: bool,
    is_error: bool,
}

impl TopMembers {
    fn of(text: &str) -> Self {
        // Without the names in the text, spelt out or escaped, there is nothing to look for.
        let may_have = ["schemaVersion", "content", "isError", "\\u"]
            .iter()
            .any(|needle| text.contains(needle));
        if !may_have {
            return TopMembers::default();
        }
        serde_json::from_str::<TopMembers>(text).unwrap_or_default()
    }
}

impl<'de> serde::Deserialize<'de> for TopMembers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = TopMembers;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<TopMembers, A::Error> {
                let mut members = TopMembers::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match &*key {
                        "schemaVersion" => members.schema_version = true,
                        "content" => members.content = true,
                        "isError" => members.is_error = true,
                        _ => {}
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}
